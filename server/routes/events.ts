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
import { LRUCache } from "lru-cache";
import { HOT_PATH } from "../../db/contract.ts";
import { findGeoCandidates } from "../../db/geo.ts";
import {
  forgetHydratedRows, hydratePageJson, readRecentReplicaState, readReplicaState, type Event, type LiveBounds,
} from "../../db/hydrate.ts";
import { readConsistently, selectPage, type PageFilter, type PagePosition, type PageSelection } from "../../db/events-query.ts";
import { authorizeList, type ListAccess } from "../access.ts";
import type { AppContext } from "../context.ts";
import { assertCursorMatches, encodeCursor, filterFingerprint } from "../cursor.ts";
import { direct, directRoutesOf, handle, type RequestScope } from "../handle.ts";
import {
  assertDateRange, assertKeysetPagination, assertPolygonAllowed, parseListParams, type ListQuery,
} from "../list-query.ts";
import { createPageCache, pageCacheKey, type PageBody, type PageCache, type PageOut } from "../list-page-cache.ts";
import { assertLookahead, resolveWindow, type ListWindow } from "../list-window.ts";
import { isGeoRequest } from "../params-geo.ts";

export interface EventsPage {
  data: Event[];
  page: { nextCursor: string | null; hasMore: boolean; count: number };
}

const encoder = new TextEncoder();
const onBun = typeof Bun !== "undefined";

/**
 * Byte for byte the UTF-8 of `JSON.stringify` of the EventsPage: the events' cached JSON
 * (db/hydrate.ts `hydratePageJson`) encoded once per cached body up to `"page":` (`headOf`).
 */
function pageOut(head: Uint8Array<ArrayBuffer>, page: EventsPage["page"]): PageOut {
  const tail = encoder.encode(`${JSON.stringify(page)}}`);
  // A Blob joins the two parts itself: one copy.
  if (onBun) return { page, body: new Blob([head, tail]) };
  const bytes = new Uint8Array(head.length + tail.length);
  bytes.set(head);
  bytes.set(tail, head.length);
  return { page, body: bytes };
}

const headOf = (dataJson: string) => encoder.encode(`{"data":[${dataJson}],"page":`);

const NO_MATCH: PageOut = pageOut(headOf(""), { nextCursor: null, hasMore: false, count: 0 });

const pageCaches = new WeakMap<AppContext, PageCache>();

/**
 * What a query string decides, kept by the raw string once it passed stages 4 and 6 (both pure
 * functions of it): the parsed parameters, the filter fingerprint, and the two facts earlier
 * stages need (geo cost, the polygon gate). A request with a known string reads no parameters.
 */
interface ParsedQuery {
  q: ListQuery;
  fingerprint: string;
  geo: boolean;
  polygon: boolean;
}
const parsedQueries = new WeakMap<AppContext, LRUCache<string, ParsedQuery>>();

function parseQuery(ctx: AppContext, query: URLSearchParams, search: string): ParsedQuery {
  const parsed = {
    q: parseListParams(query, ctx.secret),
    fingerprint: filterFingerprint(query),
    geo: isGeoRequest(query),
    polygon: query.has("polygon"),
  };
  parsedQueries.get(ctx)!.set(search, parsed);
  return parsed;
}

/**
 * Reads one page: geo candidates, snapshot selection (or a cached one that provably equals it,
 * server/list-page-cache.ts) and live hydration, in one read transaction — or, when the cache
 * holds the hydrated page for this state and window, none of that. `search` is the raw query
 * string: with the effective limit and the window it determines the page.
 */
function readPage(
  ctx: AppContext, q: ListQuery, window: ListWindow, limit: number, fingerprint: string, search: string,
): PageOut {
  // A city sent twice with different values: no venue is in both (README "GET /v1/events").
  if (q.cityConflict) return NO_MATCH;
  const cache = pageCaches.get(ctx)!;
  const key = pageCacheKey(search, limit, window);
  const from = q.cursor?.position ?? null;
  // Outside a transaction: the latest commit's state (another process's seen at most a few ms late).
  const hit = cache.getBody(key, readRecentReplicaState(ctx.replica, HOT_PATH.foreignCommitLagMs), window);
  if (hit) return withCursor(ctx, hit.selection, hit.body, from, window, fingerprint);
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
    const state = readReplicaState(ctx.replica);
    let selection = cache.get(key, state, window);
    if (!selection) cache.set(key, state, window, (selection = selectPage(ctx.replica, filter, from, limit)));
    const bounds: LiveBounds = { latestAfterMs: Infinity, droppedAfterClose: false };
    const data = hydratePageJson(ctx.replica, selection.keys, filter, {
      baseUrl: ctx.config.baseUrl,
      distanceMiles: geo?.distanceMiles ?? null,
    }, bounds);
    const body: PageBody = { head: headOf(data.join(",")), count: data.length, window: { ...window }, bounds };
    cache.setBody(key, selection, body);
    return withCursor(ctx, selection, body, from, window, fingerprint);
  });
}

/**
 * The page for this request's window. The cursor pins the window, so requests in the same
 * millisecond (or any request, when there is no next page) get the very same bytes: they are
 * kept with the cached body and encoded once.
 */
function withCursor(
  ctx: AppContext, selection: PageSelection, body: PageBody, from: PagePosition | null, window: ListWindow, fingerprint: string,
): PageOut {
  // Continue from the last SNAPSHOT row of the page, not the last delivered one (spec).
  const last = selection.keys.at(-1) ?? from;
  const next = selection.hasMore && last !== null;
  const kept = body.lastPage;
  if (
    kept &&
    (!next || (kept.afterMs === window.afterMs && kept.beforeMs === window.beforeMs && kept.fingerprint === fingerprint))
  ) {
    return kept.out;
  }
  const nextCursor = next ? encodeCursor(ctx.secret, last, { ...window, fingerprint }) : null;
  const out = pageOut(body.head, { nextCursor, hasMore: selection.hasMore, count: body.count });
  body.lastPage = { ...window, fingerprint, out };
  return out;
}

function listEvents(ctx: AppContext, scope: RequestScope): Response {
  const search = scope.search;
  const known = parsedQueries.get(ctx)!.get(search);
  const query = known ? null : scope.url.searchParams;
  const access: ListAccess = authorizeList(ctx, scope, { geo: known?.geo ?? isGeoRequest(query!) });
  if (!known) assertKeysetPagination(query!);
  assertPolygonAllowed(known?.polygon ?? query!.has("polygon"), access.polygons);
  const nowMs = ctx.clock.now();
  const { q, fingerprint } = known ?? parseQuery(ctx, query!, search);
  assertDateRange(q, nowMs);
  assertLookahead(q, nowMs, access.horizonMs);
  assertCursorMatches(q.cursor, fingerprint);
  const window = resolveWindow(q, nowMs, access.horizonMs);

  const limit = access.open(q.limit);
  let out: PageOut;
  try {
    out = readPage(ctx, q, window, limit, fingerprint, search);
  } catch (err) {
    access.settle(0);
    throw err;
  }
  access.settle(out.page.count);
  return new Response(out.body, { status: 200, headers: listHeaders(scope) });
}

/**
 * The page's headers: what `json()` (server/handle.ts) sets, the access pipeline's, the spec's
 * Cache-Control and the request id. A Response copies the Headers it is given (Fetch "fill"), so
 * one Headers per sequence of access header names is refilled for each page: half the cost of
 * building them from an object every time (issue 8). The sequences form a small tree walked by
 * name, so finding the Headers builds no string.
 */
interface HeaderSet {
  next: Map<string, HeaderSet>;
  headers: Headers | null;
}
const listHeaderSets: HeaderSet = { next: new Map(), headers: null };
function listHeaders(scope: RequestScope): Headers {
  const access = scope.headers;
  let set = listHeaderSets;
  for (const name in access) {
    let next = set.next.get(name);
    if (!next) set.next.set(name, (next = { next: new Map(), headers: null }));
    set = next;
  }
  const headers = (set.headers ??= new Headers({
    "content-type": "application/json; charset=utf-8",
    "cache-control": "private, no-store",
  }));
  for (const name in access) headers.set(name, access[name]);
  headers.set("x-request-id", scope.requestId);
  return headers;
}

export function eventsRoutes(app: H3, ctx: AppContext): void {
  // Belt and braces: the row cache also checks the replica's state itself on every page.
  const pages = createPageCache();
  pageCaches.set(ctx, pages);
  parsedQueries.set(ctx, new LRUCache({ max: HOT_PATH.parsedQueries }));
  ctx.onReplicaChange.push(() => (forgetHydratedRows(ctx.replica), pages.clear()));
  const list = (scope: RequestScope) => listEvents(ctx, scope);
  app.get("/v1/events", handle(list, "list", { setsRequestId: true }));
  // On Bun the same route is also reached without h3 (server/handle.ts `direct`).
  directRoutesOf(app)["/v1/events"] = { GET: direct(list, "list", { setsRequestId: true }) };
}
