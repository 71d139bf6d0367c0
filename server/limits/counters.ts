/**
 * The request path's counters as the atomic steps the access stages take (docs/architecture.md, The
 * ledger and the meter): server/limits/meter.ts and server/ledger/redis-counters.ts.
 */
import type { BucketSpec, BucketVerdict } from "../../db/rate-buckets.ts";
import type { Trial } from "../../db/trials.ts";

export type Maybe<T> = T | Promise<T>;

/** The row allowance stage 3 checks: the trial's rows, a rolling budget of `limit` rows, or none. */
export type RowAllowanceSpec = { readonly kind: "trial" } | { readonly kind: "budget"; readonly limit: number } | null;
export type MeteredSpec = NonNullable<RowAllowanceSpec>;

/**
 * The numbers an allowance is judged by: the trial (undefined until it starts); a budget's rows
 * delivered in the window (`used`) and, once used >= limit, the ms until enough age out
 * (`msUntilBelow`); the rows live holds keep, this request's own not yet (`reserved`).
 */
export type AllowanceState = { trial: Trial | undefined; used: number; reserved: number; msUntilBelow: number };

/** A reservation: `rows` > 0 held under `hold` (opaque to the stages), or rows 0 when nothing could be held. */
export type Reserved = AllowanceState & { rows: number; hold: number | string };

/**
 * `gated`: a trial account refused before the take (its trial ended, or cannot start unverified), nothing taken.
 * `reservation` made with the admission, or the known page's rows `counted` instead (the state as it stood before).
 */
export interface Admission extends AllowanceState {
  verdict: BucketVerdict;
  gated: boolean;
  reservation: Reserved | null;
  counted: number | null;
}

/** `live`: the hold had not lapsed or ended before. */
export type Settled = AllowanceState & { live: boolean };

export interface Counters {
  /** True when stage 3 should be handed the page (`admit`'s `reserve`, `known`): a round trip fewer. */
  readonly prepares: boolean;
  /**
   * Stage 3: the bucket take and the allowance's state; admitted, `reserve` rows are held, or counted as
   * `settle` would when the page is `known` and the rows left hold all of it (a trial: and a page).
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
