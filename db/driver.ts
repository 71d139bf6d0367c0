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

type Opener = (path: string, options: OpenOptions) => Db;

/** The adapter of this runtime, loaded once when this module is (only Bun can load bun:sqlite). */
const opener: Opener = (onBun ? await import("./driver-bun.ts") : await import("./driver-node.ts")).open;

/** The driver of this runtime (loaded with this module; kept for start-up code that awaits it). */
export async function loadDriver(): Promise<Opener> {
  return opener;
}

/** Opens a database with WAL, a busy timeout and the given durability. */
export async function openDb(path: string, options: OpenOptions = {}): Promise<Db> {
  const open = await loadDriver();
  return open(path, options);
}

/** Synchronous open. */
export function openDbSync(path: string, options: OpenOptions = {}): Db {
  return opener(path, options);
}
