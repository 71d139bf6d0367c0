/**
 * Child processes for the benchmark: one-shot commands, long-running servers that are ready when
 * an HTTP probe answers 200, and their resident memory read from /proc.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { procStatusKiB } from "../../../server/proc-status.ts";
import { freePort } from "../../net.ts";
import { ROOT } from "./config.ts";

export { freePort };

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs a command to completion, capturing its output. */
export function run(
  cmd: string,
  args: string[],
  opts: { env?: Record<string, string>; cwd?: string } = {},
): Promise<RunResult> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd ?? ROOT,
      env: { ...process.env, ...opts.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code: code ?? 1, stdout, stderr, ms: performance.now() - started }));
  });
}

/** Like `run`, but throws with the command's stderr when it fails. */
export async function runOk(
  cmd: string,
  args: string[],
  opts: { env?: Record<string, string>; cwd?: string } = {},
): Promise<RunResult> {
  const r = await run(cmd, args, opts);
  if (r.code !== 0)
    throw new Error(`${cmd} ${args.join(" ")} failed (${r.code}): ${(r.stderr || r.stdout).slice(-2000)}`);
  return r;
}

export interface Server {
  name: string;
  child: ChildProcess;
  baseUrl: string;
  /** Milliseconds from spawn to the first 200 of the probe. */
  readyMs: number;
  log(): string;
  stop(): Promise<void>;
}

/** Spawns a server and waits until GET `probe` answers 200 (or the process dies, or time runs out). */
export async function startServer(
  name: string,
  cmd: string,
  args: string[],
  opts: {
    port: number;
    probe: string;
    timeoutMs?: number;
    env?: Record<string, string>;
    pollMs?: number;
    /** Which probe status means ready; default 200 only. */
    ready?: (status: number) => boolean;
    /** Also wait for this in the server's output (a `--workers` supervisor's line once all listen). */
    readyOutput?: string;
  },
): Promise<Server> {
  const started = performance.now();
  // Its own process group, so a wrapper (npx) and the server it starts stop together.
  const child = spawn(cmd, args, {
    cwd: ROOT,
    env: { ...process.env, ...opts.env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  live.add(child);
  let output = "";
  child.stdout!.on("data", (d) => (output = (output + d).slice(-20_000)));
  child.stderr!.on("data", (d) => (output = (output + d).slice(-20_000)));
  const baseUrl = `http://127.0.0.1:${opts.port}`;
  const deadline = started + (opts.timeoutMs ?? 30_000);
  const stop = () => stopTracked(child);
  const ready = () => opts.readyOutput === undefined || output.includes(opts.readyOutput);
  while (performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}): ${output.slice(-2000)}`);
    try {
      const res = await fetch(baseUrl + opts.probe);
      await res.arrayBuffer();
      if ((opts.ready ?? ((s) => s === 200))(res.status) && ready()) {
        return { name, child, baseUrl, readyMs: performance.now() - started, log: () => output, stop };
      }
    } catch {
      // not listening yet
    }
    await Bun.sleep(opts.pollMs ?? 20);
  }
  await stop();
  throw new Error(`${name} did not answer ${opts.probe} within ${opts.timeoutMs ?? 30_000} ms: ${output.slice(-2000)}`);
}

/** Servers started by this run, stopped on exit even when the run fails. */
const live = new Set<ChildProcess>();

/**
 * A detached child (its own process group) spawned by the caller, stopped with the others on exit
 * or Ctrl-C: the same stop as a server's.
 */
export function track(child: ChildProcess): () => Promise<void> {
  live.add(child);
  return () => stopTracked(child);
}

/** SIGTERM to the child's group, SIGKILL after 5 s, then SIGKILL to anything it left in its group. */
async function stopTracked(child: ChildProcess): Promise<void> {
  live.delete(child);
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  signalGroup(child, "SIGTERM");
  const timer = setTimeout(() => signalGroup(child, "SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
  signalGroup(child, "SIGKILL"); // anything the server left behind in its group
}
// Servers run in their own process groups, so they outlive a crashed parent unless stopped here.
process.on("exit", () => stopAllServers());

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // already gone
  }
}

/** Stops every server this run started and has not stopped yet (exit and Ctrl-C paths). */
export function stopAllServers(): void {
  for (const child of live) signalGroup(child, "SIGKILL");
  live.clear();
}

/**
 * A process's memory in MB: `privateMb` is what it holds privately (RssAnon plus VmSwap from
 * /proc), the figure the bench's memory target counts; `rssMb` (VmRSS) adds the file pages it has
 * mapped, among them a memory-mapped replica's, which are the operating system's cache (shared
 * and reclaimable); `peakMb` is VmHWM, the peak of that RSS.
 */
export interface MemoryReading {
  privateMb: number;
  rssMb: number;
  peakMb: number;
  /** The highest `privateMb` seen while it was watched (`watchMemory`), else `privateMb`. */
  privatePeakMb: number;
}

export function readMemory(pid: number): MemoryReading | null {
  const fields = procStatusKiB(pid);
  if (!fields) return null;
  const mb = (field: string) => (fields.get(field) ?? 0) / 1024;
  const privateMb = mb("RssAnon") + mb("VmSwap");
  return { privateMb, rssMb: mb("VmRSS"), peakMb: mb("VmHWM"), privatePeakMb: privateMb };
}

/**
 * Samples a process's private memory every `everyMs` until `stop`, which returns the last reading
 * with the highest private figure seen (the kernel keeps a peak of RSS only).
 */
export function watchMemory(pid: number, everyMs = 250): { stop(): MemoryReading | null } {
  let peak = 0;
  const sample = () => {
    const m = readMemory(pid);
    if (m) peak = Math.max(peak, m.privateMb);
    return m;
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      const last = sample();
      return last && { ...last, privatePeakMb: peak };
    },
  };
}
