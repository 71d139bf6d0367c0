/**
 * Delivered rows and rows reserved by requests in flight, per account (CONTRACT §6).
 *
 * Usage is a running total (`row_usage.total_rows`), so the rows delivered in any window
 * (from, now] are `latest total - total at the last delivery at or before from`: two index
 * lookups, exact to the millisecond. Callers run these inside one ledger transaction.
 */
import type { Db } from "./driver.ts";

export type Allowance = "trial" | "budget";

function latestTotal(db: Db, accountId: number): number {
  return (
    db
      .prepare<{ total: number }>(
        "SELECT total_rows AS total FROM row_usage WHERE account_id = $accountId ORDER BY total_rows DESC LIMIT 1",
      )
      .get({ accountId })?.total ?? 0
  );
}

function totalAt(db: Db, accountId: number, atMs: number): number {
  return (
    db
      .prepare<{ total: number }>(
        `SELECT total_rows AS total FROM row_usage WHERE account_id = $accountId AND at_ms <= $atMs
         ORDER BY at_ms DESC, total_rows DESC LIMIT 1`,
      )
      .get({ accountId, atMs })?.total ?? 0
  );
}

/** Rows delivered to the account in the window (nowMs - windowMs, nowMs]. */
export function readRowsDelivered(db: Db, accountId: number, windowMs: number, nowMs: number): number {
  return latestTotal(db, accountId) - totalAt(db, accountId, nowMs - windowMs);
}

/** Records a delivery of `rows` (> 0) and forgets deliveries that can no longer fall in a window. */
export function recordRowsDelivered(db: Db, accountId: number, rows: number, windowMs: number, nowMs: number): void {
  const total = latestTotal(db, accountId) + rows;
  db.prepare("INSERT INTO row_usage(account_id, total_rows, at_ms) VALUES ($accountId, $total, $now)").run({
    accountId,
    total,
    now: nowMs,
  });
  // The last delivery at or before the window's start is the baseline; older ones are dead weight.
  const baseline = totalAt(db, accountId, nowMs - windowMs);
  db.prepare("DELETE FROM row_usage WHERE account_id = $accountId AND total_rows < $baseline").run({ accountId, baseline });
}

/**
 * Milliseconds until fewer than `limit` rows fall in the rolling window, i.e. until enough
 * deliveries age out; 0 when that is already so.
 */
export function msUntilRowsBelow(db: Db, accountId: number, limit: number, windowMs: number, nowMs: number): number {
  const latest = latestTotal(db, accountId);
  // The window must come to exclude the first delivery that pushed the total past latest - limit.
  const first = db
    .prepare<{ atMs: number }>(
      "SELECT at_ms AS atMs FROM row_usage WHERE account_id = $accountId AND total_rows > $floor ORDER BY total_rows LIMIT 1",
    )
    .get({ accountId, floor: latest - limit });
  if (!first) return 0;
  return Math.max(0, first.atMs + windowMs - nowMs);
}

// ---- reservations ---------------------------------------------------------------------------

/** Rows held by unexpired reservations of the account for the allowance. */
export function readReservedRows(db: Db, accountId: number, allowance: Allowance, nowMs: number): number {
  return (
    db
      .prepare<{ rows: number }>(
        `SELECT coalesce(sum(rows), 0) AS rows FROM row_reservations
         WHERE account_id = $accountId AND allowance = $allowance AND expires_ms > $now`,
      )
      .get({ accountId, allowance, now: nowMs })?.rows ?? 0
  );
}

export function createReservation(db: Db, accountId: number, allowance: Allowance, rows: number, expiresMs: number): number {
  const { lastInsertRowid } = db
    .prepare(
      "INSERT INTO row_reservations(account_id, allowance, rows, expires_ms) VALUES ($accountId, $allowance, $rows, $expiresMs)",
    )
    .run({ accountId, allowance, rows, expiresMs });
  return Number(lastInsertRowid);
}

/** Deletes the reservation; true when it was still live (not expired, not already gone). */
export function releaseReservation(db: Db, id: number, nowMs: number): boolean {
  const row = db.prepare<{ expiresMs: number }>("SELECT expires_ms AS expiresMs FROM row_reservations WHERE id = $id").get({ id });
  if (!row) return false;
  db.prepare("DELETE FROM row_reservations WHERE id = $id").run({ id });
  return row.expiresMs > nowMs;
}

/** Removes the account's expired reservations (they no longer hold anything). */
export function dropExpiredReservations(db: Db, accountId: number, nowMs: number): void {
  db.prepare("DELETE FROM row_reservations WHERE account_id = $accountId AND expires_ms <= $now").run({ accountId, now: nowMs });
}
