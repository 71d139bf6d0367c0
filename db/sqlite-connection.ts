/**
 * The `Db` interface and everything the two SQLite adapters share: the statement cache, the
 * transaction runner, pragma reads and the pragmas applied at open. An adapter (db/driver-bun.ts,
 * db/driver-node.ts) only opens its native connection and adapts a statement and a pragma read.
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
  /**
   * Statements this connection ran that may have written (every `exec`, every run of a statement
   * that is not a SELECT or PRAGMA): a cache asks whether this process wrote since it last looked
   * without a query.
   */
  readonly writes: number;
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
  /** `FULL` for the ledger, which cannot be rebuilt; `NORMAL` for the replica; `OFF` for a file whose content does not matter. */
  synchronous?: "NORMAL" | "FULL" | "OFF";
  /** `WAL` (the default) for the replica and the ledger; `DELETE`, a rollback journal, for the serving lock (db/serve-lock.ts). */
  journalMode?: "WAL" | "DELETE";
  busyTimeoutMs?: number;
  /**
   * Page size of a database this open creates; an existing file keeps its own (SQLite fixes it
   * when the first page is written, and WAL mode cannot change it).
   */
  pageBytes?: number;
}

/** What an adapter supplies: its native connection, reduced to what `Db` needs. */
export interface NativeConnection {
  exec(sql: string): void;
  /** A newly prepared statement with `Statement`'s behaviour (`get` of no row is undefined). */
  prepare(sql: string): Statement<Record<string, unknown>>;
  /** A reader of one pragma statement's single value (undefined when it returns no row). */
  preparePragma(sql: string): () => unknown;
  inTransaction(): boolean;
  close(): void;
}

/** Builds the `Db` over an adapter's connection and applies the shared pragmas. */
export function createDb(path: string, native: NativeConnection, options: OpenOptions): Db {
  const statements = new Map<string, Statement<Record<string, unknown>>>();
  // Pragma reads (data_version, synchronous) and transaction control run on every request:
  // prepared once here, not re-parsed per call.
  const pragmas = new Map<string, () => unknown>();
  const control = (sql: string) => {
    const s = native.prepare(sql);
    return () => void s.run();
  };
  let writes = 0;
  // A writing statement counts each run; a reading one is the native statement, untouched.
  const counted = (s: Statement<Record<string, unknown>>): Statement<Record<string, unknown>> => ({
    all(...p) {
      writes++;
      return s.all(...p);
    },
    get(...p) {
      writes++;
      return s.get(...p);
    },
    run(...p) {
      writes++;
      return s.run(...p);
    },
  });
  const db: Db = {
    path,
    get writes() {
      return writes;
    },
    exec: (sql) => {
      writes++;
      native.exec(sql);
    },
    prepare<Row>(sql: string): Statement<Row> {
      let stmt = statements.get(sql);
      if (!stmt) {
        stmt = native.prepare(sql);
        if (!READS_ONLY.test(sql)) stmt = counted(stmt);
        statements.set(sql, stmt);
      }
      // Rows are typed by the caller, who wrote the SQL.
      return stmt as unknown as Statement<Row>;
    },
    transaction: transactionRunner(control, native.inTransaction),
    pragma: (name) => {
      let read = pragmas.get(name);
      if (!read) {
        read = native.preparePragma(`PRAGMA ${name}`);
        pragmas.set(name, read);
      }
      return read();
    },
    close: () => native.close(),
  };
  applyPragmas(db, options);
  return db;
}

/** Statements that cannot write: the rest (WITH … too) count as writes. */
const READS_ONLY = /^\s*(SELECT|PRAGMA|EXPLAIN)\b/i;

/**
 * BEGIN IMMEDIATE … COMMIT around `fn`, ROLLBACK when it throws. `control` prepares a statement
 * once and returns a runner for it.
 */
function transactionRunner(control: (sql: string) => () => void, inTransaction: () => boolean) {
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

/** Pragmas applied right after opening. */
function applyPragmas(db: Db, options: OpenOptions): void {
  db.exec(`PRAGMA busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
  if (options.readonly) return;
  if (options.pageBytes !== undefined) db.exec(`PRAGMA page_size = ${options.pageBytes}`);
  db.exec(`PRAGMA journal_mode = ${options.journalMode ?? "WAL"}`);
  db.exec(`PRAGMA synchronous = ${options.synchronous ?? "NORMAL"}`);
  db.exec("PRAGMA foreign_keys = ON");
}
