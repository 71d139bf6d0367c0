#!/usr/bin/env bun
/**
 * Where a new list request's microseconds go, stage by stage: requests that no cache has seen
 * (test/bench/lib/unique.ts) run through the list pipeline's stages in-process
 * (server/list/service.ts), each stage timed on its own, one request at a time. The `walk` class
 * pages through new state queries 40 pages each, every page following the last one's cursor.
 *
 *   bun test/bench/list-stages.ts [--requests N] [--classes state,walk,…] [--db PATH] [--json] [--medians]
 *
 * Needs the bench replica (`npm run bench` builds it into .bench/). Prints one row per class of
 * request: the mean microseconds of each stage (with --medians, each stage's median) and of the
 * whole request, and the median.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { readConsistently } from "../../db/events-query.ts";
import { openReplica } from "../../db/replica.ts";
import type { ImmediateListAccess } from "../../server/access.ts";
import { resolveConfig } from "../../server/config.ts";
import { createContext } from "../../server/context.ts";
import { type RequestScope, WebScope } from "../../server/handle.ts";
import { issueKey } from "../../server/keys.ts";
import { pageCacheKey } from "../../server/list/page-cache.ts";
import { windowOf } from "../../server/list/parse.ts";
import { withCursor } from "../../server/list/response.ts";
import { ListRequest } from "../../server/list/service.ts";
import { isGeoRequest } from "../../server/params-geo.ts";
import { UNLIMITED_RATE } from "./lib/config.ts";
import { REPLICA_DB, RUN_DIR } from "./lib/fixture.ts";
import { type UniqueClass, writeUniqueLists } from "./lib/unique.ts";
import { WALK_PAGES } from "./lib/unique-measure.ts";

export const STAGES = ["authorize", "parse", "window", "open", "geo", "select", "hydrate", "settle"] as const;
export type Stage = (typeof STAGES)[number];

export interface StageRow {
  cls: string;
  requests: number;
  meanUs: Record<Stage, number>;
  /** The median of each stage on its own (less moved by a busy host than the mean). */
  medianUs: Record<Stage, number>;
  totalMeanUs: number;
  totalMedianUs: number;
}

const CLASSES: readonly UniqueClass[] = ["state", "state-city", "source", "circle", "polygon"];

/** Every class the profile times: the unique lists' and the cursor walks. */
const ALL_CLASSES: readonly string[] = [...CLASSES, "walk"];

/** Runs `requests` unique requests of each class through the stages; the replica at `dbPath` is only read. */
export async function measureStages(
  dbPath: string,
  requests: number,
  only: readonly string[] = ALL_CLASSES,
): Promise<StageRow[]> {
  mkdirSync(RUN_DIR, { recursive: true });
  const replica = await openReplica(dbPath, { readonly: true });
  const lists = writeUniqueLists(replica, {
    perClass: requests + 200,
    walks: Math.ceil((requests + 200) / WALK_PAGES),
    zipfRequests: 10,
    zipfQueries: 10,
    seed: 7,
    nowMs: Date.now(),
  });
  replica.close();
  // The bench's ledger beside the replica (each bench run starts it afresh): one more account.
  const ctx = await createContext(resolveConfig({ dbPath, baseUrl: "http://bench.local" }, {}));
  try {
    const account = await ctx.ledger.createAccount(
      {
        email: "stages@bench.example",
        plan: "enterprise",
        rowBudget: null,
        rateSustained: UNLIMITED_RATE,
        rateBurst: UNLIMITED_RATE,
      },
      Date.now(),
    );
    const key = (await issueKey(ctx.ledger, account.id, "live", Date.now())).key;
    const list = ctx.list;
    const rows: StageRow[] = [];
    // One request through the stages: the times between them, and the page's next cursor.
    const run = (path: string): { t: number[]; nextCursor: string | null } => {
      const url = `http://bench.local${path}`;
      const req = new Request(url, { headers: { authorization: `Bearer ${key}` } });
      const scope: RequestScope = new WebScope(req);
      const t: number[] = [performance.now()];
      const request = new ListRequest(scope.search, undefined, scope.url.searchParams);
      // The SQLite ledger's access stages answer at once (server/access.ts).
      const access = ctx.access.authorizeList(scope, {
        geo: isGeoRequest(scope.url.searchParams),
      }) as ImmediateListAccess;
      t.push(performance.now());
      const parsed = list.parse(request, access);
      t.push(performance.now());
      const window = windowOf(parsed, access.horizonMs, ctx.clock.now());
      t.push(performance.now());
      const limit = access.open(parsed.q.limit);
      t.push(performance.now());
      // Geo candidates on their own (select then finds them kept).
      if (parsed.q.geo) list.caches.geo.find(parsed.q.geo, parsed.q.includeCentroids);
      t.push(performance.now());
      // The same steps as ListService.page on a miss, with a clock between select and hydrate.
      const pageKey = pageCacheKey(request.search, limit, window);
      let selectedAt = 0;
      const out = readConsistently(ctx.replica, () => {
        const selected = list.select(pageKey, parsed, window, limit);
        selectedAt = performance.now();
        const body = list.hydrate(pageKey, selected, window);
        return withCursor(ctx.secret, selected.selection, body, parsed, window);
      });
      t.push(selectedAt);
      t.push(performance.now());
      access.settle(out.page.count);
      list.respond(scope, out);
      t.push(performance.now());
      return { t, nextCursor: out.page.nextCursor };
    };
    // Every class's list of new paths; a walk's pages follow each page's cursor, as clients do.
    const classes: Array<[string, () => Iterable<string>]> = CLASSES.map((cls) => [
      cls,
      () => readFileSync(lists.paths[cls], "utf8").trim().split("\n"),
    ]);
    const walks = readFileSync(lists.walks, "utf8")
      .trim()
      .split("\n")
      .map((line) => line.split("\t")[1]);
    let cursor: string | null = null;
    classes.push([
      "walk",
      function* () {
        for (const path of walks) {
          yield path;
          for (let page = 2; page <= WALK_PAGES && cursor !== null; page++)
            yield `${path}&cursor=${encodeURIComponent(cursor)}`;
        }
      },
    ]);
    for (const [cls, paths] of classes.filter(([cls]) => only.includes(cls))) {
      // The first 200 warm the code paths (not the caches: every path is new).
      const sums = Object.fromEntries(STAGES.map((s) => [s, 0])) as Record<Stage, number>;
      const each = Object.fromEntries(STAGES.map((s) => [s, [] as number[]])) as Record<Stage, number[]>;
      const totals: number[] = [];
      let i = 0;
      for (const path of paths()) {
        if (i - 200 >= requests) break;
        const { t, nextCursor } = run(path);
        cursor = nextCursor;
        if (i++ < 200) continue;
        for (const [k, s] of STAGES.entries()) {
          sums[s] += (t[k + 1] - t[k]) * 1000;
          each[s].push((t[k + 1] - t[k]) * 1000);
        }
        totals.push((t[t.length - 1] - t[0]) * 1000);
      }
      const n = totals.length;
      totals.sort((a, b) => a - b);
      rows.push({
        cls,
        requests: n,
        meanUs: Object.fromEntries(STAGES.map((s) => [s, sums[s] / n])) as Record<Stage, number>,
        medianUs: Object.fromEntries(
          STAGES.map((s) => [s, each[s].sort((a, b) => a - b)[Math.floor(n / 2)]]),
        ) as Record<Stage, number>,
        totalMeanUs: totals.reduce((a, b) => a + b, 0) / n,
        totalMedianUs: totals[Math.floor(n / 2)],
      });
    }
    return rows;
  } finally {
    ctx.close();
  }
}

/** `--medians`: each stage's median instead of its mean. */
export function renderStages(rows: StageRow[], medians = false): string {
  const head = `| class (new requests) | ${STAGES.join(" | ")} | total mean | total median |`;
  const line = `|---|${STAGES.map(() => "--:").join("|")}|--:|--:|`;
  const body = rows.map(
    (r) =>
      `| ${r.cls} (${r.requests}) | ${STAGES.map((s) => (medians ? r.medianUs : r.meanUs)[s].toFixed(0)).join(" | ")} | ${r.totalMeanUs.toFixed(0)} | ${r.totalMedianUs.toFixed(0)} |`,
  );
  return [head, line, ...body].join("\n");
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      requests: { type: "string" },
      classes: { type: "string" },
      db: { type: "string" },
      json: { type: "boolean" },
      medians: { type: "boolean" },
    },
  });
  const classes = values.classes?.split(",");
  const unknown = classes?.filter((c) => !ALL_CLASSES.includes(c)) ?? [];
  if (unknown.length > 0) {
    console.error(`unknown class ${unknown.join(", ")}: the classes are ${ALL_CLASSES.join(", ")}`);
    process.exit(2);
  }
  const rows = await measureStages(values.db ?? REPLICA_DB, Number(values.requests ?? 2000), classes);
  console.log(values.json ? JSON.stringify(rows) : renderStages(rows, values.medians));
}
