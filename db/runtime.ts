/**
 * The one place that tells the runtimes apart. Marquee runs on Bun (`npx marquee`, the single
 * binary) and on Node (the Vitest suites, the bundled Node server); the SQLite adapter, the
 * sync writer thread, the scheduler priority and the sync's allocator setting all follow this.
 */
import type { FFIFunction, Library } from "bun:ffi";

export const onBun: boolean = typeof (globalThis as { Bun?: unknown }).Bun !== "undefined";

/**
 * Functions of the C library through Bun's FFI, loaded only when asked for: Linux on Bun only,
 * null anywhere else or when no C library by a known name loads.
 */
export async function libcFunctions<Fns extends Record<string, FFIFunction>>(
  fns: Fns,
): Promise<Library<Fns>["symbols"] | null> {
  if (!onBun || process.platform !== "linux") return null;
  const { dlopen } = await import("bun:ffi");
  for (const name of ["libc.so.6", "libc.so"]) {
    try {
      return dlopen(name, fns).symbols;
    } catch {
      // not this name; try the next
    }
  }
  return null;
}
