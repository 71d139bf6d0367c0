/**
 * The trial's rows and a plan's rolling row budget (docs/api.md, Trials), judged from the counters'
 * numbers: their headers and refusals.
 */
import { ACCESS, TRIAL } from "../../db/contract.ts";
import { trialExpiresMs } from "../../db/trials.ts";
import { ApiError } from "../errors.ts";
import type { AllowanceState, MeteredSpec } from "./counters.ts";
import { budgetHeaders, H, PUBLISHED_RATE_LIMIT, seconds, trialHeaders } from "./headers.ts";

/** The rows of the allowance neither delivered nor held. */
export const rowsLeft = (allowance: MeteredSpec, s: AllowanceState) =>
  allowance.kind === "budget"
    ? allowance.limit - s.used - s.reserved
    : TRIAL.rows - (s.trial?.rowsUsed ?? 0) - s.reserved;

/** The allowance's headers with `spent` more rows than the state counts (this request's own). */
export function allowanceHeaders(allowance: MeteredSpec, s: AllowanceState, spent = 0): Record<string, string> {
  const remaining = rowsLeft(allowance, s) - spent;
  if (allowance.kind === "budget") return budgetHeaders(allowance.limit, remaining);
  return trialHeaders(remaining, s.trial ? trialExpiresMs(s.trial) : null);
}

/** The refusal when nothing is left to reserve, else null; `headers` as the state describes it. */
export function allowanceRefusal(allowance: MeteredSpec, s: AllowanceState, headers: Record<string, string>) {
  if (rowsLeft(allowance, s) > 0) return null;
  if (allowance.kind === "trial") {
    const used = s.trial?.rowsUsed ?? 0;
    return s.reserved > 0 && used < TRIAL.rows ? trialCapacityReserved(headers) : trialEnded("exhausted", headers);
  }
  // Spent: Retry-After is when enough delivered rows age out. Held by requests in flight: soon.
  const retryAfterS = s.used >= allowance.limit ? seconds(s.msUntilBelow) : ACCESS.budgetHeldRetryAfterS;
  return budgetExhausted(headers, retryAfterS);
}

const MESSAGES = {
  account_not_provisioned:
    "This account has no usable access policy. This is permanent: retrying will not clear it; contact support.",
  subscription_required: "This account has no active developer plan. Subscribe to continue.",
  email_verification_required: "Verify the account's email address to start the trial.",
  trial_capacity_reserved:
    "Requests in flight hold the remaining trial rows. This is not exhaustion; retry after the delay in Retry-After.",
  row_budget_exhausted:
    "The 24-hour rolling row budget is spent. Retry after the delay in Retry-After, when delivered rows age out.",
  trial_expired: "The 7-day trial has ended. Subscribe to continue with the same key.",
  trial_exhausted: "The 1,000 trial rows are used. Subscribe to continue with the same key.",
};

/** An allowance's or a plan's refusal with its message (server/limits/grant.ts builds the plan's). */
export const refusal = (code: keyof typeof MESSAGES, headers?: Record<string, string>) =>
  new ApiError(code, MESSAGES[code], { headers });

/** 429 while requests in flight hold the trial's last rows: not exhaustion, soon again; no request-rate counters. */
export const trialCapacityReserved = (trialHeaders: Record<string, string>): ApiError =>
  refusal("trial_capacity_reserved", { ...trialHeaders, [H.retryAfter]: String(TRIAL.capacityRetryAfterS) });

/** 429 when the rolling 24-hour budget holds nothing more; like the trial's, no request-rate counters. */
export const budgetExhausted = (budgetHeaders: Record<string, string>, retryAfterS: number): ApiError =>
  refusal("row_budget_exhausted", { ...budgetHeaders, [H.retryAfter]: String(retryAfterS) });

/** 402 for a trial that has ended; like every 402 it reports the published rate limit. */
export const trialEnded = (state: "expired" | "exhausted", trialHeaders: Record<string, string>): ApiError =>
  refusal(`trial_${state}`, { ...PUBLISHED_RATE_LIMIT, ...trialHeaders });
