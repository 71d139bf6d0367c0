/**
 * The effective date window of a list request and the lookahead gate (stage 7, docs/api.md, Listing events).
 *
 * - Opens at `starts_after`, default now. Events still running then are included (the page
 *   query matches `end >= after`).
 * - Closes at `starts_before`; default after + 90 days (30 for geo), capped by the tier horizon;
 *   an explicit value is clamped to after + 365 days (90 for geo).
 * - Explicit dates beyond now + horizon are 403 `lookahead_not_in_plan`, and so is a current
 *   cursor whose pinned window ends past the account's horizon today (e.g. after a downgrade).
 * - A current cursor's pinned window is used as is: it never extends and never slides.
 */
import { DAY_MS, LIST } from "../../db/contract.ts";
import type { PageFilter } from "../../db/events-query.ts";
import type { GeoCandidates } from "../../db/geo.ts";
import { ApiError } from "../errors.ts";
import type { ListQuery } from "./parse.ts";

export interface ListWindow {
  afterMs: number;
  beforeMs: number;
}

const beyondHorizon = () =>
  new ApiError(
    "lookahead_not_in_plan",
    "The requested dates reach beyond your plan's lookahead horizon. Start a new request within it, or upgrade.",
  );

/** Stage 7. `horizonMs` is the account's lookahead from now; null means no tier cap. */
export function assertLookahead(q: ListQuery, nowMs: number, horizonMs: number | null): void {
  if (horizonMs === null) return;
  const limit = nowMs + horizonMs;
  if ((q.startsAfterMs ?? -Infinity) > limit || (q.startsBeforeMs ?? -Infinity) > limit) throw beyondHorizon();
  if (q.cursor?.version === 2 && q.cursor.beforeMs > limit) throw beyondHorizon();
}

/** The window this request reads: pinned by a current cursor, else computed from now. */
export function resolveWindow(q: ListQuery, nowMs: number, horizonMs: number | null): ListWindow {
  if (q.cursor?.version === 2) return { afterMs: q.cursor.afterMs, beforeMs: q.cursor.beforeMs };
  const geo = q.geo !== null;
  const afterMs = q.startsAfterMs ?? nowMs;
  if (q.startsBeforeMs !== null) {
    const maxDays = geo ? LIST.maxGeoWindowDays : LIST.maxWindowDays;
    return { afterMs, beforeMs: Math.min(q.startsBeforeMs, afterMs + maxDays * DAY_MS) };
  }
  const defaultDays = geo ? LIST.defaultGeoWindowDays : LIST.defaultWindowDays;
  const horizonEnd = horizonMs === null ? Infinity : nowMs + horizonMs;
  return { afterMs, beforeMs: Math.min(afterMs + defaultDays * DAY_MS, horizonEnd) };
}

/** The page filter of a parsed query in its window, with its geo candidates when it has a geo filter. */
export function pageFilterOf(q: ListQuery, window: ListWindow, geo: GeoCandidates | null): PageFilter {
  return {
    ...window,
    state: q.state,
    city: q.city,
    sources: q.sources,
    venueIds: geo?.venueIds ?? null,
    venueSet: geo?.venueSet ?? null,
    venueStates: geo?.states ?? null,
    excludeSoldOut: q.excludeSoldOut,
    excludeAggregators: q.excludeAggregators,
  };
}
