/**
 * Delivered rows per account (docs/api.md, Plans and access: an exact rolling 24 hours).
 *
 * Usage is a running total, so the rows delivered in any window (from, now] are
 * `latest total - total at the last delivery at or before from`. The ledger keeps it as rows of
 * `row_usage` (two index lookups); the serving process keeps the same log in memory for the
 * row-budgeted accounts it serves (server/limits/meter.ts) and appends to the ledger behind the
 * requests.
 */
import type { Db } from "./driver.ts";
import { writeRows } from "./multi-row-write.ts";

export type Allowance = "trial" | "budget";

/** One delivery: the running total after it, and when. Totals and times only grow. */
export interface UsageEntry {
  totalRows: number;
  atMs: number;
}

export function readLatestTotal(db: Db, accountId: number): number {
  return (
    db
      .prepare<{ total: number }>(
        "SELECT total_rows AS total FROM row_usage WHERE account_id = $accountId ORDER BY total_rows DESC LIMIT 1",
      )
      .get({ accountId })?.total ?? 0
  );
}

/** The account's log as the ledger holds it: the window's deliveries and the one before. */
export function readUsageLog(db: Db, accountId: number): UsageEntry[] {
  return db
    .prepare<UsageEntry>(
      "SELECT total_rows AS totalRows, at_ms AS atMs FROM row_usage WHERE account_id = $accountId ORDER BY total_rows",
    )
    .all({ accountId });
}

/** Appends deliveries (ascending per account), for any number of accounts at once. */
export function appendUsage(
  db: Db,
  deliveries: ReadonlyArray<readonly [accountId: number, entries: readonly UsageEntry[]]>,
): void {
  writeRows(
    db,
    (values) => `INSERT INTO row_usage(account_id, total_rows, at_ms) VALUES ${values}`,
    deliveries.flatMap(([accountId, entries]) => entries.map((e) => [accountId, e.totalRows, e.atMs])),
  );
}

/**
 * Forgets deliveries that can no longer fall in a window ending at `nowMs` or later: the last
 * one at or before the window's start is the baseline. Older rows change no answer, so this
 * may run seldom.
 */
export function pruneUsage(db: Db, accountId: number, windowMs: number, nowMs: number): void {
  const from = nowMs - windowMs;
  const baseline =
    db
      .prepare<{ total: number }>(
        `SELECT total_rows AS total FROM row_usage WHERE account_id = $accountId AND at_ms <= $from
         ORDER BY at_ms DESC, total_rows DESC LIMIT 1`,
      )
      .get({ accountId, from })?.total ?? 0;
  db.prepare("DELETE FROM row_usage WHERE account_id = $accountId AND total_rows < $baseline").run({
    accountId,
    baseline,
  });
}

// ---- the same log in memory -----------------------------------------------------------------

/** Total after the last delivery at or before `atMs`; 0 before the first. */
function totalAt(log: readonly UsageEntry[], atMs: number): number {
  let lo = 0;
  let hi = log.length; // first entry after atMs
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (log[mid].atMs <= atMs) lo = mid + 1;
    else hi = mid;
  }
  return lo === 0 ? 0 : log[lo - 1].totalRows;
}

export const latestTotal = (log: readonly UsageEntry[]): number => log.at(-1)?.totalRows ?? 0;

/** Rows delivered in the window (nowMs - windowMs, nowMs]. */
export function rowsDelivered(log: readonly UsageEntry[], windowMs: number, nowMs: number): number {
  return latestTotal(log) - totalAt(log, nowMs - windowMs);
}

/** Appends a delivery of `rows` (> 0) at `nowMs` and drops entries older than the baseline. */
export function logDelivery(log: UsageEntry[], rows: number, windowMs: number, nowMs: number): void {
  const last = log.at(-1);
  // Deliveries in the same millisecond are one entry: nothing can tell them apart.
  if (last && last.atMs === nowMs) last.totalRows += rows;
  else log.push({ totalRows: latestTotal(log) + rows, atMs: nowMs });
  const from = nowMs - windowMs;
  let baseline = 0;
  while (baseline + 1 < log.length && log[baseline + 1].atMs <= from) baseline++;
  if (baseline > 0) log.splice(0, baseline);
}

/**
 * Milliseconds until fewer than `limit` rows fall in the rolling window, i.e. until enough
 * deliveries age out; 0 when that is already so.
 */
export function msUntilRowsBelow(log: readonly UsageEntry[], limit: number, windowMs: number, nowMs: number): number {
  const floor = latestTotal(log) - limit;
  // The window must come to exclude the first delivery that pushed the total past latest - limit.
  const first = log.find((e) => e.totalRows > floor);
  return first ? Math.max(0, first.atMs + windowMs - nowMs) : 0;
}
