/**
 * Request rate (docs/api.md, Plans and access, docs/api.md): which token bucket a request draws from, what it
 * costs, and the headers and 429 it produces.
 *
 * - a bucket per key: 60 units, refilled 1 a second;
 * - trial accounts: one bucket per account (docs/api.md: 60 units a minute shared by keys);
 * - negotiated accounts (rateSustained and rateBurst set): one bucket per account, `rateBurst`
 *   units, refilled `rateSustained` a minute; extra keys add nothing.
 * Geo requests cost 5, decided by the caller from raw parameter presence before validation.
 */
import type { Account } from "../../db/accounts.ts";
import { RATE } from "../../db/contract.ts";
import type { BucketSpec, BucketVerdict } from "../../db/rate-buckets.ts";
import { ApiError } from "../errors.ts";
import { H, seconds } from "./headers.ts";

export function bucketFor(account: Account, keyId: number, trial: boolean): BucketSpec {
  if (account.rateSustained !== null && account.rateBurst !== null) {
    return {
      bucket: `account:${account.id}`,
      capacity: account.rateBurst,
      refillPerSecond: account.rateSustained / 60,
    };
  }
  const bucket = trial ? `account:${account.id}` : `key:${keyId}`;
  return { bucket, capacity: RATE.capacity, refillPerSecond: RATE.refillPerSecond };
}

export const requestCost = (geo: boolean): number => (geo ? RATE.geoCost : 1);

/** Remaining whole units and the unix second the bucket is full again, written into a response's headers. */
export function setRateCounters(headers: Record<string, string>, verdict: BucketVerdict): void {
  headers[H.rateRemaining] = String(Math.floor(verdict.tokens + 1e-9));
  headers[H.rateReset] = String(Math.ceil(verdict.fullAtMs / 1000));
}

/** 429 with X-RateLimit-Limit (the bucket's capacity), the counters and Retry-After. */
export function rateLimited(spec: BucketSpec, verdict: BucketVerdict): ApiError {
  const headers: Record<string, string> = { [H.rateLimit]: String(spec.capacity) };
  setRateCounters(headers, verdict);
  headers[H.retryAfter] = String(seconds(verdict.retryAfterMs));
  return new ApiError("rate_limited", "Too many requests for this key. Retry after the delay in Retry-After.", {
    headers,
  });
}
