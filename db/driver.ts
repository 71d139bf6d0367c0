/**
 * The storage seam: one small interface over bun:sqlite (Bun) and better-sqlite3 (Node).
 * The adapter of this runtime is loaded at run time; everything else in Marquee sees only `Db`
 * (declared with what both adapters share in db/sqlite-connection.ts).
 */
import { onBun } from "./runtime.ts";
import type { Db, OpenOptions } from "./sqlite-connection.ts";

export type { BindParams, Db, OpenOptions, SqlValue, Statement } from "./sqlite-connection.ts";

export type DriverName = "bun:sqlite" | "better-sqlite3";

export const runtimeDriver: DriverName = onBun ? "bun:sqlite" : "better-sqlite3";

/**
 * The adapter of this runtime, loading from the moment this module is (only Bun can load
 * bun:sqlite). Not awaited at the top level: a worker thread that imports this module must set
 * its message handler before anything is awaited.
 */
const adapter: Promise<{ open: (path: string, options: OpenOptions) => Db }> = onBun
  ? import("./driver-bun.ts")
  : import("./driver-node.ts");

/** Opens a database with WAL (unless asked for another journal), a busy timeout and the given durability. */
export async function openDb(path: string, options: OpenOptions = {}): Promise<Db> {
  return (await adapter).open(path, options);
}
