#!/usr/bin/env bun
/**
 * How cost grows with the replica: demo replicas of 100,000, 1,000,000 and 3,000,000 events, each
 * built from scratch (`marquee demo-data`, then a timed `marquee sync`), then served by Marquee on
 * Bun under unique state and unique circle traffic (test/bench/lib/unique.ts), with its size on
 * disk and the server's private memory under the load (sampled, its peak), RSS beside it.
 *
 *   bun test/bench/scale.ts [--events 100000,1000000,3000000] [--seconds 5]
 *
 * Prints a markdown table; `npm run bench:scale` runs it. Everything it builds goes under
 * .bench/scale/ and is deleted as it goes (a 3,000,000-event replica takes about 2 GB).
 */
import { mkdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createAccount } from "../../db/accounts.ts";
import { ledgerPathFor, openLedger } from "../../db/ledger.ts";
import { openReplica } from "../../db/replica.ts";
import { BUN, CACHE, LOAD, UNLIMITED_RATE } from "./lib/config.ts";
import { issueKeyOn, RUN_DIR } from "./lib/fixture.ts";
import { freePort, type MemoryReading, runOk, startServer, watchMemory } from "./lib/proc.ts";
import { writeUniqueLists } from "./lib/unique.ts";
import { measure } from "./lib/wrk.ts";

const { values } = parseArgs({ options: { events: { type: "string" }, seconds: { type: "string" } } });
const sizes = (values.events ?? "100000,1000000,3000000").split(",").map(Number);
const seconds = Number(values.seconds ?? 5);
const DIR = join(CACHE, "scale");
const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
const log = (s: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${s}`);

interface ScaleRow {
  events: number;
  syncS: number;
  recordsPerS: number;
  diskMb: number;
  state: { rps: number; p99Ms: number };
  circle: { rps: number; p99Ms: number };
  memory: MemoryReading | null;
}

async function measureSize(events: number): Promise<ScaleRow> {
  rmSync(DIR, { recursive: true, force: true });
  mkdirSync(DIR, { recursive: true });
  mkdirSync(RUN_DIR, { recursive: true });
  const ndjson = join(DIR, "demo.ndjson");
  const db = join(DIR, "marquee.db");
  const today = new Date().toISOString().slice(0, 10);
  log(`${fmt(events)} events: generating …`);
  await runOk(BUN, [
    "server/main.ts",
    "demo-data",
    "--events",
    String(events),
    "--seed",
    "1",
    "--anchor",
    today,
    "--out",
    ndjson,
  ]);
  log("  syncing …");
  const sync = await runOk(BUN, ["server/main.ts", "sync", "--from", ndjson, "--db", db, "--json"]);
  const summary = JSON.parse(sync.stdout) as { applied: number };
  rmSync(ndjson, { force: true });
  const diskMb =
    ["", "-wal"].reduce((sum, suffix) => sum + (statSync(db + suffix, { throwIfNoEntry: false })?.size ?? 0), 0) / 1e6;

  const ledger = await openLedger(ledgerPathFor(db));
  const now = Date.now();
  const account = createAccount(
    ledger,
    {
      email: "scale@bench.example",
      plan: "enterprise",
      rowBudget: null,
      rateSustained: UNLIMITED_RATE,
      rateBurst: UNLIMITED_RATE,
    },
    now,
  );
  const key = issueKeyOn(ledger, account, "live", now);
  ledger.close();
  const replica = await openReplica(db, { readonly: true });
  const lists = writeUniqueLists(replica, {
    perClass: 60_000,
    walks: 10,
    zipfRequests: 10,
    zipfQueries: 10,
    seed: 5,
    nowMs: now,
  });
  replica.close();

  const port = await freePort();
  const server = await startServer(
    "marquee-bun",
    BUN,
    [
      "server/main.ts",
      "serve",
      "--db",
      db,
      "--port",
      String(port),
      "--host",
      "127.0.0.1",
      "--snapshot-interval",
      "3600",
      // No request lines, as every bench server (test/bench/lib/targets.ts serveArgs).
      "--log-level",
      "warn",
    ],
    {
      port,
      probe: "/healthz",
      env: { MARQUEE_SECRET: "", MARQUEE_DB: "", MARQUEE_BASE_URL: "", PORT: "" },
    },
  );
  const memory = watchMemory(server.child.pid!);
  try {
    log("  unique state …");
    const state = await measure({ url: `${server.baseUrl}/`, key, pathsFile: lists.paths.state }, seconds);
    log("  unique circle …");
    const circle = await measure({ url: `${server.baseUrl}/`, key, pathsFile: lists.paths.circle }, seconds);
    const row = {
      events,
      syncS: sync.ms / 1000,
      recordsPerS: summary.applied / (sync.ms / 1000),
      diskMb,
      state: { rps: state.rps, p99Ms: state.p99Ms },
      circle: { rps: circle.rps, p99Ms: circle.p99Ms },
      memory: memory.stop(),
    };
    log(`  ${JSON.stringify(row)}`);
    return row;
  } finally {
    await server.stop();
    rmSync(DIR, { recursive: true, force: true });
  }
}

const rows: ScaleRow[] = [];
for (const events of sizes) rows.push(await measureSize(events));
console.log(
  [
    `Unique traffic: wrk, ${LOAD.threads} threads, ${LOAD.connections} connections, ${LOAD.warmupS} s warm-up then ${seconds} s; private memory (RssAnon + swap) sampled under both loads, its peak, and RSS after them (with the mapped file pages).`,
    "",
    "| events | sync (records/s) | replica on disk | unique state req/s (p99) | unique circle req/s (p99) | private memory, peak | RSS after load (peak) |",
    "|--:|--:|--:|--:|--:|--:|--:|",
    ...rows.map(
      (r) =>
        `| ${fmt(r.events)} | ${fmt(r.syncS, 1)} s (${fmt(r.recordsPerS)}) | ${fmt(r.diskMb)} MB | ${fmt(r.state.rps)} (${fmt(r.state.p99Ms, 1)} ms) | ${fmt(r.circle.rps)} (${fmt(r.circle.p99Ms, 1)} ms) | ${r.memory ? `${fmt(r.memory.privatePeakMb)} MB` : "–"} | ${r.memory ? `${fmt(r.memory.rssMb)} MB (${fmt(r.memory.peakMb)} MB)` : "–"} |`,
    ),
  ].join("\n"),
);
