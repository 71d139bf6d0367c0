// scratch: not committed
import { spawnSync } from "node:child_process";
import { openReplica } from "../../db/replica.ts";
import { createKeys, openBenchLedger, REPLICA_DB, resetLedger } from "./lib/fixture.ts";
import { freePort } from "./lib/proc.ts";
import * as targets from "./lib/targets.ts";
import { writeUniqueLists } from "./lib/unique.ts";
import { join } from "node:path";

const classes = (process.argv[2] ?? "state,state-city,source,circle,polygon,walk,zipf").split(",");
const secs = Number(process.argv[3] ?? 5);
resetLedger();
const ledger = await openBenchLedger();
const [key] = createKeys(ledger, "bench", 1, "main").keys;
const replica = await openReplica(REPLICA_DB, { readonly: true });
const lists = writeUniqueLists(replica, { perClass: 60000, walks: 20000, zipfRequests: 100000, zipfQueries: 20000, seed: 1, nowMs: Date.now() });
require("node:fs").writeFileSync(".bench/run/key", key);
if (classes[0] === "prepare") process.exit(0);
console.log("zipf repeat share", lists.zipf.repeatShare.toFixed(3));
const port = await freePort();
const server = process.env.PEER ? await targets.startMarqueeBun(port) : await targets.startMarqueeBun(port);
const dir = join(import.meta.dirname);
for (const cls of classes) {
  const args = cls === "walk"
    ? ["-s", join(dir, "walk-cursors.lua"), server.baseUrl + "/", "--", lists.walks, "2", key, "40"]
    : ["-s", join(dir, "rotate-urls.lua"), server.baseUrl + "/", "--", cls === "zipf" ? lists.zipf.file : lists.paths[cls as "state"], "2", key];
  const r = spawnSync("wrk", ["-t2", "-c32", `-d${secs}s`, "--latency", ...args], { encoding: "utf8" });
  const j = JSON.parse(r.stdout.split("\n").find((l) => l.startsWith("BENCH_JSON "))!.slice(11));
  const extra = r.stdout.split("\n").filter((l) => /BENCH_(WRAPPED|CONTINUED)/.test(l)).join(" ");
  console.log(cls.padEnd(11), (j.requests / (j.durationUs / 1e6)).toFixed(0).padStart(6), "req/s p50", (j.p50Us / 1000).toFixed(2), "p99", (j.p99Us / 1000).toFixed(2), "non2xx", j.errors.status, extra);
}
await server.stop();
process.exit(0);
