/**
 * Which SQLite errors mean "storage cannot take this now" rather than a bug: a lock held past the
 * busy timeout, a full disk, an I/O error, a file that became read-only or cannot be opened. Both
 * drivers (bun:sqlite, better-sqlite3) put SQLite's result code name on the error's `code`.
 * Callers answer these with their 503 and retry later (docs/api.md, Ticket handoffs); any other
 * error stays unexpected.
 */
const STORAGE_CODES = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|READONLY|CANTOPEN|PROTOCOL|PERM|NOLFS)(_|$)/;
const STORAGE_MESSAGES =
  /database is locked|database or disk is full|disk I\/O error|readonly database|unable to open database file/i;
const BUSY_CODES = /^SQLITE_(BUSY|LOCKED)/;
const BUSY_MESSAGES = /database is locked/i;

/** The error's SQLite result code name and message, as either driver gives them. */
function sqliteError(err: unknown): { code: string; message: string } {
  const e = err as { code?: unknown; message?: unknown } | null;
  return { code: typeof e?.code === "string" ? e.code : "", message: String(e?.message ?? "") };
}

/** Any failure of storage to take a write now. An error without a code is known by SQLite's wording. */
export function isStorageFailure(err: unknown): boolean {
  const { code, message } = sqliteError(err);
  return STORAGE_CODES.test(code) || STORAGE_MESSAGES.test(message);
}

/** SQLITE_BUSY / SQLITE_LOCKED: a lock held past the busy timeout, so the write could not happen in time. */
export function isLedgerBusy(err: unknown): boolean {
  const { code, message } = sqliteError(err);
  return BUSY_CODES.test(code) || BUSY_MESSAGES.test(message);
}

/** The error's own words for an operator or a test-mode caller: SQLite's message, never a stack. */
export function storageFailureCause(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown } | null;
  const message = String(e?.message ?? err);
  return typeof e?.code === "string" ? `${e.code}: ${message}` : message;
}
