/**
 * `GET /v1/events` as one pipeline (docs/api.md, "Listing events"; docs/architecture.md, "The list
 * path"). One `ListService` is created with the app context and owns every cache the path uses
 * (server/list/caches.ts). Its stages run in this order, the first failure winning:
 *
 *   authorize  1 key → 2 access → 3 admission                    (server/access.ts)
 *   parse      4 unsupported_pagination → 5 the polygon gate → 6 parameters in the documented
 *              order                                              (server/list/parse.ts)
 *   window     invalid_date_range → 7 lookahead_not_in_plan → 8 a current cursor's filters,
 *              then the effective window                          (server/list/window.ts)
 *   open       the trial starts, rows are reserved, the page size is clamped (access.open)
 *   select     geo candidates and the snapshot rows of the page  (db/geo.ts, db/events-query.ts)
 *   hydrate    live rows, re-checked, as the response body       (db/hydrate.ts)
 *   settle     the delivered rows are counted, the reservation released, headers set
 *
 * select and hydrate read one state of the replica inside one read transaction; when the page
 * cache holds a body that provably equals theirs (server/list/page-cache.ts), neither runs.
 *
 * On the SQLite ledger authorize, open and settle answer at once and the whole pipeline is
 * synchronous (no promise on the hot path). On a Redis ledger (server/ledger/redis-access.ts) they
 * answer with promises and the same stages continue in `answerLater` / `answerHeadLater`.
 */

import type { Db } from "../../db/driver.ts";
import {
  type PageFilter,
  type PagePosition,
  type PageSelection,
  readConsistently,
  selectPage,
} from "../../db/events-query.ts";
import type { GeoCandidates } from "../../db/geo.ts";
import { hydratePageJson, type LiveBounds, readReplicaState } from "../../db/hydrate.ts";
import { readSnapshotStats } from "../../db/snapshot-stats.ts";
import type { AccessControl, ListAccess, ListTerms, PreparedPage } from "../access.ts";
import type { Clock } from "../clock.ts";
import { assertCursorMatches, filterFingerprint } from "../cursor.ts";
import { type Reply, ReplyParts, type RequestScope } from "../handle.ts";
import { isGeoRequest } from "../params-geo.ts";
import { ListCaches, type ParsedQuery } from "./caches.ts";
import { type PageBody, type PageOut, pageCacheKey } from "./page-cache.ts";
import { assertDateRange, assertKeysetPagination, assertPolygonAllowed, parseListParams } from "./parse.ts";
import { assertAnswerable } from "./replica-scope.ts";
import { bodyParts, encodeHead, headOf, listHeaderFields, NO_MATCH, responseBody, withCursor } from "./response.ts";
import { assertLookahead, type ListWindow, resolveWindow } from "./window.ts";

export interface ListDeps {
  replica: Db;
  access: AccessControl;
  clock: Clock;
  /** HMAC secret of cursors. */
  secret: string;
  baseUrl: string;
}

/** The request's query string as it arrived, and its parsed form once known. */
export interface ListRequest {
  /** The raw query string with its "?", or "": the key of every per-query cache. */
  search: string;
  known: ParsedQuery | undefined;
  /** Parsed lazily: a known string never builds one. */
  params: URLSearchParams | null;
}

/** What selection hands to hydration: the filter as SQL sees it and the page's snapshot rows. */
export interface Selected {
  filter: PageFilter;
  geo: GeoCandidates | null;
  selection: PageSelection;
  /** The replica state the rows were read in (keys the kept events). */
  state: string;
}

export class ListService {
  readonly caches: ListCaches;

  constructor(private readonly deps: ListDeps) {
    this.caches = new ListCaches(deps.replica, deps.baseUrl);
  }

  /** The whole pipeline for one request. */
  answer(scope: RequestScope): Reply | Promise<Reply> {
    const request = this.request(scope);
    if (this.deps.access.prepares) return this.answerPrepared(scope, request);
    const access = this.authorize(scope, request);
    if (access instanceof Promise) return this.answerLater(scope, request, access);
    const parsed = this.parse(request, access);
    const nowMs = this.deps.clock.now();
    const window = this.window(parsed, access, nowMs);
    const limit = access.open(parsed.q.limit);
    if (typeof limit !== "number") return this.pageLater(scope, request, parsed, window, access, limit);
    let out: PageOut;
    try {
      out = this.page(request.search, parsed, window, limit);
    } catch (err) {
      const settled = access.settle(0);
      if (settled instanceof Promise) return settled.then(() => Promise.reject(err));
      throw err;
    }
    return this.settle(scope, access, out);
  }

  /** `answer` once stage 3 has answered asynchronously: the same stages in the same order. */
  async answerLater(scope: RequestScope, request: ListRequest, pending: Promise<ListAccess>): Promise<Reply> {
    const access = await pending;
    const parsed = this.parse(request, access);
    const window = this.window(parsed, access, this.deps.clock.now());
    return this.pageLater(scope, request, parsed, window, access, access.open(parsed.q.limit));
  }

  /**
   * `answer` on a ledger that reserves the page's rows with stage 3 (one round trip fewer):
   * stages 4–8 run when stage 2 has decided, their error held until stages 1–3 pass. A page the
   * page cache holds is known by then: stage 3 may count its rows instead of reserving them, and
   * it is the page delivered unless open() clamps the page size.
   */
  async answerPrepared(scope: RequestScope, request: ListRequest): Promise<Reply> {
    let parsed: ParsedQuery | undefined;
    let window: ListWindow | undefined;
    let known: PageOut | null = null;
    const prepare = (terms: ListTerms): PreparedPage => {
      parsed = this.parse(request, terms);
      window = this.window(parsed, terms, this.deps.clock.now());
      known = this.keptPage(pageCacheKey(request.search, parsed.q.limit, window), parsed, window);
      return { limit: parsed.q.limit, rows: known?.page.count ?? null };
    };
    const geo = request.known?.geo ?? isGeoRequest(request.params!);
    const access = await this.deps.access.authorizeList(scope, { geo, prepare });
    if (!parsed || !window) {
      parsed = this.parse(request, access);
      window = this.window(parsed, access, this.deps.clock.now());
    }
    return this.pageLater(scope, request, parsed, window, access, access.open(parsed.q.limit), known);
  }

  /**
   * From open on, waiting for the ledger where it answers with promises. `known`: the page of the
   * requested size read before stage 3, delivered when open() kept that size.
   */
  async pageLater(
    scope: RequestScope,
    request: ListRequest,
    parsed: ParsedQuery,
    window: ListWindow,
    access: ListAccess,
    opening: number | Promise<number>,
    known: PageOut | null = null,
  ): Promise<Reply> {
    const limit = await opening;
    let out: PageOut;
    try {
      out = known && limit === parsed.q.limit ? known : this.page(request.search, parsed, window, limit);
    } catch (err) {
      await access.settle(0);
      throw err;
    }
    await access.settle(out.page.count);
    return this.reply(scope, out);
  }

  /**
   * HEAD: GET's checks, status and headers without a body, charging only the request-rate units
   * (docs/api.md, Listing events). Stages 1–8 run; no trial starts, no row is reserved, counted
   * or read, since none is delivered.
   */
  answerHead(scope: RequestScope): Reply | Promise<Reply> {
    const request = this.request(scope);
    const access = this.authorize(scope, request);
    if (access instanceof Promise) return this.answerHeadLater(scope, request, access);
    return this.head(scope, request, access);
  }

  async answerHeadLater(scope: RequestScope, request: ListRequest, pending: Promise<ListAccess>): Promise<Reply> {
    return this.head(scope, request, await pending);
  }

  /** HEAD after stage 3: stages 4–8, then the headers a 200 would carry. */
  head(scope: RequestScope, request: ListRequest, access: ListAccess): Reply {
    const parsed = this.parse(request, access);
    this.window(parsed, access, this.deps.clock.now());
    access.describe();
    return this.reply(scope, null);
  }

  request(scope: RequestScope): ListRequest {
    const search = scope.search;
    const known = this.caches.parsed.get(search);
    return { search, known, params: known ? null : scope.url.searchParams };
  }

  /** Stages 1–3. A geo request costs more rate units, decided by the parameters' presence alone. */
  authorize(scope: RequestScope, request: ListRequest): ListAccess | Promise<ListAccess> {
    const geo = request.known?.geo ?? isGeoRequest(request.params!);
    return this.deps.access.authorizeList(scope, { geo });
  }

  /** Stages 4–6, kept by the raw query string (a pure function of it). */
  parse(request: ListRequest, access: ListTerms): ParsedQuery {
    const { known, params, search } = request;
    // A replica of another deployment: the filters it cannot answer exactly (null elsewhere).
    const scope = this.caches.scope.check();
    if (known) {
      assertPolygonAllowed(known.polygon, access.polygons);
      if (scope) assertAnswerable(known.q, scope);
      return known;
    }
    assertKeysetPagination(params!);
    assertPolygonAllowed(params!.has("polygon"), access.polygons);
    const parsed: ParsedQuery = {
      q: parseListParams(params!, this.deps.secret, scope),
      fingerprint: filterFingerprint(params!),
      geo: isGeoRequest(params!),
      polygon: params!.has("polygon"),
    };
    this.caches.parsed.set(search, parsed);
    return parsed;
  }

  /** The date range, stages 7–8, and the window this request reads. */
  window(parsed: ParsedQuery, access: ListTerms, nowMs: number): ListWindow {
    const { q, fingerprint } = parsed;
    assertDateRange(q, nowMs);
    assertLookahead(q, nowMs, access.horizonMs);
    assertCursorMatches(q.cursor, fingerprint);
    return resolveWindow(q, nowMs, access.horizonMs);
  }

  /**
   * The page: from the page cache when it holds a body that equals a fresh read, else selected
   * and hydrated in one read transaction. `search` with the limit and the window determines it.
   */
  page(search: string, parsed: ParsedQuery, window: ListWindow, limit: number): PageOut {
    const key = pageCacheKey(search, limit, window);
    const kept = this.keptPage(key, parsed, window);
    if (kept) return kept;
    const { q, fingerprint } = parsed;
    const from = q.cursor?.position ?? null;
    return readConsistently(this.deps.replica, () => {
      const selected = this.select(key, parsed, window, from, limit);
      const body = this.hydrate(key, selected, window);
      return withCursor(this.deps.secret, selected.selection, body, from, window, fingerprint);
    });
  }

  /**
   * The page when it needs no read of the replica (the page cache holds it under `key`, or nothing
   * can match), else null.
   */
  keptPage(key: string, parsed: ParsedQuery, window: ListWindow): PageOut | null {
    const { q, fingerprint } = parsed;
    // A city sent twice with different values: no venue is in both (docs/api.md, Listing events).
    if (q.cityConflict) return NO_MATCH;
    const { pages, replicaMark: state } = this.caches;
    // Outside a transaction: the latest commit's state (another process's seen at most a few ms late).
    const hit = pages.getBody(key, state.read(), window);
    if (!hit) return null;
    encodeHead(hit.body);
    return withCursor(this.deps.secret, hit.selection, hit.body, q.cursor?.position ?? null, window, fingerprint);
  }

  /** Geo candidates, then the page's snapshot rows (or a kept selection that provably equals them). Inside a read transaction. */
  select(key: string, parsed: ParsedQuery, window: ListWindow, from: PagePosition | null, limit: number): Selected {
    const { q } = parsed;
    const { replica } = this.deps;
    const { geo: geoIndex, pages, estimates, scans, longs, blocks } = this.caches;
    const geo = q.geo ? geoIndex.find(q.geo, q.includeCentroids) : null;
    const filter: PageFilter = {
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
    const state = readReplicaState(replica);
    let selection = pages.get(key, state, window);
    if (!selection) {
      const view = { stats: readSnapshotStats(replica), estimates, scans: { kept: scans, state }, longs, blocks };
      selection = selectPage(replica, view, filter, from, limit);
      pages.set(key, state, window, selection);
    }
    return { filter, geo, selection, state };
  }

  /** The selected rows, read live and re-checked, as the body up to the page object. Inside the same transaction. */
  hydrate(key: string, selected: Selected, window: ListWindow): PageBody {
    const { filter, geo, selection, state } = selected;
    const bounds: LiveBounds = { latestAfterMs: Infinity, droppedAfterClose: false };
    const data = hydratePageJson(
      this.deps.replica,
      this.caches.events,
      state,
      selection.keys,
      filter,
      {
        baseUrl: this.deps.baseUrl,
        geo: geo?.live ?? null,
      },
      bounds,
    );
    const body: PageBody = { headText: headOf(data.join(",")), count: data.length, window: { ...window }, bounds };
    this.caches.pages.setBody(key, selection, body);
    return body;
  }

  /** Counts the delivered rows and answers with the page. */
  settle(scope: RequestScope, access: ListAccess, out: PageOut): Reply | Promise<Reply> {
    const settled = access.settle(out.page.count);
    if (settled instanceof Promise) return settled.then(() => this.reply(scope, out));
    return this.reply(scope, out);
  }

  /** The 200 with the page (none for HEAD): in parts for a listener that takes them, else a Response. */
  reply(scope: RequestScope, out: PageOut | null): Reply {
    if (out) scope.rows = out.page.count;
    if (scope.takesParts) return new ReplyParts(200, listHeaderFields(scope), out && bodyParts(out));
    return new Response(out && responseBody(out), { status: 200, headers: this.caches.headers.for(scope) });
  }
}
