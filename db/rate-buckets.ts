/**
 * Token buckets in the ledger (CONTRACT §6: a bucket per key, or per account for trials and
 * negotiated accounts). Tokens refill continuously; a bucket with no row is full. The caller
 * runs `takeTokens` inside a write transaction so concurrent requests and processes serialise.
 */
import type { Db } from "./driver.ts";

export interface BucketSpec {
  /** 'key:<id>' or 'account:<id>'. */
  bucket: string;
  capacity: number;
  refillPerSecond: number;
}

export interface BucketVerdict {
  admitted: boolean;
  /** Tokens left after this request (before it, when refused). */
  tokens: number;
  /** Milliseconds until the request would fit; 0 when admitted. */
  retryAfterMs: number;
  /** When the bucket will be full again if nothing else spends. */
  fullAtMs: number;
}

/** Spends `cost` tokens when they are there; a refused request spends nothing. */
export function takeTokens(db: Db, spec: BucketSpec, cost: number, nowMs: number): BucketVerdict {
  const row = db
    .prepare<{ tokens: number; updatedMs: number }>(
      "SELECT tokens, updated_ms AS updatedMs FROM rate_buckets WHERE bucket = $bucket",
    )
    .get({ bucket: spec.bucket });
  const elapsedS = row ? Math.max(0, nowMs - row.updatedMs) / 1000 : Infinity;
  const before = Math.min(spec.capacity, (row?.tokens ?? spec.capacity) + elapsedS * spec.refillPerSecond);
  // A request dearer than the whole bucket (a tiny negotiated burst) fits when the bucket is full.
  const price = Math.min(cost, spec.capacity);
  const admitted = before >= price;
  const tokens = admitted ? before - price : before;
  if (admitted) {
    db.prepare(
      `INSERT INTO rate_buckets(bucket, tokens, updated_ms) VALUES ($bucket, $tokens, $now)
       ON CONFLICT(bucket) DO UPDATE SET tokens = excluded.tokens, updated_ms = excluded.updated_ms`,
    ).run({ bucket: spec.bucket, tokens, now: nowMs });
  }
  const msFor = (units: number) => Math.ceil((units / spec.refillPerSecond) * 1000);
  return {
    admitted,
    tokens,
    retryAfterMs: admitted ? 0 : msFor(price - tokens),
    fullAtMs: nowMs + msFor(spec.capacity - tokens),
  };
}
