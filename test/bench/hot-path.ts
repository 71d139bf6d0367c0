/**
 * Per-request CPU of the list hot path, in-process on the bench replica: the app is
 * called through `app.request` (no HTTP), `runs` requests after a warm-up, and the process CPU
 * time per request is printed for the default page, limit 100 and the 25-mile circle.
 *
 *   node_modules/.bin/bun test/bench/hot-path.ts [--runs N]
 *
 * The accounts are written to the bench replica's ledger; the full bench starts from an empty one.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { createApp } from "../../server/app.ts";
import { createClock } from "../../server/clock.ts";
import { resolveConfig } from "../../server/config.ts";
import { createContext } from "../../server/context.ts";
import { issueKey } from "../../server/keys.ts";

const { values } = parseArgs({ options: { runs: { type: "string", default: "3000" } } });
const runs = Number(values.runs);
const dbPath = new URL("../../.bench/replica/marquee.db", import.meta.url).pathname;
const clock = createClock();
const ctx = await createContext(resolveConfig({ dbPath, baseUrl: "http://bench.local" }, {}), clock);
const builtPath = join(dirname(dbPath), "built.json");
const anchor = existsSync(builtPath)
  ? (JSON.parse(readFileSync(builtPath, "utf8")) as { anchor?: string }).anchor
  : undefined;
if (anchor) clock.set(Date.parse(anchor) + 12 * 3_600_000);

const account = await ctx.ledger.createAccount(
  { plan: "enterprise", rateSustained: 1e9, rateBurst: 1e9 } as never,
  clock.now(),
);
const { key } = await issueKey(ctx.ledger, account.id, "live", clock.now());
const app = createApp(ctx);
const headers = { authorization: `Bearer ${key}` };

async function loop(qs: string, n: number): Promise<number> {
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    clock.set(clock.now() + 1);
    const res = await app.request(`http://bench.local/v1/events?${qs}`, { headers });
    if (res.status !== 200) throw new Error(`${qs}: ${res.status} ${await res.text()}`);
    await res.text();
  }
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / n;
}

for (const qs of ["", "limit=100", "lat=40.758&lng=-73.9855&radius_miles=25"]) {
  await loop(qs, 200);
  const us = await loop(qs, qs === "limit=100" ? Math.ceil(runs / 3) : runs);
  console.log(`${(qs || "default").padEnd(40)} ${us.toFixed(0).padStart(5)} µs CPU / request`);
}
