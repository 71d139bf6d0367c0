/**
 * What ties a Marquee process to the process that started it, so that it never outlives it
 * (docs/operations.md, Signals and exit codes): a worker's supervisor (its IPC channel), a parent's standard input
 * (`serve --exit-with-stdin`), and the `npx marquee` wrapper (bin/marquee.js). Each calls `stop`,
 * which stops the process the way SIGTERM does. Nothing here loads more than it uses: this module
 * runs before any command does.
 */
import { onBun } from "../db/runtime.ts";
import { wrapperPid } from "./config.ts";

/** What a worker tells its supervisor over the IPC channel: it listens, on this port. */
export interface WorkerMessage {
  type: "listening";
  port: number;
}

/** In a worker: tells the supervisor this process listens, and on which port. */
export function reportListening(port: number): void {
  const message: WorkerMessage = { type: "listening", port };
  process.send?.(message);
}

/** In a worker: `stop` runs when the supervisor is gone (its IPC channel closed), however it ended. */
export function stopWithSupervisor(stop: () => void): void {
  process.on("disconnect", stop);
}

/**
 * `--exit-with-stdin`: standard input reaching its end (or failing) means the process that
 * started this one is gone or wants it gone. Whatever arrives on it is read and dropped. On Bun,
 * through Bun's own reader: node's `process.stdin` costs a start about 8 ms.
 */
export function stopWhenStdinCloses(stop: () => void): void {
  if (onBun) {
    drain(Bun.stdin.stream()).then(stop, stop);
    return;
  }
  process.stdin.on("end", stop);
  process.stdin.on("close", stop);
  process.stdin.on("error", stop);
  process.stdin.resume();
}

async function drain(stream: ReadableStream<Uint8Array>): Promise<void> {
  const reader = stream.getReader();
  while (!(await reader.read()).done) {
    // dropped
  }
}

const WRAPPER_CHECK_EVERY_MS = 200;

/**
 * Under `npx marquee`, which names itself in MARQUEE_PARENT_PID: when that process is gone
 * (killed with SIGKILL, say, which it cannot pass on), this one gets SIGTERM from itself. Nothing
 * reports the death of a parent, but the kernel gives an orphan another one, which a check every
 * 200 ms sees. Commands that do not handle SIGTERM end at once; `serve` stops cleanly.
 */
export function stopWhenWrapperGone(): void {
  const wrapper = wrapperPid();
  if (wrapper === undefined) return;
  const check = () => {
    if (process.ppid === wrapper) return;
    clearInterval(timer);
    process.kill(process.pid, "SIGTERM");
  };
  const timer = setInterval(check, WRAPPER_CHECK_EVERY_MS);
  timer.unref();
  check();
}
