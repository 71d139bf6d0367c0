/** Request rate (docs/api.md, Rate limits): the token bucket a request draws from, what it costs, its headers and 429. */
import type { Account } from "../../db/accounts.ts";
import { RATE } from "../../db/contract.ts";
import type { BucketSpec, BucketVerdict } from "../../db/rate-buckets.ts";
import { ApiError } from "../errors.ts";
import { H, seconds } from "./headers.ts";

export function bucketFor(account: Account, keyId: number, trial: boolean): BucketSpec {
  const { id, rateSustained, rateBurst } = account;
  // A negotiated rate: one bucket per account, `rateBurst` units refilled `rateSustained` a minute.
  if (rateSustained !== null && rateBurst !== null)
    return { bucket: `account:${id}`, capacity: rateBurst, refillPerSecond: rateSustained / 60 };
  const bucket = trial ? `account:${id}` : `key:${keyId}`;
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
  const message = "Too many requests for this key. Retry after the delay in Retry-After.";
  return new ApiError("rate_limited", message, { headers });
}
