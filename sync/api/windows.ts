/**
 * The windows a pass walks (docs/upstream-records.md, A replica of another deployment): from the
 * upstream's now to the account's lookahead horizon, each at most 365 days long (90 with geo).
 *
 * The two clocks are never compared. The first window leaves `starts_after` out, so it opens at
 * the upstream's own now. A window's end is asked for explicitly until the upstream refuses it
 * (403 `lookahead_not_in_plan`: past the horizon); from then on windows leave `starts_before`
 * out, so the upstream closes each at its default length, capped at exactly its horizon. The
 * window after that opens past the horizon, and its refusal ends the walk. Windows after the
 * first open API_SYNC.windowOverlapMs before the last one closed (as this machine reckons it),
 * so clocks that disagree by less than that leave no gap. An account without a horizon is read
 * API_SYNC.boundDays ahead.
 */
import { API_SYNC, DAY_MS } from "../../db/contract.ts";

export interface Window {
  /** null: `starts_after` left out, the window opens at the upstream's now. */
  startsAfterMs: number | null;
  /** null: `starts_before` left out, the upstream's default end capped at the horizon. */
  startsBeforeMs: number | null;
}

export class WindowPlan {
  private readonly maxMs: number;
  private readonly defaultMs: number;
  private readonly boundMs: number;

  constructor(
    /** This machine's now when the walk began. */
    private readonly startMs: number,
    geo: boolean,
    /** Explicit ends were refused before (an earlier walk or pass with the same account). */
    public capped = false,
  ) {
    this.maxMs = (geo ? API_SYNC.maxGeoWindowDays : API_SYNC.maxWindowDays) * DAY_MS;
    this.defaultMs = (geo ? API_SYNC.defaultGeoWindowDays : API_SYNC.defaultWindowDays) * DAY_MS;
    this.boundMs = startMs + API_SYNC.boundDays * DAY_MS;
  }

  first(): Window {
    return { startsAfterMs: null, startsBeforeMs: this.endOf(this.startMs) };
  }

  /** After `w` was walked to its end: the next window, or null when the walk has reached its bound. */
  next(w: Window): Window | null {
    const opened = w.startsAfterMs ?? this.startMs;
    const closed = w.startsBeforeMs ?? opened + this.defaultMs;
    // Within an overlap of the bound is at the bound: no window of an hour or less after it.
    if (closed >= this.boundMs - API_SYNC.windowOverlapMs) return null;
    const after = closed - API_SYNC.windowOverlapMs;
    return { startsAfterMs: after, startsBeforeMs: this.endOf(after) };
  }

  /**
   * The upstream refused `w` with `lookahead_not_in_plan`: its explicit end is past the horizon
   * (walk it again without one), or, once ends are left out, its start is (the walk is done: null).
   */
  refused(w: Window): Window | null {
    if (w.startsBeforeMs === null) return null;
    this.capped = true;
    return { startsAfterMs: w.startsAfterMs, startsBeforeMs: null };
  }

  private endOf(afterMs: number): number | null {
    return this.capped ? null : Math.min(afterMs + this.maxMs, this.boundMs);
  }
}
