#!/usr/bin/env bun
/**
 * `npm run bench`: Marquee against its ceiling and its peers, in one run on this machine.
 *
 *   bun test/bench/run.ts [--rebuild] [--only bun,ceiling,redis,node,prism,observability] [--skip-sync] [--skip-cold-start]
 *   bun test/bench/run.ts --only-unique
 *
 * Order: build the cached 1M-event replica if needed → Marquee on Bun (resolve inputs, capture
 * one real response per scenario) → Marquee on Bun, the ceiling replaying the captured bytes, and
 * Marquee on a Redis ledger (one process, and `--workers 2`; `redis` in --only, a redis-server of
 * the bench's own with deploy/redis.conf), interleaved slice by slice → Marquee on Node
 * → Prism on Marquee's OpenAPI document → the default page with and without the request log and
 * `/metrics` (test/bench/observability.ts) → cold starts of dist/marquee and start-up against the
 * runtime's own (test/bench/startup.ts, also `npm run bench:startup` alone) → sync throughput → the
 * default page under load while a 50,000-change sync runs. Prints the tables; a full run (no
 * --only or --skip-* flag) also writes them into test/bench/RESULTS.md. `--only-unique` measures
 * only the unique-traffic section (Marquee on Bun, the ceiling and the peer) and its stage profile:
 * the scenarios are still captured, for the ceiling's bytes, but not loaded.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { readSetting } from "../../db/ledger.ts";
import { openReplica } from "../../db/replica.ts";
import { openRedisLedger, type RedisLedger } from "../../server/ledger/redis.ts";
import { DATA, UNIQUE } from "./lib/config.ts";
import { groupCpuS, processCpuS } from "./lib/cpu.ts";
import {
  type Accounts,
  cleanRunDir,
  createKeys,
  createLedgerKeys,
  ensureReplica,
  ledgerAccounts,
  openBenchLedger,
  REPLICA_DB,
  RUN_DIR,
  resetLedger,
  sqliteAccounts,
} from "./lib/fixture.ts";
import { listPathLines } from "./lib/list-path.ts";
import { describeMachine } from "./lib/machine.ts";
import { measureSides, type Side } from "./lib/measure.ts";
import { captureScenarios, request, resolveInputs } from "./lib/prepare.ts";
import { freePort, readMemory, type Server, stopAllServers, watchMemory } from "./lib/proc.ts";
import { type BenchRedis, redisVersion, startBenchRedis } from "./lib/redis.ts";
import { type RunReport, renderMarkdown, writeResults } from "./lib/report.ts";
import { buildScenarios, type Scenario } from "./lib/scenarios.ts";
import { measureSyncThroughput, measureSyncUnderLoad, writeChangeStream } from "./lib/sync-load.ts";
import * as targets from "./lib/targets.ts";
import { writeUniqueLists } from "./lib/unique.ts";
import { measureUnique, uniqueScenarios } from "./lib/unique-measure.ts";
import { checkWrk, measure } from "./lib/wrk.ts";
import { measureStages } from "./list-stages.ts";
import { measureObservability, observabilityMarkdown } from "./observability.ts";
import { measurePeer, measurePostgresCopy, measureStreaming, preparePostgres } from "./postgres.ts";
import { measureStartTimes } from "./start-times.ts";
import { measureStartup } from "./startup.ts";

const { values: flags } = parseArgs({
  options: {
    rebuild: { type: "boolean" },
    only: { type: "string" },
    "skip-sync": { type: "boolean" },
    "skip-cold-start": { type: "boolean" },
    "skip-unique": { type: "boolean" },
    "skip-postgres": { type: "boolean" },
    "only-unique": { type: "boolean" },
  },
});
const onlyUnique = Boolean(flags["only-unique"]);
if (onlyUnique) {
  flags.only = "bun,ceiling";
  for (const skip of ["skip-sync", "skip-cold-start", "skip-postgres"] as const) flags[skip] = true;
}
const only = new Set((flags.only ?? "bun,ceiling,redis,node,prism,observability").split(","));
const started = performance.now();
const log = (s: string) => console.error(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${s}`);

async function main(): Promise<number> {
  const missing = checkWrk();
  if (missing) {
    console.error(missing);
    return 1;
  }
  const machine = describeMachine();
  const replicaInfo = await ensureReplica(Boolean(flags.rebuild), log, !flags["skip-sync"]);
  log(`replica: ${replicaInfo.events.toLocaleString("en-US")} events${replicaInfo.reused ? " (cached)" : ""}`);
  resetLedger();
  cleanRunDir();
  mkdirSync(RUN_DIR, { recursive: true });
  const ledger = await openBenchLedger();
  const replica = await openReplica(REPLICA_DB, { readonly: true });
  const notes: string[] = [];
  const [benchKey] = createKeys(ledger, "bench", 1, "main").keys;
  const [trialCaptureKey] = createKeys(ledger, "trial", 1, "capture").keys;
  const [handoffCaptureKey] = createKeys(ledger, "handoff", 1, "capture").keys;
  // The Redis ledger: its own redis-server, and the same accounts as in the SQLite ledger.
  let redis: { server: BenchRedis; ledger: RedisLedger; accounts: Accounts; keys: Record<string, string> } | null =
    null;
  if (only.has("redis")) {
    const server = await startBenchRedis();
    const redisLedger = await openRedisLedger(server.url);
    const key = async (kind: "bench" | "trial" | "handoff", label: string) =>
      (await createLedgerKeys(redisLedger, kind, 1, label)).keys[0];
    const keys = {
      bench: await key("bench", "redis-main"),
      trial: await key("trial", "redis-capture"),
      handoff: await key("handoff", "redis-capture"),
    };
    redis = { server, ledger: redisLedger, accounts: ledgerAccounts(redisLedger, keys.bench), keys };
    log(`Redis ledger: ${redisVersion()} with deploy/redis.conf, pid ${server.pid}`);
  }
  const report: RunReport = {
    machine,
    ...(redis ? { redis: { version: redisVersion() } } : {}),
    replica: replicaInfo,
    scenarios: [],
    cells: {},
    notes,
    rss: {},
    coldStartMs: [],
    listPath: listPathLines(),
    elapsedS: 0,
  };
  const record = (target: targets.TargetId, cells: Record<string, RunReport["cells"][string][targets.TargetId]>) => {
    for (const [id, cell] of Object.entries(cells)) {
      report.cells[id] ??= {};
      report.cells[id][target] = cell;
    }
  };

  // Only what this run measures: the bundle for Marquee on Node, the binary for cold starts.
  if (only.has("node")) {
    log("building the Node bundle …");
    await targets.buildNodeBundle();
  }
  if (!flags["skip-cold-start"]) {
    log("building dist/marquee …");
    await targets.buildBinary();
  }

  // Marquee on Bun first: it resolves inputs and provides the bytes the ceiling replays.
  let server: Server = await targets.startMarqueeBun(await freePort());
  log(
    `Marquee on Bun up in ${server.readyMs.toFixed(0)} ms; resolving scenario inputs (walking ${DATA.deepPages} pages) …`,
  );
  const inputs = await resolveInputs(server.baseUrl, replica, benchKey, handoffCaptureKey, notes);
  const all = buildScenarios(inputs);
  report.scenarios = all;
  const keyFor = (s: { auth: string }) =>
    s.auth === "trial" ? trialCaptureKey : s.auth === "handoff" ? handoffCaptureKey : benchKey;
  const { served, failed, bodiesFile } = await captureScenarios(server.baseUrl, all, keyFor, notes);
  // Unique traffic: the lists, and one real page of it for the ceiling to replay.
  const lists = flags["skip-unique"] ? null : writeUniqueLists(replica, { ...UNIQUE, nowMs: Date.now() });
  if (lists) {
    const sample = await request(server.baseUrl, "GET", lists.sample.state, benchKey);
    const bodies = JSON.parse(readFileSync(bodiesFile, "utf8")) as unknown[];
    writeFileSync(bodiesFile, JSON.stringify([...bodies, sample]));
    log(
      `unique traffic: ${UNIQUE.perClass.toLocaleString("en-US")} new paths per class, ${UNIQUE.walks.toLocaleString("en-US")} walks; the Zipf mix repeats ${(100 * lists.zipf.repeatShare).toFixed(0)} % of its requests`,
    );
  }
  for (const [id, reason] of failed) report.cells[id] = { bun: { skipped: reason } };
  const openapi = await fetch(`${server.baseUrl}/v1/openapi.json`);
  const openapiFile = join(RUN_DIR, "openapi.json");
  if (openapi.ok) writeFileSync(openapiFile, await openapi.text());
  else notes.push(`GET /v1/openapi.json answered ${openapi.status}: Prism has no document to serve.`);

  const ctx = { accounts: sqliteAccounts(ledger, benchKey), log, notes };
  const recordAll = (cells: Map<targets.TargetId, Record<string, RunReport["cells"][string][targets.TargetId]>>) => {
    for (const [target, c] of cells) record(target, c);
  };
  const run = async (target: targets.TargetId, s: Server) => {
    log(`${targets.TARGET_TITLES[target]}:`);
    recordAll(await measureSides([{ target, server: s, progress: { warmed: false, listRps: 0 } }], served, ctx));
    if (target === "bun" || target === "node") {
      const rss = readMemory(s.child.pid!);
      if (rss) report.rss[target] = rss;
    }
    await s.stop();
  };
  {
    // Side by side, slice by slice (measureSides): load from other work on a shared machine
    // then falls on every side of each ratio instead of on one server's whole pass. Each
    // side's CPU time is read around its slices: the server's process group, and redis-server.
    const progress = () => ({ warmed: false, listRps: 0 });
    const cpuOf = (s: Server, redisPid?: number) => () => ({
      marqueeS: groupCpuS(s.child.pid!),
      ...(redisPid !== undefined ? { redisS: processCpuS(redisPid) } : {}),
    });
    const sides: Side[] = [];
    if (only.has("bun")) sides.push({ target: "bun", server, progress: progress(), cpu: cpuOf(server) });
    else await server.stop();
    if (only.has("ceiling")) {
      const ceiling = await targets.startCeiling(await freePort(), bodiesFile);
      sides.push({ target: "ceiling", server: ceiling, progress: progress(), cpu: cpuOf(ceiling) });
    }
    if (redis) {
      // The same cursor secret as the SQLite ledger's server (docs/operations.md, The program):
      // the deep scenario's cursor, resolved there, then reads the same on every server.
      const secret = readSetting(ledger, "secret");
      if (secret !== undefined) await redis.ledger.ensureSetting("secret", () => secret);
      const one = await targets.startMarqueeRedis(await freePort(), redis.server.url);
      const two = await targets.startMarqueeRedis(await freePort(), redis.server.url, 2);
      await checkRedisTargets([one, two], served, redis.keys, notes);
      for (const [target, s] of [
        ["redis", one],
        ["redis-w2", two],
      ] as const)
        sides.push({
          target,
          server: s,
          progress: progress(),
          accounts: redis.accounts,
          cpu: cpuOf(s, redis.server.pid),
        });
    }
    if (sides.length > 0 && onlyUnique) for (const side of sides) await side.server.stop();
    else if (sides.length > 0) {
      log(
        `${sides.map((x) => targets.TARGET_TITLES[x.target]).join(", ")}${sides.length > 1 ? ", interleaved slice by slice" : ""}:`,
      );
      recordAll(await measureSides(sides, served, ctx));
      const rss = only.has("bun") ? readMemory(server.child.pid!) : null;
      if (rss) report.rss.bun = rss;
      for (const side of sides) await side.server.stop();
    }
  }
  if (lists && only.has("bun") && only.has("ceiling")) {
    // A fresh Marquee: nothing it answered before this section is in its caches.
    const bun = await targets.startMarqueeBun(await freePort());
    const ceiling = await targets.startCeiling(await freePort(), bodiesFile);
    const peer = await targets.startPeer(await freePort());
    log("unique traffic: Marquee on Bun, the ceiling and the straightforward peer, interleaved slice by slice:");
    const scenarios = uniqueScenarios(lists);
    const memory = watchMemory(bun.child.pid!);
    const cells = await measureUnique({ bun, ceiling, peer }, scenarios, benchKey, lists.sample.state, log);
    report.unique = { scenarios, cells, rss: memory.stop() ?? undefined, ceilingPath: lists.sample.state };
    await Promise.all([bun.stop(), ceiling.stop(), peer.stop()]);
    log(
      `where a new request's time goes: ${UNIQUE.stageRequests.toLocaleString("en-US")} new requests per class, stage by stage …`,
    );
    report.stages = await measureStages(REPLICA_DB, UNIQUE.stageRequests);
  }
  if (only.has("node")) await run("node", await targets.startMarqueeNode(await freePort()));
  if (only.has("prism")) {
    if (!openapi.ok) record("prism", Object.fromEntries(served.map((s) => [s.id, { skipped: "no OpenAPI document" }])));
    else {
      log("starting Prism (npx downloads it on first use) …");
      try {
        await run("prism", await targets.startPrism(await freePort(), openapiFile));
      } catch (err) {
        const reason = (err as Error).message.split("\n")[0].slice(0, 200);
        notes.push(`Prism could not be started: ${reason}`);
        record("prism", Object.fromEntries(served.map((s) => [s.id, { skipped: "Prism did not start" }])));
      }
    }
  }

  if (only.has("observability")) {
    log("the default page without and with the request log and /metrics, side by side:");
    try {
      report.observability = observabilityMarkdown(await measureObservability(benchKey, log));
    } catch (err) {
      report.observability = { skipped: (err as Error).message.split("\n")[0].slice(0, 200) };
    }
  }

  if (!flags["skip-cold-start"]) {
    for (let i = 0; i < DATA.coldStartRuns; i++) {
      const s = await targets.startBinary(await freePort());
      report.coldStartMs.push(s.readyMs);
      await s.stop();
    }
    log(`cold starts: ${report.coldStartMs.map((x) => x.toFixed(0)).join(", ")} ms`);
    // marquee/testing as another project's test suite starts it (test/bench/start-times.ts).
    report.startTimes = await measureStartTimes();
    log(
      `startMarquee(): empty ${report.startTimes.emptyMs.map((x) => x.toFixed(0)).join(", ")} ms; 5,000 demo events ${report.startTimes.demo5000Ms.map((x) => x.toFixed(0)).join(", ")} ms`,
    );
    // Start-up against the runtime's own, side by side (test/bench/startup.ts).
    report.startup = await measureStartup({ log });
  }

  if (!flags["skip-sync"]) {
    log(`sync throughput: importing the ${DATA.events.toLocaleString("en-US")}-event stream into an empty replica …`);
    try {
      report.syncThroughput = await measureSyncThroughput(DATA.syncRuns);
      log(`  ${report.syncThroughput.recordsPerS.toFixed(0)} records/s`);
    } catch (err) {
      report.syncThroughput = { skipped: (err as Error).message.split("\n")[0].slice(0, 200) };
    }
    try {
      const changes = await writeChangeStream(DATA.changeRecords);
      server = await targets.startMarqueeBun(await freePort());
      const spec = { url: `${server.baseUrl}/v1/events`, key: benchKey };
      const idle = await measure(spec);
      log(`default page idle: p99 ${idle.p99Ms.toFixed(2)} ms; now syncing ${changes.records} changes under load …`);
      report.syncUnderLoad = { ...(await measureSyncUnderLoad(spec, changes.file, changes.records)), idle };
      log(
        `  during sync: p99 ${report.syncUnderLoad.load.p99Ms.toFixed(2)} ms over ${report.syncUnderLoad.syncSeconds.toFixed(1)} s`,
      );
      await server.stop();
    } catch (err) {
      report.syncUnderLoad = { skipped: (err as Error).message.split("\n")[0].slice(0, 200) };
    }
  }

  if (!flags["skip-postgres"]) {
    // One PostgreSQL upstream, one replica copied from it: the streaming run and the peer
    // resume that replica from its slot instead of copying again.
    log(
      `PostgreSQL upstream: writing the ${DATA.events.toLocaleString("en-US")}-event demo data set into a new server …`,
    );
    try {
      const fx = await preparePostgres(DATA.events, log);
      try {
        const db = join(fx.dir, "follow.db");
        const copy = await measurePostgresCopy(fx, db, DATA.syncRuns);
        log(
          `  initial copy: ${copy.rows.toLocaleString("en-US")} rows in ${copy.seconds.toFixed(1)} s (${Math.round(copy.rowsPerS).toLocaleString("en-US")} rows/s; runs ${copy.runs.map((r) => r.toFixed(1)).join(", ")} s)`,
        );
        const streaming = await measureStreaming(
          fx,
          { seconds: DATA.pgStreamSeconds, changesPerS: DATA.pgChangesPerS, idleSeconds: 10, db },
          log,
        );
        log(
          `  commit to served: p50 ${streaming.commitToServed.p50.toFixed(0)} ms, p99 ${streaming.commitToServed.p99.toFixed(0)} ms; page p99 ${streaming.p99Ratio.toFixed(2)}x idle`,
        );
        const peer = await measurePeer(fx, { seconds: 10, db });
        log(
          `  default page: Marquee ${Math.round(peer.marquee.perS)} req/s, PostgreSQL peer ${Math.round(peer.peer.perS)} req/s (${peer.throughputRatio.toFixed(1)}x)`,
        );
        report.postgres = { copy, streaming, peer };
      } finally {
        fx.close();
      }
    } catch (err) {
      report.postgres = { skipped: (err as Error).message.split("\n")[0].slice(0, 200) };
    }
  }

  replica.close();
  ledger.close();
  if (redis) {
    await redis.ledger.close();
    await redis.server.stop();
  }
  report.elapsedS = (performance.now() - started) / 1000;
  const markdown = renderMarkdown(report);
  console.log(`\n${markdown}\n`);
  // A partial run would replace the full figures with holes: RESULTS.md records whole runs only.
  if (flags.only || flags["skip-sync"] || flags["skip-cold-start"] || flags["skip-unique"] || flags["skip-postgres"])
    log("partial run: test/bench/RESULTS.md left as it was");
  else {
    writeResults(markdown);
    log("written to test/bench/RESULTS.md");
  }
  return 0;
}

/**
 * One request of each scenario on each Redis-ledger server, with the Redis ledger's own bench,
 * trial and handoff keys: a server that answers other than it did on the SQLite ledger is noted
 * before it is loaded (its cells then show the refusals).
 */
async function checkRedisTargets(
  servers: Server[],
  scenarios: Scenario[],
  keys: Record<string, string>,
  notes: string[],
): Promise<void> {
  for (const s of servers) {
    const off: string[] = [];
    for (const sc of scenarios) {
      const answer = await request(s.baseUrl, sc.method, sc.path, keys[sc.auth], sc.body);
      if (answer.status >= 300) off.push(`${sc.id} ${answer.status}`);
    }
    if (off.length) notes.push(`${s.name} on the Redis ledger answered ${off.join(", ")} before the load.`);
    log(
      `${s.name}: ${scenarios.length - off.length}/${scenarios.length} scenarios answered 2xx with Redis-ledger keys`,
    );
  }
}

process.on("SIGINT", () => {
  stopAllServers();
  process.exit(130);
});
main()
  .then((code) => (process.exitCode = code))
  .catch((err) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exitCode = 1;
  })
  .finally(() => {
    stopAllServers();
    cleanRunDir();
  });
