/**
 * The request path's counters (docs/api.md, Plans and access; docs/architecture.md, "The access
 * stages"): token buckets, the trial's rows, rolling 24-hour row budgets and the reservations of
 * requests in flight, as the few atomic steps the access stages (server/access.ts) take. Two
 * implementations: the process's meter (server/limits/meter.ts: in memory, answers at once,
 * written to the SQLite ledger behind the requests) and Redis (server/ledger/redis-counters.ts:
 * one Lua script a step, shared by every serving process). test/access-counters.test.ts runs one
 * suite against both.
 *
 * The counters report numbers; what they mean (headers, refusals, 402s) is decided once, by the
 * stages. A step decides only what must be decided in the same atomic step as its writes: whether
 * the take is admitted, whether a trial account's take happens at all (`gated`), and how many
 * rows a reservation holds.
 */
import type { BucketSpec, BucketVerdict } from "../../db/rate-buckets.ts";
import type { Trial } from "../../db/trials.ts";

export type Maybe<T> = T | Promise<T>;

/** The row allowance stage 3 checks: the trial's rows, a rolling budget of `limit` rows, or none. */
export type RowAllowanceSpec = { readonly kind: "trial" } | { readonly kind: "budget"; readonly limit: number } | null;
export type MeteredSpec = NonNullable<RowAllowanceSpec>;

/** The numbers an allowance is judged by: `used` = the trial's rows, or the window's for a budget. */
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

/** A reservation: `rows` > 0 held under `hold`, or rows 0 when nothing could be held. */
export interface Reserved extends AllowanceState {
  rows: number;
  /** Identifies the hold to `settle` (opaque to the stages). */
  hold: number | string;
}

export interface Admission extends AllowanceState {
  verdict: BucketVerdict;
  /**
   * A trial account refused before the take (its trial has ended, or cannot start unverified):
   * nothing was taken, and `trial` tells the stages why.
   */
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
   * Stage 3: the bucket take and the allowance's state in one step. A trial account whose trial
   * has ended, or that is unverified before its trial started, takes nothing (`gated`). With
   * `reserve` rows asked for and the take admitted: the trial starts if due and the rows are
   * held as `reserve` would hold them; or, when the page is already `known` (its row count) and
   * the unreserved remainder holds the whole `reserve` (a trial: and a trial page), its rows are
   * counted at once as `settle` would count them.
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
   * The trial starts if due; at most `requested` rows of the unreserved remainder (a trial: and
   * a page) are held for ACCESS.reservationTtlMs. Rows 0 when the trial expired or nothing is left.
   */
  reserve(accountId: number, allowance: MeteredSpec, requested: number, nowMs: number): Maybe<Reserved>;
  /**
   * Ends the hold and counts min(delivered, held): a trial only while the hold was live (the
   * stages then withhold the page), a budget whether or not (it is exact, the hold advisory).
   */
  settle(accountId: number, allowance: MeteredSpec, hold: Reserved, delivered: number, nowMs: number): Maybe<Settled>;
  /**
   * Rows delivered to an account without an allowance, for the record (a budget set later counts
   * them). Written behind the page: a failure is logged, never thrown.
   */
  record(accountId: number, rows: number, nowMs: number): void;
}

/** `f(v)`, at once when `v` is a value: the meter's stages stay synchronous. */
export function then<T, U>(v: Maybe<T>, f: (t: T) => Maybe<U>): Maybe<U> {
  return v instanceof Promise ? v.then(f) : f(v);
}
