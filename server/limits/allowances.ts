/**
 * Row allowances (docs/api.md, Plans and access): the trial's 1,000 rows in total and a plan's rolling 24-hour
 * row budget. Both follow one protocol over the process's meter (server/limits/meter.ts):
 *
 *   check   (stage 3, with the request rate) refuse when nothing is left to reserve;
 *   reserve (ListAccess.open, after validation) clamp the page to the unreserved remainder and
 *           hold those rows for ACCESS.reservationTtlMs; the trial starts here;
 *   settle  (ListAccess.settle) release the hold and count what was delivered.
 *
 * Concurrency therefore never lets delivered rows exceed the allowance: every request reserves
 * before it selects rows, and reserving is synchronous. Reservations expire, so a request that
 * never settles frees its rows after 30 seconds. Empty pages cost nothing; repeated rows count again.
 */
import { ACCESS, TRIAL } from "../../db/contract.ts";
import type { Allowance } from "../../db/row-usage.ts";
import { trialExpiresMs, trialState } from "../../db/trials.ts";
import { ApiError } from "../errors.ts";
import { budgetHeaders, H, PUBLISHED_RATE_LIMIT, seconds, trialHeaders } from "./headers.ts";
import type { Meter } from "./meter.ts";

export interface Hold {
  rows: number;
  reservationId: number;
}

export interface RowAllowance {
  readonly kind: Allowance;
  /** The refusal when nothing is left to reserve, else null. Also refreshes `headers`. */
  check(meter: Meter, nowMs: number): ApiError | null;
  /** A hold of at most `requested` rows, or the refusal. */
  reserve(meter: Meter, requested: number, nowMs: number): Hold | ApiError;
  /** Releases the hold and counts `delivered`; false when the hold had expired meanwhile. */
  settle(meter: Meter, hold: Hold, delivered: number, nowMs: number): boolean;
  /** Headers describing the allowance after the last step. */
  headers: Record<string, string>;
}

/** Every account's delivered rows are recorded, so a budget set later counts the last 24 hours. */
export function recordDelivery(meter: Meter, accountId: number, rows: number, nowMs: number): void {
  if (rows > 0) meter.recordDelivery(accountId, rows, ACCESS.rowBudgetWindowMs, nowMs);
}

function hold(meter: Meter, accountId: number, kind: Allowance, rows: number, nowMs: number): Hold {
  return { rows, reservationId: meter.reserve(accountId, kind, rows, nowMs + ACCESS.reservationTtlMs) };
}

export function trialAllowance(accountId: number): RowAllowance {
  const self: RowAllowance = {
    kind: "trial",
    headers: {},
    check(meter, nowMs) {
      const trial = meter.readTrial(accountId);
      const used = trial?.rowsUsed ?? 0;
      const reserved = meter.reservedRows(accountId, "trial", nowMs);
      self.headers = trialHeaders(TRIAL.rows - used - reserved, trial ? trialExpiresMs(trial) : null);
      return refusal(used, reserved);
    },
    reserve(meter, requested, nowMs) {
      const trial = meter.startTrial(accountId, nowMs);
      const reserved = meter.reservedRows(accountId, "trial", nowMs);
      const remaining = TRIAL.rows - trial.rowsUsed - reserved;
      const rows = Math.min(requested, TRIAL.maxRowsPerPage, remaining);
      self.headers = trialHeaders(remaining - Math.max(0, rows), trialExpiresMs(trial));
      // Day 7 may have struck since stage 2 looked.
      if (trialState(trial, nowMs) === "expired") return trialEnded("expired", self.headers);
      return rows > 0 ? hold(meter, accountId, "trial", rows, nowMs) : refusal(trial.rowsUsed, reserved)!;
    },
    settle(meter, h, delivered, nowMs) {
      const live = meter.release(h.reservationId, nowMs);
      const rows = live ? Math.min(delivered, h.rows) : 0;
      if (rows > 0) {
        meter.addTrialRows(accountId, rows, nowMs);
        recordDelivery(meter, accountId, rows, nowMs);
      }
      self.check(meter, nowMs);
      return live;
    },
  };
  function refusal(used: number, reserved: number): ApiError | null {
    if (TRIAL.rows - used - reserved > 0) return null;
    const headers = { ...self.headers };
    return reserved > 0 && used < TRIAL.rows ? trialCapacityReserved(headers) : trialEnded("exhausted", headers);
  }
  return self;
}

/** 429 while requests in flight hold the trial's remaining rows: not exhaustion, so soon again. */
export function trialCapacityReserved(trialHeaders: Record<string, string>): ApiError {
  return new ApiError(
    "trial_capacity_reserved",
    "Requests in flight hold the remaining trial rows. This is not exhaustion; retry after the delay in Retry-After.",
    { headers: { ...trialHeaders, [H.retryAfter]: String(TRIAL.capacityRetryAfterS) } },
  );
}

/** 429 when the rolling 24-hour budget holds nothing more, with its X-RowBudget-* and no request-rate counters. */
export function budgetExhausted(budgetHeaders: Record<string, string>, retryAfterS: number): ApiError {
  return new ApiError(
    "row_budget_exhausted",
    "The 24-hour rolling row budget is spent. Retry after the delay in Retry-After, when delivered rows age out.",
    { headers: { ...budgetHeaders, [H.retryAfter]: String(retryAfterS) } },
  );
}

/** 402 for a trial that has ended; like every 402 it reports the published rate limit. */
export function trialEnded(state: "expired" | "exhausted", trialHeaders: Record<string, string>): ApiError {
  const headers = { ...PUBLISHED_RATE_LIMIT, ...trialHeaders };
  return state === "expired"
    ? new ApiError("trial_expired", "The 7-day trial has ended. Subscribe to continue with the same key.", { headers })
    : new ApiError("trial_exhausted", "The 1,000 trial rows are used. Subscribe to continue with the same key.", {
        headers,
      });
}

export function budgetAllowance(accountId: number, limit: number): RowAllowance {
  const window = ACCESS.rowBudgetWindowMs;
  const self: RowAllowance = {
    kind: "budget",
    headers: {},
    check(meter, nowMs) {
      const { used, reserved } = readBudget(meter, nowMs);
      return refusal(meter, used, reserved, nowMs);
    },
    reserve(meter, requested, nowMs) {
      const { used, reserved, remaining } = readBudget(meter, nowMs);
      if (remaining <= 0) return refusal(meter, used, reserved, nowMs)!;
      const rows = Math.min(requested, remaining);
      self.headers = budgetHeaders(limit, remaining - rows);
      return hold(meter, accountId, "budget", rows, nowMs);
    },
    settle(meter, h, delivered, nowMs) {
      // An expired hold still counts what was delivered: the budget is exact, the hold was advisory.
      const live = meter.release(h.reservationId, nowMs);
      recordDelivery(meter, accountId, Math.min(delivered, h.rows), nowMs);
      self.check(meter, nowMs);
      return live;
    },
  };
  function readBudget(meter: Meter, nowMs: number) {
    const used = meter.rowsDelivered(accountId, window, nowMs);
    const reserved = meter.reservedRows(accountId, "budget", nowMs);
    const remaining = limit - used - reserved;
    self.headers = budgetHeaders(limit, remaining);
    return { used, reserved, remaining };
  }
  function refusal(meter: Meter, used: number, reserved: number, nowMs: number): ApiError | null {
    if (limit - used - reserved > 0) return null;
    // Spent: Retry-After is when enough delivered rows age out. Held by requests in flight: soon.
    const retryAfterS =
      used >= limit ? seconds(meter.msUntilRowsBelow(accountId, limit, window, nowMs)) : ACCESS.budgetHeldRetryAfterS;
    return budgetExhausted(self.headers, retryAfterS);
  }
  return self;
}
