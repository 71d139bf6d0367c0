/**
 * Which SQLite errors mean "storage cannot take this now" rather than a bug: a lock held past the
 * busy timeout, a full disk, an I/O error, a file that became read-only or cannot be opened. Both
 * drivers (bun:sqlite, better-sqlite3) put SQLite's result code name on the error's `code`.
 * Callers answer these with their 503 and retry later (docs/api.md, Ticket handoffs); any other
 * error stays unexpected.
 */
const STORAGE_CODES = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|READONLY|CANTOPEN|PROTOCOL|PERM|NOLFS)(_|$)/;

export function isStorageFailure(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string" && STORAGE_CODES.test(code)) return true;
  // An error without a code (a driver that keeps only the message) is known by SQLite's wording.
  const message = String((err as { message?: unknown } | null)?.message ?? "");
  return /database is locked|database or disk is full|disk I\/O error|readonly database|unable to open database file/i.test(
    message,
  );
}

/** The error's own words for an operator or a test-mode caller: SQLite's message, never a stack. */
export function storageFailureCause(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown } | null;
  const message = String(e?.message ?? err);
  return typeof e?.code === "string" ? `${e.code}: ${message}` : message;
}
