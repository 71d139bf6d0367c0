#!/usr/bin/env bun
/**
 * `npm run bench`: Marquee against its ceiling and its peers, in one run on this machine.
 *
 *   bun test/bench/run.ts [--rebuild] [--only bun,node,ceiling,prism] [--skip-sync] [--skip-cold-start]
 *
 * Order: build the cached 1M-event replica if needed → Marquee on Bun (resolve inputs, capture
 * one real response per scenario) → Marquee on Bun and the ceiling replaying the captured bytes,
 * interleaved scenario by scenario → Marquee on Node
 * → Prism on Marquee's OpenAPI document → cold starts of dist/marquee → sync throughput → the
 * default page under load while a 50,000-change sync runs. Prints the tables; a full run (no
 * --only or --skip-* flag) also writes them into test/bench/RESULTS.md.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openReplica } from "../../db/replica.ts";
import { DATA, UNIQUE } from "./lib/config.ts";
import {
  cleanRunDir,
  createKeys,
  ensureReplica,
  openBenchLedger,
  REPLICA_DB,
  RUN_DIR,
  resetLedger,
} from "./lib/fixture.ts";
import { describeMachine } from "./lib/machine.ts";
import { measureSides } from "./lib/measure.ts";
import { captureScenarios, request, resolveInputs } from "./lib/prepare.ts";
import { freePort, readRss, type Server, stopAllServers } from "./lib/proc.ts";
import { type RunReport, renderMarkdown, writeResults } from "./lib/report.ts";
import { buildScenarios } from "./lib/scenarios.ts";
import { measureSyncThroughput, measureSyncUnderLoad, writeChangeStream } from "./lib/sync-load.ts";
import * as targets from "./lib/targets.ts";
import { writeUniqueLists } from "./lib/unique.ts";
import { measureUnique, uniqueScenarios } from "./lib/unique-measure.ts";
import { checkWrk, measure } from "./lib/wrk.ts";
import { measureStages } from "./list-stages.ts";
import { measurePeer, measurePostgresCopy, measureStreaming, preparePostgres } from "./postgres.ts";
import { measureStartTimes } from "./start-times.ts";

const { values: flags } = parseArgs({
  options: {
    rebuild: { type: "boolean" },
    only: { type: "string" },
    "skip-sync": { type: "boolean" },
    "skip-cold-start": { type: "boolean" },
    "skip-unique": { type: "boolean" },
    "skip-postgres": { type: "boolean" },
  },
});
const only = new Set((flags.only ?? "bun,ceiling,node,prism").split(","));
const started = performance.now();
const log = (s: string) => console.error(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${s}`);

async function main(): Promise<number> {
  const missing = checkWrk();
  if (missing) {
    console.error(missing);
    return 1;
  }
  const machine = describeMachine();
  const replicaInfo = await ensureReplica(Boolean(flags.rebuild), log);
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
  const report: RunReport = {
    machine,
    replica: replicaInfo,
    scenarios: [],
    cells: {},
    notes,
    rss: {},
    coldStartMs: [],
    elapsedS: 0,
  };
  const record = (target: targets.TargetId, cells: Record<string, RunReport["cells"][string][targets.TargetId]>) => {
    for (const [id, cell] of Object.entries(cells)) (report.cells[id] ??= {})[target] = cell;
  };

  log("building the Node bundle and dist/marquee …");
  await targets.buildNodeBundle();
  await targets.buildBinary();

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

  const ctx = { ledger, benchKey, log, notes };
  const recordAll = (cells: Map<targets.TargetId, Record<string, RunReport["cells"][string][targets.TargetId]>>) => {
    for (const [target, c] of cells) record(target, c);
  };
  const run = async (target: targets.TargetId, s: Server) => {
    log(`${targets.TARGET_TITLES[target]}:`);
    recordAll(await measureSides([{ target, server: s, progress: { warmed: false, listRps: 0 } }], served, ctx));
    if (target === "bun" || target === "node") {
      const rss = readRss(s.child.pid!);
      if (rss) report.rss[target] = rss;
    }
    await s.stop();
  };
  if (only.has("bun") && only.has("ceiling")) {
    // Side by side, slice by slice (measureSides): load from other work on a shared machine
    // then falls on both sides of each ratio instead of on one server's whole pass.
    const ceiling = await targets.startCeiling(await freePort(), bodiesFile);
    log("Marquee on Bun and the ceiling, interleaved slice by slice:");
    const sides = [
      { target: "bun" as const, server, progress: { warmed: false, listRps: 0 } },
      { target: "ceiling" as const, server: ceiling, progress: { warmed: false, listRps: 0 } },
    ];
    recordAll(await measureSides(sides, served, ctx));
    const rss = readRss(server.child.pid!);
    if (rss) report.rss.bun = rss;
    await server.stop();
    await ceiling.stop();
  } else {
    if (only.has("bun")) await run("bun", server);
    else await server.stop();
    if (only.has("ceiling")) await run("ceiling", await targets.startCeiling(await freePort(), bodiesFile));
  }
  if (lists && only.has("bun") && only.has("ceiling")) {
    // A fresh Marquee: nothing it answered before this section is in its caches.
    const bun = await targets.startMarqueeBun(await freePort());
    const ceiling = await targets.startCeiling(await freePort(), bodiesFile);
    const peer = await targets.startPeer(await freePort());
    log("unique traffic: Marquee on Bun, the ceiling and the straightforward peer, interleaved slice by slice:");
    const scenarios = uniqueScenarios(lists);
    const cells = await measureUnique({ bun, ceiling, peer }, scenarios, benchKey, lists.sample.state, log);
    report.unique = { scenarios, cells, rss: readRss(bun.child.pid!) ?? undefined, ceilingPath: lists.sample.state };
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
        const copy = await measurePostgresCopy(fx, db);
        log(
          `  initial copy: ${copy.rows.toLocaleString("en-US")} rows in ${copy.seconds.toFixed(1)} s (${Math.round(copy.rowsPerS).toLocaleString("en-US")} rows/s)`,
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
