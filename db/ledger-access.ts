/**
 * Ledger tables for access (versions 10–19): trials, delivered-row usage, rate buckets, and the
 * access epoch that tells the serving process when the CLI changed keys or accounts.
 *
 * The serving process decides limits from memory and writes trials, usage and buckets here
 * behind the requests (server/limits/meter.ts), so a restart resumes them (docs/api.md, Plans and access: trial
 * totals and row budgets are per account across keys and interfaces).
 */
import type { Db } from "./driver.ts";
import type { Migration } from "./migrate.ts";

/** Bumps the epoch; one trigger per table and statement kind (SQLite has no multi-event trigger). */
const epochTriggers = ["accounts", "api_keys"]
  .flatMap((table) =>
    ["INSERT", "UPDATE", "DELETE"].map(
      (op) => `
CREATE TRIGGER ${table}_${op.toLowerCase()}_epoch AFTER ${op} ON ${table}
BEGIN
  UPDATE settings SET value = CAST(value AS INTEGER) + 1 WHERE key = 'access_epoch';
END;`,
    ),
  )
  .join("\n");

export const ACCESS_MIGRATIONS: Migration[] = [
  {
    version: 10,
    sql: `
-- One trial per account, started by the first valid request (docs/api.md, Trials).
CREATE TABLE trials (
  account_id INTEGER PRIMARY KEY REFERENCES accounts(id),
  started_ms INTEGER NOT NULL,
  rows_used INTEGER NOT NULL DEFAULT 0,
  exhausted_ms INTEGER               -- when rows_used reached the trial total; NULL before
);

-- Rows promised to requests in flight (docs/api.md, Plans and access: reserved before the query, settled after).
CREATE TABLE row_reservations (
  id INTEGER PRIMARY KEY,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  allowance TEXT NOT NULL,           -- trial | budget
  rows INTEGER NOT NULL,
  expires_ms INTEGER NOT NULL
);
CREATE INDEX row_reservations_live ON row_reservations(account_id, allowance, expires_ms, rows);

-- Delivered rows as a running total per account: the rows inside any window are the difference
-- of two index lookups, so an exact rolling 24 hours costs O(log n) however busy the account is.
CREATE TABLE row_usage (
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  total_rows INTEGER NOT NULL,       -- running total after this delivery
  at_ms INTEGER NOT NULL,
  PRIMARY KEY (account_id, total_rows)
) WITHOUT ROWID;
CREATE INDEX row_usage_time ON row_usage(account_id, at_ms, total_rows);

-- Token buckets (docs/api.md, Plans and access). A missing row is a full bucket.
CREATE TABLE rate_buckets (
  bucket TEXT PRIMARY KEY,           -- 'key:<id>' or 'account:<id>'
  tokens REAL NOT NULL,
  updated_ms INTEGER NOT NULL
) WITHOUT ROWID;

-- Changes whenever a key or an account changes, from any connection, so per-process caches
-- can be checked with one cheap read per request (revocations take effect at once).
INSERT OR IGNORE INTO settings(key, value) VALUES ('access_epoch', '0');
${epochTriggers}
`,
  },
  {
    // Reservations describe requests in flight in the serving process, which keeps them in
    // memory (server/limits/meter.ts): a process that is gone holds nothing.
    version: 11,
    sql: "DROP TABLE row_reservations;",
  },
];

/** The access epoch (see migration 10); it changes whenever a key or an account does. */
export function readAccessEpoch(db: Db): string {
  return db.prepare<{ value: string }>("SELECT value FROM settings WHERE key = 'access_epoch'").get()?.value ?? "";
}
