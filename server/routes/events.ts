/**
 * GET /v1/events (spec "GET /v1/events", CONTRACT §4–§5). The pipeline, first failure wins:
 *
 *   1–3 authorizeList: key, access, admission            (server/access.ts)
 *   4   unsupported_pagination                           (server/list-query.ts)
 *   5   feature_not_in_plan for `polygon`, before the ring is parsed
 *   6   parameters in the spec table's order, then invalid_date_range
 *   7   lookahead_not_in_plan: explicit dates, pinned cursor window   (server/list-window.ts)
 *   8   invalid_cursor when a current cursor's filters differ         (server/cursor.ts)
 *   then open() → select from the snapshot → hydrate live → settle(delivered)
 */
import type { H3 } from "h3";
import { findGeoCandidates } from "../../db/geo.ts";
import { hydratePage, type Event } from "../../db/hydrate.ts";
import { readConsistently, selectPage, type PageFilter } from "../../db/events-query.ts";
import { authorizeList, type ListAccess } from "../access.ts";
import type { AppContext } from "../context.ts";
import { assertCursorMatches, encodeCursor, filterFingerprint } from "../cursor.ts";
import { handle, json, type RequestScope } from "../handle.ts";
import { assertKeysetPagination, assertPolygonAllowed, parseListQuery, type ListQuery } from "../list-query.ts";
import { assertLookahead, resolveWindow, type ListWindow } from "../list-window.ts";
import { isGeoRequest } from "../params-geo.ts";

export interface EventsPage {
  data: Event[];
  page: { nextCursor: string | null; hasMore: boolean; count: number };
}

const NO_MATCH: EventsPage = { data: [], page: { nextCursor: null, hasMore: false, count: 0 } };

/** Reads one page: geo candidates, snapshot selection and live hydration, in one read transaction. */
function readPage(ctx: AppContext, q: ListQuery, window: ListWindow, limit: number, fingerprint: string): EventsPage {
  // A city sent twice with different values: no venue is in both (README "GET /v1/events").
  if (q.cityConflict) return NO_MATCH;
  return readConsistently(ctx.replica, () => {
    const geo = q.geo ? findGeoCandidates(ctx.replica, q.geo, q.includeCentroids) : null;
    const filter: PageFilter = {
      ...window,
      state: q.state,
      city: q.city,
      sources: q.sources,
      venueIds: geo?.venueIds ?? null,
      excludeSoldOut: q.excludeSoldOut,
      excludeAggregators: q.excludeAggregators,
    };
    const from = q.cursor?.position ?? null;
    const selection = selectPage(ctx.replica, filter, from, limit);
    const data = hydratePage(ctx.replica, selection.keys, filter, {
      baseUrl: ctx.config.baseUrl,
      distanceMiles: geo?.distanceMiles ?? null,
    });
    // Continue from the last SNAPSHOT row of the page, not the last delivered one (spec).
    const last = selection.keys.at(-1) ?? from;
    const nextCursor =
      selection.hasMore && last ? encodeCursor(ctx.secret, last, { ...window, fingerprint }) : null;
    return { data, page: { nextCursor, hasMore: selection.hasMore, count: data.length } };
  });
}

async function listEvents(ctx: AppContext, scope: RequestScope): Promise<Response> {
  const query = scope.url.searchParams;
  const access: ListAccess = await authorizeList(ctx, scope, { geo: isGeoRequest(query) });
  assertKeysetPagination(query);
  assertPolygonAllowed(query, access.polygons);
  const nowMs = ctx.clock.now();
  const q = parseListQuery(query, ctx.secret, nowMs);
  assertLookahead(q, nowMs, access.horizonMs);
  const fingerprint = filterFingerprint(query);
  assertCursorMatches(q.cursor, fingerprint);
  const window = resolveWindow(q, nowMs, access.horizonMs);

  const limit = await access.open(q.limit);
  let body: EventsPage;
  try {
    body = readPage(ctx, q, window, limit, fingerprint);
  } catch (err) {
    await access.settle(0);
    throw err;
  }
  await access.settle(body.page.count);
  return json(body, 200, { ...scope.headers, "cache-control": "private, no-store" });
}

export function eventsRoutes(app: H3, ctx: AppContext): void {
  app.get("/v1/events", handle((scope) => listEvents(ctx, scope)));
}
