/**
 * The storage seam: one small interface over bun:sqlite (Bun) and better-sqlite3 (Node).
 * The implementation is picked at run time; everything else in Marquee sees only `Db`.
 *
 * Binding rules that hold on both drivers: bind numbers, strings, bigints, null and
 * Uint8Array. Never bind booleans (better-sqlite3 rejects them): pass 0 or 1.
 * Named parameters are written `$name` in SQL and passed as `{ name }`.
 */
export type SqlValue = string | number | bigint | null | Uint8Array;
export type BindParams = SqlValue[] | [Record<string, SqlValue>];

export interface Statement<Row = Record<string, unknown>> {
  all(...params: BindParams): Row[];
  get(...params: BindParams): Row | undefined;
  run(...params: BindParams): { changes: number; lastInsertRowid: number | bigint };
}

export interface Db {
  readonly path: string;
  exec(sql: string): void;
  prepare<Row = Record<string, unknown>>(sql: string): Statement<Row>;
  /** Runs `fn` inside BEGIN IMMEDIATE … COMMIT; rolls back when it throws. */
  transaction<T>(fn: () => T): T;
  /** Single-value pragma read, e.g. `pragma("data_version")`. */
  pragma(name: string): unknown;
  close(): void;
}

export interface OpenOptions {
  readonly?: boolean;
  /** `FULL` for the ledger, which cannot be rebuilt; `NORMAL` for the replica. */
  synchronous?: "NORMAL" | "FULL";
  busyTimeoutMs?: number;
  /**
   * Page size of a database this open creates; an existing file keeps its own (SQLite fixes it
   * when the first page is written, and WAL mode cannot change it).
   */
  pageBytes?: number;
}

export type DriverName = "bun:sqlite" | "better-sqlite3";

export const runtimeDriver: DriverName =
  typeof (globalThis as { Bun?: unknown }).Bun !== "undefined" ? "bun:sqlite" : "better-sqlite3";

type Opener = (path: string, options: OpenOptions) => Db;
let opener: Opener | undefined;

/** Loads the driver of this runtime once. Called by `openDb`; exported for start-up code. */
export async function loadDriver(): Promise<Opener> {
  if (!opener) {
    const mod = runtimeDriver === "bun:sqlite" ? await import("./driver-bun.ts") : await import("./driver-node.ts");
    opener = mod.open;
  }
  return opener;
}

/** Opens a database with WAL, a busy timeout and the given durability. */
export async function openDb(path: string, options: OpenOptions = {}): Promise<Db> {
  const open = await loadDriver();
  return open(path, options);
}

/** Synchronous open; `loadDriver()` must have been awaited once before. */
export function openDbSync(path: string, options: OpenOptions = {}): Db {
  if (!opener) throw new Error("openDbSync before loadDriver()");
  return opener(path, options);
}

/**
 * `Db.transaction` for both adapters: BEGIN IMMEDIATE … COMMIT around `fn`, ROLLBACK when it
 * throws. `control` prepares a statement once and returns a runner for it.
 */
export function transactionRunner(control: (sql: string) => () => void, inTransaction: () => boolean) {
  const begin = control("BEGIN IMMEDIATE");
  const commit = control("COMMIT");
  const rollback = control("ROLLBACK");
  return <T>(fn: () => T): T => {
    begin();
    try {
      const out = fn();
      commit();
      return out;
    } catch (err) {
      if (inTransaction()) rollback();
      throw err;
    }
  };
}

/** Pragmas shared by both drivers, applied right after opening. */
export function applyPragmas(db: Db, options: OpenOptions): void {
  db.exec(`PRAGMA busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
  if (options.readonly) return;
  if (options.pageBytes !== undefined) db.exec(`PRAGMA page_size = ${options.pageBytes}`);
  db.exec("PRAGMA journal_mode = WAL");
  db.exec(`PRAGMA synchronous = ${options.synchronous ?? "NORMAL"}`);
  db.exec("PRAGMA foreign_keys = ON");
}
