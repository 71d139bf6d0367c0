/** Ledger work on the request path: a failure answers the stage's 503 with Retry-After, never a hang or a 500. */
import { UNAVAILABLE_RETRY_AFTER_S } from "../../db/contract.ts";
import type { Db } from "../../db/driver.ts";
import { ApiError, isApiError } from "../errors.ts";

export type UnavailableCode = keyof typeof UNAVAILABLE_RETRY_AFTER_S;

const MESSAGES: Record<UnavailableCode, string> = {
  policy_unavailable: "The account policy could not be read. Retry after the delay in Retry-After.",
  rate_limit_unavailable:
    "The limiter could not confirm admission. This is not a quota verdict; retry after the delay in Retry-After.",
  trial_unavailable:
    "The trial allowance could not be verified. No data was returned; retry after the delay in Retry-After.",
};

export const unavailable = (code: UnavailableCode): ApiError =>
  new ApiError(code, MESSAGES[code], { headers: { "Retry-After": String(UNAVAILABLE_RETRY_AFTER_S[code]) } });

/** The meter's changes have waited too long for the ledger (server/limits/meter.ts): the stage's 503, nothing logged. */
export class LedgerStale extends Error {}

export const messageOf = (err: unknown) => (err as Error)?.message ?? err;

/** A step's failure as the stage answers it: an ApiError as it is, anything else logged (never the request) as the 503. */
export function ledgerFailure(code: UnavailableCode, err: unknown): ApiError {
  if (isApiError(err)) return err;
  if (!(err instanceof LedgerStale)) console.error(`ledger unavailable (${code}): ${messageOf(err)}`);
  return unavailable(code);
}

/** Runs `work` (which commits on its own) with synchronous=NORMAL (docs/architecture.md, The ledger and the meter). */
export function withoutFsync<T>(db: Db, work: () => T): T {
  const configured = Number(db.pragma("synchronous"));
  // Prepared statements (cached by the driver), not exec: this runs on every request.
  db.prepare("PRAGMA synchronous = NORMAL").run();
  try {
    return work();
  } finally {
    db.prepare(`PRAGMA synchronous = ${configured}`).run();
  }
}

/** Runs `work` with the connection's busy timeout at `ms`: the meter's groups wait briefly (they retry later). */
export function withBusyTimeout<T>(db: Db, ms: number, work: () => T): T {
  const before = Number(db.pragma("busy_timeout"));
  if (before === ms) return work();
  db.pragma(`busy_timeout = ${ms}`);
  try {
    return work();
  } finally {
    db.pragma(`busy_timeout = ${before}`);
  }
}
