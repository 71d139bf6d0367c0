#!/usr/bin/env bun
/**
 * What the request log and the metrics cost (docs/operations.md, Logs and metrics): the default
 * page on two Marquee servers on the SQLite ledger, side by side, slice by slice (A B B A …).
 * One runs as the rest of the bench does, without request lines (`--log-level warn`); the other
 * writes the JSON request log to a file (`--log-format json --log-file …`) and has its `/metrics`
 * scraped every second on its admin port. The target: the second within 10 % of the first.
 *
 * A SQLite ledger has one server (docs/operations.md, Files on disk), so the second serves a
 * copy of the bench replica, with a ledger and an account of its own.
 *
 *   bun test/bench/observability.ts          (npm run bench:observability; also part of npm run bench)
 *
 * `OBS_VARIANT=log` or `OBS_VARIANT=metrics` gives the second server only one of the two, to see
 * which costs what; `OBS_VARIANT=none` gives it neither, so the pair shows how far apart two
 * identical servers measure.
 *
 * Builds the cached 1M-event replica first if it is missing (test/bench/lib/fixture.ts).
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { ledgerPathFor, openLedger } from "../../db/ledger.ts";
import { LOAD } from "./lib/config.ts";
import { groupCpuS } from "./lib/cpu.ts";
import {
  cleanRunDir,
  createKeys,
  ensureReplica,
  openBenchLedger,
  REPLICA_DB,
  RUN_DIR,
  resetLedger,
} from "./lib/fixture.ts";
import { freePort, type Server, stopAllServers } from "./lib/proc.ts";
import { startMarqueeBun } from "./lib/targets.ts";
import { combine, type LoadResult, type Slice, slice } from "./lib/wrk.ts";

export const OBSERVABILITY = {
  /**
   * Measured slices per side, each `sliceS` long: two identical servers (`OBS_VARIANT=none`) came
   * out up to 7 % apart in 12 slices on a busy host, so the pair takes more.
   */
  slices: 20,
  sliceS: 1,
  /** The observed side's own target. */
  maxSlowdown: 0.1,
} as const;

export interface ObservedSide {
  load: LoadResult;
  /** Server CPU per request, µs. */
  cpuUs: number;
}

export interface ObservabilityResult {
  plain: ObservedSide;
  observed: ObservedSide;
  /** Request lines the observed server wrote, and scrapes answered 200. */
  logLines: number;
  scrapes: number;
}

/**
 * Measures the pair: `benchKey` (an account with no row budget and its rate lifted, in the bench
 * replica's ledger) on the plain side, the same kind of account on the copy's.
 */
export async function measureObservability(benchKey: string, log: (s: string) => void): Promise<ObservabilityResult> {
  const dir = join(RUN_DIR, "observed");
  mkdirSync(dir, { recursive: true });
  const copy = join(dir, "marquee.db");
  copyFileSync(REPLICA_DB, copy);
  const ledger = await openLedger(ledgerPathFor(copy));
  const [observedKey] = createKeys(ledger, "bench", 1, "observed").keys;
  ledger.close();
  const logFile = join(RUN_DIR, "requests.log");
  const adminPort = await freePort();
  const plain = await startMarqueeBun(await freePort());
  const variant = process.env.OBS_VARIANT ?? "both";
  const observed = await startMarqueeBun(await freePort(), [
    "--db",
    copy,
    ...(variant === "both" || variant === "log"
      ? ["--log-level", "info", "--log-format", "json", "--log-file", logFile]
      : []),
    ...(variant === "both" || variant === "metrics" ? ["--admin-port", String(adminPort)] : []),
  ]);
  let scrapes = 0;
  const scraper = setInterval(async () => {
    try {
      const res = await fetch(`http://127.0.0.1:${adminPort}/metrics`);
      await res.text();
      if (res.ok) scrapes++;
    } catch {
      // counted by its absence
    }
  }, 1000);
  try {
    const sides = [
      { server: plain, key: benchKey, slices: [] as Slice[], cpuS: 0 },
      { server: observed, key: observedKey, slices: [] as Slice[], cpuS: 0 },
    ];
    const spec = (side: { server: Server; key: string }) => ({
      url: `${side.server.baseUrl}/v1/events`,
      key: side.key,
    });
    for (const side of sides) await slice(spec(side), LOAD.targetWarmupS);
    for (let k = 0; k < OBSERVABILITY.slices; k++) {
      for (const side of k % 2 === 0 ? sides : [...sides].reverse()) {
        const before = groupCpuS(side.server.child.pid!);
        side.slices.push(await slice(spec(side), OBSERVABILITY.sliceS));
        side.cpuS += groupCpuS(side.server.child.pid!) - before;
      }
    }
    const [a, b] = sides.map((side) => {
      const load = combine(side.slices);
      return { load, cpuUs: (side.cpuS * 1e6) / Math.max(1, load.requests) };
    });
    for (const [name, s] of [
      ["without", a],
      [variant === "both" ? "with log + metrics" : variant === "none" ? "the same again" : `with ${variant}`, b],
    ] as const)
      log(
        `  ${name.padEnd(20)} ${s.load.rps.toFixed(0).padStart(7)} req/s  p50 ${s.load.p50Ms.toFixed(2)} ms  p99 ${s.load.p99Ms.toFixed(2)} ms  CPU ${s.cpuUs.toFixed(1)} µs/req`,
      );
    await observed.stop();
    const logLines =
      existsSync(logFile) && statSync(logFile).size > 0 ? readFileSync(logFile, "utf8").split("\n").length - 1 : 0;
    return { plain: a, observed: b, logLines, scrapes };
  } finally {
    clearInterval(scraper);
    await plain.stop();
    await observed.stop();
  }
}

/** The section of RESULTS.md: both sides and the ratios against the 10 % target. */
export function observabilityMarkdown(r: ObservabilityResult): string {
  const rps = r.observed.load.rps / r.plain.load.rps;
  const cpu = r.observed.cpuUs / r.plain.cpuUs;
  const met = rps >= 1 - OBSERVABILITY.maxSlowdown;
  const row = (name: string, s: ObservedSide) =>
    `| ${name} | ${s.load.rps.toFixed(0)} | ${s.load.p50Ms.toFixed(2)} | ${s.load.p99Ms.toFixed(2)} | ${s.cpuUs.toFixed(1)} |`;
  return [
    "| default page, 1,000,000 events | req/s | p50 ms | p99 ms | server CPU µs/req |",
    "|---|---|---|---|---|",
    row("no request lines (`--log-level warn`)", r.plain),
    row("JSON request log to a file, `/metrics` scraped every second", r.observed),
    "",
    `With both: ${(100 * rps).toFixed(1)} % of the throughput and ${(100 * cpu).toFixed(1)} % of the CPU per request ` +
      `(target: within ${100 * OBSERVABILITY.maxSlowdown} % of the throughput, ${met ? "met" : "missed"}); ` +
      `${r.logLines.toLocaleString("en-US")} request lines written, ${r.scrapes} scrapes answered.`,
  ].join("\n");
}

if (import.meta.main) {
  const started = performance.now();
  const log = (s: string) => console.error(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${s}`);
  process.on("SIGINT", () => {
    stopAllServers();
    process.exit(130);
  });
  try {
    const replica = await ensureReplica(false, log);
    log(`replica: ${replica.events.toLocaleString("en-US")} events${replica.reused ? " (cached)" : ""}`);
    resetLedger();
    cleanRunDir();
    const ledger = await openBenchLedger();
    const [benchKey] = createKeys(ledger, "bench", 1, "observability").keys;
    ledger.close();
    log("default page, without and with the request log and /metrics, slice by slice:");
    const result = await measureObservability(benchKey, log);
    console.log(`\n${observabilityMarkdown(result)}\n`);
  } finally {
    stopAllServers();
    cleanRunDir();
  }
}
