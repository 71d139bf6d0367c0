#!/usr/bin/env bun
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { AccountFields } from "../../db/accounts.ts";
/**
 * What the access pipeline costs per list request: `authorizeList` + `open` +
 * `settle` in-process on a real ledger file, against a no-op with the same request setup.
 *
 *   bun test/bench/access.ts [--requests 5000]
 *
 * Cases: an unmetered plan (Legacy: bucket write, usage record), a row-metered plan (bucket,
 * reservation, settle), a trial (the same on the trial allowance, empty pages so it never ends),
 * and a malformed key (refused before any lookup). Negotiated rates keep buckets from refusing.
 */
import type { Access } from "../../server/access.ts";
import { resolveConfig } from "../../server/config.ts";
import { type AppContext, createContext } from "../../server/context.ts";
import { isApiError } from "../../server/errors.ts";
import { type RequestScope, WebScope } from "../../server/handle.ts";
import { issueKey } from "../../server/keys.ts";

const { values } = parseArgs({ options: { requests: { type: "string", default: "5000" } } });
const REQUESTS = Number(values.requests);
const URL_ = "http://bench.local/v1/events?limit=25";

function scopeFor(key: string): RequestScope {
  const req = new Request(URL_, { headers: { authorization: `Bearer ${key}` } });
  return new WebScope(req);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

interface Result {
  name: string;
  p50: number;
  p99: number;
  mean: number;
}

function measure(name: string, run: (scope: RequestScope) => void, key: string): Result {
  for (let i = 0; i < Math.min(500, REQUESTS); i++) run(scopeFor(key)); // warm caches and the JIT
  const times: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const scope = scopeFor(key);
    const t0 = performance.now();
    run(scope);
    times.push((performance.now() - t0) * 1000);
  }
  times.sort((a, b) => a - b);
  const mean = times.reduce((s, t) => s + t, 0) / times.length;
  return { name, p50: percentile(times, 50), p99: percentile(times, 99), mean };
}

function pipeline(ctx: AppContext, delivered: number) {
  return (scope: RequestScope) => {
    const access = (ctx.access as Access).authorizeList(scope, { geo: false });
    const n = access.open(25);
    access.settle(Math.min(n, delivered));
  };
}

const refused = (ctx: AppContext) => (scope: RequestScope) => {
  try {
    (ctx.access as Access).authorizeList(scope, { geo: false });
  } catch (err) {
    if (!isApiError(err)) throw err;
  }
};

const dir = mkdtempSync(join(tmpdir(), "marquee-bench-access-"));
const ctx = await createContext(resolveConfig({ dbPath: join(dir, "marquee.db") }, {}));
try {
  const unlimited = { rateSustained: 1e9, rateBurst: 1e9 };
  const keyOf = async (fields: Partial<AccountFields>) => {
    const account = await ctx.ledger.createAccount({ email: "bench@example.com", ...unlimited, ...fields }, Date.now());
    return (await issueKey(ctx.ledger, account.id, "live", Date.now())).key;
  };
  const legacy = await keyOf({ plan: "legacy" });
  const metered = await keyOf({ plan: "enterprise", rowBudget: 1e12 });
  const trial = await keyOf({ plan: "none" });

  const results = [
    measure("no-op (request setup only)", () => {}, legacy),
    measure("malformed key (401, no lookup)", refused(ctx), "mq_live_not-a-key"),
    measure("unmetered plan, 25 rows", pipeline(ctx, 25), legacy),
    measure("row-metered plan, 25 rows", pipeline(ctx, 25), metered),
    measure("trial, empty page", pipeline(ctx, 0), trial),
  ];
  const runtime = typeof Bun !== "undefined" ? `Bun ${Bun.version}` : `Node ${process.version}`;
  console.log(
    `access pipeline per request, ${REQUESTS} requests each, ${runtime}, ledger in ${tmpdir()} ` +
      `(per-request counters commit with synchronous=NORMAL, trial writes with FULL)\n`,
  );
  console.log(`| case | p50 µs | p99 µs | mean µs |\n|---|---:|---:|---:|`);
  for (const r of results)
    console.log(`| ${r.name} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.mean.toFixed(1)} |`);
} finally {
  ctx.close();
  rmSync(dir, { recursive: true, force: true });
}
