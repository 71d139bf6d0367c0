/**
 * The 503s of the list endpoint (spec "Errors"): each carries Retry-After and never delivers
 * rows. Ledger work on the request path goes through `withLedger`, so a real failure (a write
 * lock held past the busy timeout, a broken file) answers with the stage's 503 code instead of
 * hanging or leaking a 500 with a stack.
 */
import { UNAVAILABLE_RETRY_AFTER_S } from "../../db/contract.ts";
import { ApiError, isApiError } from "../errors.ts";

export type UnavailableCode = keyof typeof UNAVAILABLE_RETRY_AFTER_S;

const MESSAGES: Record<UnavailableCode, string> = {
  policy_unavailable: "The account policy could not be read. Retry after the delay in Retry-After.",
  rate_limit_unavailable:
    "The limiter could not confirm admission. This is not a quota verdict; retry after the delay in Retry-After.",
  trial_unavailable: "The trial allowance could not be verified. No data was returned; retry after the delay in Retry-After.",
};

export function unavailable(code: UnavailableCode): ApiError {
  return new ApiError(code, MESSAGES[code], { headers: { "Retry-After": String(UNAVAILABLE_RETRY_AFTER_S[code]) } });
}

/** Runs ledger work; any failure that is not already an ApiError becomes the 503 `code`. */
export function withLedger<T>(code: UnavailableCode, work: () => T): T {
  try {
    return work();
  } catch (err) {
    if (isApiError(err)) throw err;
    // The SQLite message only: never the request, which may carry a key.
    console.error(`ledger unavailable (${code}): ${(err as Error)?.message ?? err}`);
    throw unavailable(code);
  }
}
