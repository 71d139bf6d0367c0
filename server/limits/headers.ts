/** Response headers of the access stages (docs/api.md, Headers), named once for every writer and reader. */
import { RATE, TRIAL } from "../../db/contract.ts";
import { isoUtc } from "../../db/instant.ts";

export const H = {
  rateLimit: "X-RateLimit-Limit",
  rateRemaining: "X-RateLimit-Remaining",
  rateReset: "X-RateLimit-Reset",
  retryAfter: "Retry-After",
  budgetLimit: "X-RowBudget-Limit",
  budgetRemaining: "X-RowBudget-Remaining",
  access: "X-DataApi-Access",
  trialLimit: "X-Trial-RowBudget-Limit",
  trialRemaining: "X-Trial-RowBudget-Remaining",
  trialExpiresAt: "X-Trial-Expires-At",
} as const;

/** 401, 402 and 500 report the published limit whatever the account's bucket (docs/api.md). */
export const PUBLISHED_RATE_LIMIT = { [H.rateLimit]: String(RATE.publishedLimit) };

export const seconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

const TRIAL_ROWS = String(TRIAL.rows);

/** X-DataApi-Access and X-Trial-*; Expires-At only once the trial clock runs. */
export function trialHeaders(remaining: number, expiresMs: number | null): Record<string, string> {
  const headers: Record<string, string> = {
    [H.access]: "trial",
    [H.trialLimit]: TRIAL_ROWS,
    [H.trialRemaining]: String(Math.max(0, remaining)),
  };
  if (expiresMs !== null) headers[H.trialExpiresAt] = isoUtc(expiresMs);
  return headers;
}

export function budgetHeaders(limit: number, remaining: number): Record<string, string> {
  return { [H.budgetLimit]: String(limit), [H.budgetRemaining]: String(Math.max(0, remaining)) };
}
