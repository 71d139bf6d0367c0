/**
 * Bulk commands keep the memory they free (docs/operations.md, "Sync and memory"). Bun's native
 * allocator (mimalloc) gives freed pages back to the kernel 10 ms after they are freed, and the
 * next allocation faults them in again, one page at a time. A bulk sync frees and allocates
 * large buffers all the time (socket reads, SQLite's sorted runs and page cache), and on a
 * virtual machine each fault is dear. With the pages kept for the run, the 1,000,000-event
 * PostgreSQL copy took less than half the faults and about 40 % less system time
 * (test/bench/RESULTS.md, "Round 13").
 *
 * The allocator reads its options from the environment once, as the process starts, so the
 * command starts itself again in place (execve: the same process id, arguments and open
 * descriptors) with `MIMALLOC_PURGE_DELAY=-1`, unless that variable is set already, which is also
 * how a user chooses otherwise. Linux and Bun only; anywhere else, or if the call fails, the
 * command runs as it is.
 */
import { readFileSync } from "node:fs";
import { libcFunctions } from "../../db/runtime.ts";

export const ALLOCATOR_VARIABLE = "MIMALLOC_PURGE_DELAY";
/** Never give freed pages back while the command runs: they are reused, and all go at exit. */
const KEEP = "-1";

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
 * Restarts the process in place with the allocator keeping freed memory, where it can; returns
 * only when it does not (already set, not Linux on Bun, or the restart failed).
 */
export async function keepFreedMemory(): Promise<void> {
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
  env.push(Buffer.from(`${ALLOCATOR_VARIABLE}=${KEEP}\0`));
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
