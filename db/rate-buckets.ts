/**
 * Token buckets (docs/api.md, Plans and access: a bucket per key, or per account for trials and negotiated
 * accounts). Tokens refill continuously; a bucket with no state is full. The arithmetic is pure
 * (`spendTokens`); the serving process keeps buckets in memory and writes them here behind the
 * requests (server/limits/meter.ts), so a restart resumes where the buckets stood.
 */
import type { Db } from "./driver.ts";
import { writeRows } from "./multi-row-write.ts";

export interface BucketSpec {
  /** 'key:<id>' or 'account:<id>'. */
  bucket: string;
  capacity: number;
  refillPerSecond: number;
}

export interface BucketState {
  tokens: number;
  updatedMs: number;
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

/**
 * Spends `cost` tokens when they are there; a refused request spends nothing. `next` is the
 * bucket's new state, or null when nothing changed.
 */
export function spendTokens(
  state: BucketState | undefined,
  spec: BucketSpec,
  cost: number,
  nowMs: number,
): { verdict: BucketVerdict; next: BucketState | null } {
  const elapsedS = state ? Math.max(0, nowMs - state.updatedMs) / 1000 : Infinity;
  const before = Math.min(spec.capacity, (state?.tokens ?? spec.capacity) + elapsedS * spec.refillPerSecond);
  // A request dearer than the whole bucket (a tiny negotiated burst) fits when the bucket is full.
  const price = Math.min(cost, spec.capacity);
  const admitted = before >= price;
  const tokens = admitted ? before - price : before;
  const msFor = (units: number) => Math.ceil((units / spec.refillPerSecond) * 1000);
  return {
    verdict: {
      admitted,
      tokens,
      retryAfterMs: admitted ? 0 : msFor(price - tokens),
      fullAtMs: nowMs + msFor(spec.capacity - tokens),
    },
    next: admitted ? { tokens, updatedMs: nowMs } : null,
  };
}

export function readBucket(db: Db, bucket: string): BucketState | undefined {
  return db
    .prepare<BucketState>("SELECT tokens, updated_ms AS updatedMs FROM rate_buckets WHERE bucket = $bucket")
    .get({ bucket });
}

/** Writes many buckets' states at once (the meter's group). */
export function writeBuckets(db: Db, buckets: ReadonlyArray<readonly [string, BucketState]>): void {
  writeRows(
    db,
    (values) => `INSERT INTO rate_buckets(bucket, tokens, updated_ms) VALUES ${values}
      ON CONFLICT(bucket) DO UPDATE SET tokens = excluded.tokens, updated_ms = excluded.updated_ms`,
    buckets.map(([bucket, s]) => [bucket, s.tokens, s.updatedMs]),
  );
}
