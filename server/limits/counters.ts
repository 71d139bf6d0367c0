/**
 * The request path's counters (docs/architecture.md, The ledger and the meter): token buckets, trial
 * rows, rolling row budgets and the holds of requests in flight, as the few atomic steps the access
 * stages (server/access.ts) take. They report numbers; the stages decide what those mean. Two
 * implementations, server/limits/meter.ts and server/ledger/redis-counters.ts, pass one suite
 * (test/access-counters.test.ts).
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
   * Stage 3: the bucket take and the allowance's state in one step (`gated` as above). When admitted
   * with `reserve` rows asked for, they are held as `reserve` holds them, or, when the page is
   * `known` and what is left holds all of `reserve` (a trial: and a page), counted as `settle` would.
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
  /** Starts the trial if due; holds at most `requested` of the rows left (a trial: and a page), 0 once it expired. */
  reserve(accountId: number, allowance: MeteredSpec, requested: number, nowMs: number): Maybe<Reserved>;
  /** Ends the hold and counts min(delivered, held): a trial's only while the hold was live, a budget's always. */
  settle(accountId: number, allowance: MeteredSpec, hold: Reserved, delivered: number, nowMs: number): Maybe<Settled>;
  /** Rows delivered without an allowance, for the record (a budget set later counts them), written behind the page. */
  record(accountId: number, rows: number, nowMs: number): void;
}
