/**
 * The REST trial of an account (docs/api.md, Trials): started by the
 * first valid request, then 7 days and 1,000 delivered rows in total, whichever ends first.
 * The serving process keeps trials in memory and writes them here (server/limits/meter.ts).
 */
import { DAY_MS, TRIAL } from "./contract.ts";
import type { Db } from "./driver.ts";
import { writeRows } from "./multi-row-write.ts";

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

/** A trial that starts now. */
export const newTrial = (accountId: number, nowMs: number): Trial => ({
  accountId,
  startedMs: nowMs,
  rowsUsed: 0,
  exhaustedMs: null,
});

/** The trial after `rows` more delivered rows; marks the moment the total reaches the trial's rows. */
export function withRowsAdded(trial: Trial, rows: number, nowMs: number): Trial {
  const rowsUsed = trial.rowsUsed + rows;
  const exhaustedMs = trial.exhaustedMs ?? (rowsUsed >= TRIAL.rows ? nowMs : null);
  return { ...trial, rowsUsed, exhaustedMs };
}

/** Writes many trials at once (the meter's group). */
export function writeTrials(db: Db, trials: readonly Trial[]): void {
  writeRows(
    db,
    (values) => `INSERT INTO trials(account_id, started_ms, rows_used, exhausted_ms) VALUES ${values}
      ON CONFLICT(account_id) DO UPDATE SET
        started_ms = excluded.started_ms, rows_used = excluded.rows_used, exhausted_ms = excluded.exhausted_ms`,
    trials.map((t) => [t.accountId, t.startedMs, t.rowsUsed, t.exhaustedMs]),
  );
}
