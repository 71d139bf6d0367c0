/**
 * The REST trial of an account (spec "States and transitions", CONTRACT §6): started by the
 * first valid request, then 7 days and 1,000 delivered rows in total, whichever ends first.
 * Callers run these inside a ledger transaction where they read and write together.
 */
import { DAY_MS, TRIAL } from "./contract.ts";
import type { Db } from "./driver.ts";

export interface Trial {
  accountId: number;
  startedMs: number;
  rowsUsed: number;
  /** When the rows ran out; null while rows remain. */
  exhaustedMs: number | null;
}

export type TrialState = "active" | "expired" | "exhausted";

export const trialExpiresMs = (trial: Trial): number => trial.startedMs + TRIAL.days * DAY_MS;

/** Whichever end came first wins: rows used up before day 7 read as exhausted, else expired. */
export function trialState(trial: Trial, nowMs: number): TrialState {
  const expiresMs = trialExpiresMs(trial);
  if (trial.exhaustedMs !== null && trial.exhaustedMs < expiresMs) return "exhausted";
  return nowMs >= expiresMs ? "expired" : "active";
}

export function readTrial(db: Db, accountId: number): Trial | undefined {
  return db
    .prepare<Trial>(
      `SELECT account_id AS accountId, started_ms AS startedMs, rows_used AS rowsUsed, exhausted_ms AS exhaustedMs
       FROM trials WHERE account_id = $accountId`,
    )
    .get({ accountId });
}

/** Starts the trial unless it already started; returns the trial either way. */
export function startTrial(db: Db, accountId: number, nowMs: number): Trial {
  db.prepare("INSERT OR IGNORE INTO trials(account_id, started_ms) VALUES ($accountId, $now)").run({ accountId, now: nowMs });
  return readTrial(db, accountId)!;
}

/** Adds delivered rows; marks the moment the total reaches the trial's rows. */
export function addTrialRows(db: Db, accountId: number, rows: number, nowMs: number): void {
  db.prepare(
    `UPDATE trials SET rows_used = rows_used + $rows,
       exhausted_ms = CASE WHEN exhausted_ms IS NULL AND rows_used + $rows >= $total THEN $now ELSE exhausted_ms END
     WHERE account_id = $accountId`,
  ).run({ accountId, rows, now: nowMs, total: TRIAL.rows });
}
