/**
 * List-endpoint benchmark: `GET /v1/events` page latency per filter combination on a
 * large replica, in-process, timed here and never in unit tests.
 *
 *   node_modules/.bin/bun test/bench/events.ts [--db PATH] [--runs N] [--now ISO]
 *
 * Without --db it uses .bench/replica/marquee.db (see test/bench/geo.ts for how it is built).
 * For each query shape it times (1) page selection + hydration alone (db/events-query.ts,
 * test/hydrate-reference.ts, one plain read) and (2) the whole request through the app with a key whose rate limits are
 * lifted, for first pages and for a page deep into the traversal (cursor after 40 pages), and
 * prints the median and p99 in milliseconds together with the plan each shape chose.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { type PageFilter, readConsistently, selectPage } from "../../db/events-query.ts";
import { readReplicaStats } from "../../db/replica.ts";
import { readSnapshotStats } from "../../db/snapshot-stats.ts";
import { createApp } from "../../server/app.ts";
import { createClock } from "../../server/clock.ts";
import { resolveConfig } from "../../server/config.ts";
import { createContext } from "../../server/context.ts";
import { issueKey } from "../../server/keys.ts";
import { hydratePage } from "../hydrate-reference.ts";

const { values } = parseArgs({
  options: { db: { type: "string" }, runs: { type: "string", default: "200" }, now: { type: "string" } },
});
const runs = Number(values.runs);
const dbPath = values.db ?? new URL("../../.bench/replica/marquee.db", import.meta.url).pathname;

const clock = createClock();
const ctx = await createContext(resolveConfig({ dbPath, baseUrl: "http://bench.local" }, {}), clock);
// "Now" = --now, else the demo data's anchor day (built.json beside the replica), else its first day.
const builtPath = join(dirname(dbPath), "built.json");
const anchorDay =
  values.now ??
  (existsSync(builtPath) ? (JSON.parse(readFileSync(builtPath, "utf8")) as { anchor?: string }).anchor : undefined);
const firstStart = ctx.replica
  .prepare<{ t: number }>("SELECT min(start_ms) AS t FROM snapshot WHERE long = 0")
  .get()!.t;
clock.set(anchorDay ? Date.parse(anchorDay) : firstStart + 86_400_000);
const stats = readReplicaStats(ctx.replica);
console.log(
  `replica ${dbPath}: ${stats.events} events, ${stats.snapshotEvents} in the snapshot; now = ${new Date(clock.now()).toISOString()}`,
);

const account = await ctx.ledger.createAccount(
  { plan: "enterprise", rateSustained: 1e9, rateBurst: 1e9 } as never,
  clock.now(),
);
const { key } = await issueKey(ctx.ledger, account.id, "live", clock.now());
const app = createApp(ctx);

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const fmt = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(2).padStart(6)}  p99 ${pct(xs, 99).toFixed(2).padStart(6)}`;

async function get(qs: string): Promise<{ page: { nextCursor: string | null } }> {
  const res = await app.request(`http://bench.local/v1/events?${qs}`, { headers: { authorization: `Bearer ${key}` } });
  if (res.status !== 200) throw new Error(`${qs}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { page: { nextCursor: string | null } };
}

async function deepCursor(qs: string, pages: number): Promise<string | null> {
  let cursor: string | null = null;
  for (let i = 0; i < pages; i++) {
    const p = await get(`${qs}&limit=25${cursor ? `&cursor=${cursor}` : ""}`);
    cursor = p.page.nextCursor;
    if (!cursor) return null;
  }
  return cursor;
}

function directFilter(qs: string): PageFilter {
  const q = new URLSearchParams(qs);
  const now = q.has("starts_after") ? Date.parse(q.get("starts_after")!) : clock.now();
  return {
    afterMs: now,
    beforeMs: q.has("starts_before") ? Date.parse(q.get("starts_before")!) : now + 90 * 86_400_000,
    state: q.get("state")?.toUpperCase() ?? null,
    city: q.get("city"),
    sources: q.get("source")?.split(",") ?? null,
    venueIds: null,
    excludeSoldOut: q.get("exclude_sold_out") === "true",
    excludeAggregators: q.get("exclude_aggregators") === "true",
  };
}

const SHAPES = [
  "",
  "exclude_sold_out=true&exclude_aggregators=true",
  "state=NY",
  "state=WY",
  "city=Brooklyn",
  "state=CA&city=Los%20Angeles",
  "city=Nowhere",
  "source=ticketmaster",
  "source=scraper:",
  "source=eventbrite,seatgeek",
  "source=nosuchvendor",
  "state=CA&source=ticketmaster&exclude_sold_out=true",
  // Adversarial: a residual filter that is rare inside its index's range, a broad wildcard,
  // and a window deep in the sparse future.
  "state=WY&source=ticketmaster&exclude_sold_out=true",
  "source=t_",
  "starts_after=2027-10-01T00:00:00Z&starts_before=2028-01-01T00:00:00Z",
  "lat=40.758&lng=-73.9855&radius_miles=25",
  "lat=40.758&lng=-73.9855&radius_miles=25&state=NJ",
  "lat=44.0&lng=-107.0&radius_miles=25",
];

console.log(
  `\n${"shape".padEnd(56)} ${"plan".padEnd(11)} ${"select+hydrate".padEnd(26)} ${"first page (HTTP)".padEnd(26)} deep page (HTTP)`,
);
for (const qs of SHAPES) {
  const geo = qs.includes("lat=");
  const direct: number[] = [];
  let plan: string | null = "geo";
  if (!geo) {
    const f = directFilter(qs);
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      readConsistently(ctx.replica, () => {
        const s = selectPage(
          ctx.replica,
          { stats: readSnapshotStats(ctx.replica), estimates: ctx.list.caches.estimates },
          f,
          null,
          25,
        );
        plan = s.plan;
        hydratePage(ctx.replica, s.keys, f, { baseUrl: "http://bench.local", geo: null });
      });
      direct.push(performance.now() - t);
    }
  }
  const first: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await get(`${qs}&limit=25`);
    first.push(performance.now() - t);
  }
  const cursor = await deepCursor(qs, 40);
  const deep: number[] = [];
  if (cursor) {
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      await get(`${qs}&limit=25&cursor=${cursor}`);
      deep.push(performance.now() - t);
    }
  }
  console.log(
    `${(qs || "(no filters)").padEnd(56)} ${String(plan).padEnd(11)} ${(direct.length ? fmt(direct) : "-").padEnd(26)} ${fmt(first).padEnd(26)} ${deep.length ? fmt(deep) : "(fewer than 40 pages)"}`,
  );
}
ctx.close();
