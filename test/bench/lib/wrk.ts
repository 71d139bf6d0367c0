/**
 * Load generation with wrk on loopback: 32 connections, a short warm-up, then a few
 * seconds measured with --latency. Figures come from test/bench/summary.lua (exact microsecond
 * percentiles), not from parsing wrk's rounded text.
 */
import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { LOAD, ROOT } from "./config.ts";

const SUMMARY_LUA = join(ROOT, "test", "bench", "summary.lua");
const ROTATE_LUA = join(ROOT, "test", "bench", "rotate-keys.lua");
const ROTATE_URLS_LUA = join(ROOT, "test", "bench", "rotate-urls.lua");
const WALK_LUA = join(ROOT, "test", "bench", "walk-cursors.lua");

export interface LoadSpec {
  url: string;
  /** A single bearer key, sent as a header on every request. */
  key?: string;
  /** Or a file of keys rotated per request (test/bench/rotate-keys.lua). */
  keysFile?: string;
  method?: "GET" | "POST";
  body?: string;
  /** With keysFile, pathsFile or walksFile: each thread's place after the previous slice (`Slice.places`). */
  startAt?: string;
  /** Paths (with query strings) sent in turn, none twice (test/bench/rotate-urls.lua); `url` is the origin. */
  pathsFile?: string;
  /** Cursor walks (test/bench/walk-cursors.lua) of `walkPages` pages each; `url` is the origin. */
  walksFile?: string;
  walkPages?: number;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Mean bytes per answer, headers included: mocks may answer with far less than Marquee. */
  bytesPerAnswer: number;
  /** Responses outside 2xx/3xx. */
  non2xx: number;
  socketErrors: number;
  /** Answers by HTTP status (rotated-key runs only, which count them). */
  statuses?: Record<string, number>;
}

/** One wrk run with its latency histogram (microseconds → count), which slices combine by. */
export interface Slice extends LoadResult {
  histogram: Map<number, number>;
  /** With rotated keys or paths: each thread's place in its rotation at the end ("n1,n2"), the next slice's startAt. */
  places?: string;
  /** With rotated paths or walks: requests sent after the list ran out (each then repeats one). */
  wrapped?: number;
}

/** Null when wrk is installed, else how to install it. */
export function checkWrk(): string | null {
  const r = spawnSync("wrk", ["--version"], { encoding: "utf8" });
  if (r.error)
    return "wrk is not installed. Install it with: apt-get update && apt-get install -y wrk (macOS: brew install wrk)";
  return null;
}

function wrkArgs(spec: LoadSpec, duration: string): string[] {
  const args = [
    "-t",
    String(LOAD.threads),
    "-c",
    String(LOAD.connections),
    "-d",
    duration,
    "--latency",
    "--timeout",
    `${LOAD.timeoutS}s`,
  ];
  const threads = String(LOAD.threads);
  if (spec.pathsFile)
    return [
      ...args,
      "-s",
      ROTATE_URLS_LUA,
      spec.url,
      "--",
      spec.pathsFile,
      threads,
      spec.key ?? "",
      spec.startAt ?? "0",
    ];
  if (spec.walksFile) {
    return [
      ...args,
      "-s",
      WALK_LUA,
      spec.url,
      "--",
      spec.walksFile,
      threads,
      spec.key ?? "",
      String(spec.walkPages ?? 40),
      spec.startAt ?? "0",
    ];
  }
  if (spec.keysFile) {
    args.push(
      "-s",
      ROTATE_LUA,
      spec.url,
      "--",
      spec.keysFile,
      String(LOAD.threads),
      spec.method ?? "GET",
      spec.startAt ?? "0",
    );
    if (spec.body !== undefined) args.push(spec.body);
    return args;
  }
  if (spec.key) args.push("-H", `Authorization: Bearer ${spec.key}`);
  args.push("-s", SUMMARY_LUA, spec.url);
  return args;
}

function parse(output: string): Slice {
  const lines = output.split("\n");
  const line = lines.find((l) => l.startsWith("BENCH_JSON "));
  const statusLine = lines.find((l) => l.startsWith("BENCH_STATUS "));
  const histLine = lines.find((l) => l.startsWith("BENCH_HIST ")) ?? "BENCH_HIST ";
  const placesLine = lines.find((l) => l.startsWith("BENCH_SENT "));
  const wrappedLine = lines.find((l) => l.startsWith("BENCH_WRAPPED "));
  const histogram = new Map<number, number>();
  for (const entry of histLine.slice("BENCH_HIST ".length).split(",")) {
    if (!entry) continue;
    const [us, count] = entry.split(":").map(Number);
    histogram.set(us, (histogram.get(us) ?? 0) + count);
  }
  if (!line) throw new Error(`wrk printed no summary:\n${output.slice(-2000)}`);
  const j = JSON.parse(line.slice("BENCH_JSON ".length));
  const seconds = j.durationUs / 1e6;
  const e = j.errors;
  return {
    requests: j.requests,
    seconds,
    rps: seconds > 0 ? j.requests / seconds : 0,
    p50Ms: j.p50Us / 1000,
    p90Ms: j.p90Us / 1000,
    p99Ms: j.p99Us / 1000,
    maxMs: j.maxUs / 1000,
    bytesPerAnswer: j.requests > 0 ? j.bytes / j.requests : 0,
    non2xx: e.status,
    socketErrors: e.connect + e.read + e.write + e.timeout,
    statuses: statusLine ? JSON.parse(statusLine.slice("BENCH_STATUS ".length)) : undefined,
    histogram,
    ...(placesLine ? { places: placesLine.slice("BENCH_SENT ".length).trim() } : {}),
    ...(wrappedLine ? { wrapped: Number(wrappedLine.slice("BENCH_WRAPPED ".length)) } : {}),
  };
}

/** The smallest latency with at least `p` percent of the samples at or below it (wrk's rule). */
function percentile(sorted: Array<[number, number]>, total: number, p: number): number {
  const rank = Math.round((p / 100) * total + 0.5);
  let seen = 0;
  for (const [us, count] of sorted) {
    seen += count;
    if (seen >= rank) return us;
  }
  return sorted.length ? sorted[sorted.length - 1][0] : 0;
}

/**
 * Slices of one measurement as if they were one run: requests and seconds add up, percentiles
 * come from the merged histograms.
 */
export function combine(slices: Slice[]): LoadResult {
  const merged = new Map<number, number>();
  for (const s of slices) for (const [us, n] of s.histogram) merged.set(us, (merged.get(us) ?? 0) + n);
  const sorted = [...merged].sort((a, b) => a[0] - b[0]);
  const samples = sorted.reduce((sum, [, n]) => sum + n, 0);
  const sum = (f: (s: Slice) => number) => slices.reduce((t, s) => t + f(s), 0);
  const requests = sum((s) => s.requests);
  const seconds = sum((s) => s.seconds);
  let statuses: Record<string, number> | undefined;
  for (const s of slices) {
    if (!s.statuses) continue;
    statuses ??= {};
    for (const [status, n] of Object.entries(s.statuses)) statuses[status] = (statuses[status] ?? 0) + n;
  }
  return {
    requests,
    seconds,
    rps: seconds > 0 ? requests / seconds : 0,
    p50Ms: percentile(sorted, samples, 50) / 1000,
    p90Ms: percentile(sorted, samples, 90) / 1000,
    p99Ms: percentile(sorted, samples, 99) / 1000,
    maxMs: Math.max(...slices.map((s) => s.maxMs)),
    bytesPerAnswer: requests > 0 ? sum((s) => s.bytesPerAnswer * s.requests) / requests : 0,
    non2xx: sum((s) => s.non2xx),
    socketErrors: sum((s) => s.socketErrors),
    statuses,
  };
}

function runWrk(args: string[]): { promise: Promise<string>; interrupt(): void } {
  const child = spawn("wrk", args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const promise = new Promise<string>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0 ? resolve(out) : reject(new Error(`wrk exited ${code}: ${out.slice(-2000)}`)),
    );
  });
  return { promise, interrupt: () => child.kill("SIGINT") };
}

/** One wrk run (no warm-up of its own): a measured slice. */
export async function slice(spec: LoadSpec, durationS: number): Promise<Slice> {
  return parse(await runWrk(wrkArgs(spec, `${durationS}s`)).promise);
}

/** One short run without warm-up: a scenario's rate, to size what the measured run needs. */
export async function probe(spec: LoadSpec, durationS: number): Promise<LoadResult> {
  return strip(await slice(spec, durationS));
}

/** Warm-up (discarded), then one measured run. */
export async function measure(spec: LoadSpec, durationS: number = LOAD.durationS): Promise<LoadResult> {
  if (LOAD.warmupS > 0) await slice(spec, LOAD.warmupS);
  return strip(await slice(spec, durationS));
}

function strip({ histogram: _, places: __, wrapped: ___, ...result }: Slice): LoadResult {
  return result;
}

/**
 * Load that runs until `stop()` (wrk prints its summary on SIGINT): for measuring latency for
 * exactly as long as something else (a sync) is running.
 */
export function startOpenEndedLoad(spec: LoadSpec): { stop(): Promise<LoadResult> } {
  const handle = runWrk(wrkArgs(spec, "600s"));
  return {
    async stop() {
      handle.interrupt();
      return strip(parse(await handle.promise));
    },
  };
}
