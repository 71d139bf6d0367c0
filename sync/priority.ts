/**
 * `marquee sync` yields the CPU to serving. A sync beside a loaded server on the same box competes
 * with it for the cores; at normal priority, or even at nice 19, the scheduler still gives the
 * sync slices of a few milliseconds while requests wait, which shows in the server's p99. On
 * Linux the sync therefore moves itself to SCHED_IDLE: it runs whenever a core would otherwise
 * idle (so alone on a machine it runs at full speed) and gives way at once to anything else.
 * Elsewhere, or when that call is unavailable, it lowers its nice value to 19 instead.
 *
 * Linux applies both per thread. Threads inherit them when they are created, but the runtime
 * starts some of its own (I/O pool, collector) with settings of their own, and not all of them
 * exist yet when the command starts: `sweep()` moves every thread not yet moved, so the command
 * calls it first thing and again as it goes.
 */
import { readdirSync } from "node:fs";
import { setPriority } from "node:os";
import { libcFunctions } from "../db/runtime.ts";

export const SYNC_PRIORITIES = ["background", "normal"] as const;

/** What the process got: the scheduler's idle class, nice 19, or nothing (not permitted). */
export type Lowered = "idle" | "nice" | "unchanged";

export interface Background {
  lowered: Lowered;
  /** Moves threads started since the last sweep the same way. */
  sweep(): void;
}

const SCHED_IDLE = 5; // <linux/sched.h>

/** The process's threads by id (Linux); just the process itself elsewhere. */
function threadIds(): number[] {
  try {
    return readdirSync("/proc/self/task").map(Number);
  } catch {
    return [process.pid];
  }
}

/** A function that moves one thread (0: the calling one) to SCHED_IDLE, or null where it cannot. */
async function schedIdle(): Promise<((tid: number) => boolean) | null> {
  const libc = await libcFunctions({ sched_setscheduler: { args: ["i32", "i32", "ptr"], returns: "i32" } } as const);
  if (!libc) return null;
  const { ptr } = await import("bun:ffi");
  const param = new Int32Array(1); // struct sched_param { int sched_priority = 0 }
  return (tid) => libc.sched_setscheduler(tid, SCHED_IDLE, ptr(param)) === 0;
}

function nice19(tid: number): boolean {
  try {
    setPriority(tid, 19);
    return true;
  } catch {
    return false; // not permitted, or a thread that ended meanwhile
  }
}

/** Moves the process (the calling thread first) out of serving's way. */
export async function enterBackground(): Promise<Background> {
  const idle = await schedIdle();
  let move: (tid: number) => boolean = nice19;
  let lowered: Lowered = "nice";
  if (idle?.(0)) {
    move = idle;
    lowered = "idle";
  } else if (!nice19(0)) {
    return { lowered: "unchanged", sweep() {} };
  }
  const moved = new Set<number>();
  const sweep = () => {
    for (const tid of threadIds()) if (!moved.has(tid) && move(tid)) moved.add(tid);
  };
  sweep();
  return { lowered, sweep };
}
