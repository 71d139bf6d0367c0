/**
 * How long freed memory is kept (docs/operations.md, "Memory and the allocator"). Bun's native
 * allocator (mimalloc) gives freed pages back to the kernel 10 ms after they are freed, and the
 * next allocation faults them in again, one page at a time; on a virtual machine each fault is
 * dear. A command may ask for another delay (`purgeDelayFor`):
 *
 * - a bulk sync keeps everything for its run ("-1"). It frees and allocates large buffers all the
 *   time (socket reads, SQLite's sorted runs and page cache); with the pages kept, the
 *   1,000,000-event PostgreSQL copy took less than half the faults and about 40 % less system
 *   time (docs/perf-history.md, "Round 13");
 * - a server on a Redis ledger keeps freed memory 100 ms, so what one turn of requests frees is
 *   there for the next; about 12 % more pages a second (docs/perf-history.md, "Round 14");
 * - a server on the SQLite ledger keeps it a second: new pages took under a third of the faults and
 *   about 10 % less CPU, at the same peak RSS over 10 s and more over minutes of new traffic
 *   (docs/perf-history.md, "Round 18");
 * - a test instance (`serve --test-mode`) starts as it is: it is there to start fast.
 *
 * The allocator reads its options from the environment once, as the process starts, so the
 * command starts itself again in place (execve: the same process id, arguments and open
 * descriptors) with `MIMALLOC_PURGE_DELAY` set, unless that variable is set already, which is
 * also how a user chooses otherwise. Linux and Bun only; anywhere else, or if the call fails, the
 * command runs as it is. The entry (server/main.ts) decides and restarts before it loads any
 * command's modules, so the restart costs a start of the runtime and no more.
 *
 * This module is loaded before that decision: it imports nothing of the program's own but the
 * runtime check.
 */
import { readFileSync } from "node:fs";
import { libcFunctions } from "../../db/runtime.ts";

export const ALLOCATOR_VARIABLE = "MIMALLOC_PURGE_DELAY";
/** Never give freed pages back while the command runs: they are reused, and all go at exit. */
export const KEEP_FREED_MEMORY = "-1";

/**
 * How long a server keeps freed memory (ms): on a Redis ledger, so what one turn of requests
 * frees is there for the next; on the SQLite ledger, where a new page frees and allocates far
 * more (its rows, its JSON), a second, so what one burst of requests frees serves the next
 * instead of being faulted in again.
 */
const SERVER_PURGE_DELAY = { redis: "100", sqlite: "1000" } as const;

/** `--ledger` given, or $MARQUEE_LEDGER set: the server will run on a Redis ledger. */
const namesRedisLedger = (argv: string[], env: NodeJS.ProcessEnv) =>
  argv.some((a) => a === "--ledger" || a.startsWith("--ledger=")) || Boolean(env.MARQUEE_LEDGER);

/**
 * The purge delay a command's run asks for, from its name, arguments and environment:
 * milliseconds, or KEEP_FREED_MEMORY; undefined for the allocator's default.
 */
export function purgeDelayFor(command: string, argv: string[], env: NodeJS.ProcessEnv): string | undefined {
  // A bulk command: it keeps the memory it frees for the run.
  if (command === "sync") return KEEP_FREED_MEMORY;
  if (command === "serve") {
    // A test instance serves a test suite's few requests, for which a second start of the runtime
    // (the restart, about 8 ms here) would cost more than the setting saves.
    if (argv.includes("--test-mode")) return undefined;
    return namesRedisLedger(argv, env) ? SERVER_PURGE_DELAY.redis : SERVER_PURGE_DELAY.sqlite;
  }
  return undefined;
}

/** The NUL-terminated pieces of /proc/self/cmdline, as bytes (an argument need not be UTF-8). */
function commandLine(): Buffer[] {
  const raw = readFileSync("/proc/self/cmdline");
  const args: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] === 0) {
      args.push(raw.subarray(start, i + 1));
      start = i + 1;
    }
  }
  return args;
}

/**
 * Restarts the process in place with the allocator's purge delay set to `delay` (milliseconds,
 * or KEEP_FREED_MEMORY), where it can; returns only when it does not (already set, not Linux on
 * Bun, or the restart failed).
 */
export async function restartWithPurgeDelay(delay: string): Promise<void> {
  if (process.env[ALLOCATOR_VARIABLE] !== undefined) return;
  const libc = await libcFunctions({ execve: { args: ["ptr", "ptr", "ptr"], returns: "i32" } } as const);
  if (!libc) return;
  let args: Buffer[];
  try {
    args = commandLine();
  } catch {
    return;
  }
  if (args.length === 0) return;
  const { ptr } = await import("bun:ffi");
  const env = Object.entries(process.env)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => Buffer.from(`${name}=${value}\0`));
  env.push(Buffer.from(`${ALLOCATOR_VARIABLE}=${delay}\0`));
  const pointers = (strings: Buffer[]) => {
    const array = new BigUint64Array(strings.length + 1); // NULL-terminated
    strings.forEach((s, i) => {
      array[i] = BigInt(ptr(s));
    });
    return array;
  };
  const path = Buffer.from("/proc/self/exe\0");
  const argv = pointers(args);
  const envp = pointers(env);
  // Returns only on failure (the process image is replaced otherwise); the command then runs as it is.
  libc.execve(ptr(path), ptr(argv), ptr(envp));
}
