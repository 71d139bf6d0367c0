/**
 * `marquee sync` yields the CPU to serving. A sync beside a loaded server on the same box competes
 * with it for the cores; at normal priority, or even at nice 19, the scheduler still gives the
 * sync slices of a few milliseconds while requests wait, which shows in the server's p99 (issue
 * 8). On Linux the sync therefore switches itself to SCHED_IDLE: it runs whenever a core would
 * otherwise idle (so alone on a machine it runs at full speed) and gives way at once to anything
 * else. Elsewhere, or when that call is unavailable, it lowers its nice value to 19 instead.
 *
 * Linux applies both per thread, and threads inherit them when created: call this before the
 * writer thread and SQLite's sorter threads exist, i.e. first thing in the command.
 */
import { setPriority } from "node:os";

export const SYNC_PRIORITIES = ["background", "normal"] as const;
export type SyncPriority = (typeof SYNC_PRIORITIES)[number];

/** What the process got: the scheduler's idle class, nice 19, or nothing (not permitted). */
export type Lowered = "idle" | "nice" | "unchanged";

const SCHED_IDLE = 5; // <linux/sched.h>

async function schedIdle(): Promise<boolean> {
  if (process.platform !== "linux" || typeof (globalThis as { Bun?: unknown }).Bun === "undefined") return false;
  const { dlopen, FFIType, ptr } = await import("bun:ffi");
  for (const libc of ["libc.so.6", "libc.so"]) {
    try {
      const lib = dlopen(libc, { sched_setscheduler: { args: [FFIType.i32, FFIType.i32, FFIType.ptr], returns: FFIType.i32 } });
      try {
        const param = new Int32Array(1); // struct sched_param { int sched_priority = 0 }
        return lib.symbols.sched_setscheduler(0, SCHED_IDLE, ptr(param)) === 0;
      } finally {
        lib.close();
      }
    } catch {
      // not this libc; try the next name
    }
  }
  return false;
}

/** Moves the calling thread (and the threads it creates from now on) out of serving's way. */
export async function enterBackground(): Promise<Lowered> {
  if (await schedIdle()) return "idle";
  try {
    setPriority(19);
    return "nice";
  } catch {
    return "unchanged";
  }
}
