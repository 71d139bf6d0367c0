/**
 * The request path's counters (docs/architecture.md, "The ledger and the meter"): token buckets, the
 * trial's rows, rolling 24-hour row budgets and the reservations of requests in flight, as the
 * few atomic steps the access stages (server/access.ts) take. Two implementations: the process's
 * meter (server/limits/meter.ts: in memory, answers at once) and Redis
 * (server/ledger/redis-counters.ts: a Lua script a step, shared by every serving process);
 * test/access-counters.test.ts runs one suite against both.
 *
 * The counters report numbers; what they mean (headers, refusals) is decided once, by the
 * stages. A step decides only what must be decided in the same atomic step as its writes: whether
 * the take is admitted, whether a trial account takes at all (`gated`), how many rows are held.
 */
import type { BucketSpec, BucketVerdict } from "../../db/rate-buckets.ts";
import type { Trial } from "../../db/trials.ts";

export type Maybe<T> = T | Promise<T>;

/** The row allowance stage 3 checks: the trial's rows, a rolling budget of `limit` rows, or none. */
export type RowAllowanceSpec = { readonly kind: "trial" } | { readonly kind: "budget"; readonly limit: number } | null;
export type MeteredSpec = NonNullable<RowAllowanceSpec>;

/** The numbers an allowance is judged by. */
export interface AllowanceState {
  /** Trial accounts: the trial as it stands (undefined until it starts). */
  trial: Trial | undefined;
  /** Budget accounts: rows delivered in the rolling window. */
  used: number;
  /** Rows held by live reservations of the allowance (before this request's own hold). */
  reserved: number;
  /** Budget accounts, when used >= limit: ms until enough delivered rows age out; else 0. */
  msUntilBelow: number;
}

/** A reservation: `rows` > 0 held under `hold` (opaque to the stages), or rows 0 when nothing could be held. */
export interface Reserved extends AllowanceState {
  rows: number;
  hold: number | string;
}

export interface Admission extends AllowanceState {
  verdict: BucketVerdict;
  /** A trial account refused before the take (its trial ended, or cannot start unverified): nothing taken. */
  gated: boolean;
  /** The reservation made with the admission when rows were asked for and the take admitted. */
  reservation: Reserved | null;
  /** The known page's rows when they were counted instead of reserved; the state is as it stood before. */
  counted: number | null;
}

export interface Settled extends AllowanceState {
  /** The hold was still live (not lapsed, not ended before). */
  live: boolean;
}

export interface Counters {
  /** True when stage 3 should be handed the page (`admit`'s `reserve`, `known`): a round trip fewer. */
  readonly prepares: boolean;
  /**
   * Stage 3: the bucket take and the allowance's state in one step; a trial account whose trial
   * ended, or that is unverified before it started, takes nothing (`gated`). With `reserve` rows
   * asked for and the take admitted, the rows are held as `reserve` holds them; or, when the page
   * is `known` (its row count) and what is left holds the whole `reserve` (a trial: and a page),
   * its rows are counted at once as `settle` counts them.
   */
  admit(
    accountId: number,
    bucket: BucketSpec,
    cost: number,
    allowance: RowAllowanceSpec,
    verified: boolean,
    nowMs: number,
    reserve?: number,
    known?: number | null,
  ): Maybe<Admission>;
  /**
   * The trial starts if due; at most `requested` rows of those left (a trial: and a page) are
   * held for ACCESS.reservationTtlMs. Rows 0 when the trial expired or nothing is left.
   */
  reserve(accountId: number, allowance: MeteredSpec, requested: number, nowMs: number): Maybe<Reserved>;
  /** Ends the hold and counts min(delivered, held): a trial's only while the hold was live, a budget's always. */
  settle(accountId: number, allowance: MeteredSpec, hold: Reserved, delivered: number, nowMs: number): Maybe<Settled>;
  /** Rows delivered without an allowance, for the record (a budget set later counts them), written behind the page. */
  record(accountId: number, rows: number, nowMs: number): void;
}
