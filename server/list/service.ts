/**
 * `GET` and `HEAD /v1/events` as one stage list, whichever listener took the request, the first failure winning
 * (docs/architecture.md, "The list path"). On a ledger that `prepares` (Redis), parse and window run inside stage 3's
 * step (docs/redis-ledger.md, "The request path on Redis").
 */
import type { Db } from "../../db/driver.ts";
import { readConsistently, selectPage } from "../../db/events-query.ts";
import { hydratePageJson, readReplicaState } from "../../db/hydrate.ts";
import { readSnapshotStats } from "../../db/snapshot-stats.ts";
import type { AccessControl, ListTerms, PreparedPage } from "../access.ts";
import type { Clock } from "../clock.ts";
import { type Reply, ReplyParts, type RequestScope } from "../handle.ts";
import type { Maybe } from "../limits/counters.ts";
import { isGeoRequest } from "../params-geo.ts";
import { ListCaches } from "./caches.ts";
import { type PageBody, type PageOut, pageCacheKey } from "./page-cache.ts";
import { type ListWindow, type ParsedQuery, pageFilterOf, parseQuery, recheck, windowOf } from "./parse.ts";
import { bodyParts, headOf, listHeaderFields, NO_MATCH, responseBody, withCursor } from "./response.ts";
import { runStages, type Stages, settled } from "./stages.ts";

export interface ListDeps {
  replica: Db;
  access: AccessControl;
  clock: Clock;
  /** HMAC secret of cursors. */
  secret: string;
  baseUrl: string;
}

/** What select hands to hydrate: the filter as SQL sees it, the page's snapshot rows and the mark they were read at. */
type Selected = ReturnType<ListService["select"]>;

/** A request as the stages learn it: its query string, then what parse and window made of it. */
export class ListRequest {
  window: ListWindow | null = null;
  /** The page of the size asked for, read before stage 3 on a ledger that prepares; else null. */
  known: PageOut | null = null;

  /** `search` (with its "?", or "") keys every per-query cache; `params`: only when no cache knows it. */
  constructor(
    readonly search: string,
    public parsed: ParsedQuery | undefined,
    readonly params: URLSearchParams | null,
  ) {}
}

export class ListService {
  readonly caches: ListCaches;

  constructor(private readonly deps: ListDeps) {
    this.caches = new ListCaches(deps.replica, deps.baseUrl);
  }

  /** The stage list, in order. `head`: GET's checks and headers without a page; nothing opens, is read or settles. */
  answer(scope: RequestScope, head = false): Maybe<Reply> {
    return runStages(this.stages(scope, head));
  }

  *stages(scope: RequestScope, head: boolean): Stages<Reply> {
    const { access: control, clock } = this.deps;
    const kept = this.caches.parsed.get(scope.search);
    const request = new ListRequest(scope.search, kept, kept ? null : scope.url.searchParams);
    const geo = kept?.geo ?? isGeoRequest(request.params!);
    const prepare = control.prepares && !head ? (terms: ListTerms) => this.prepare(request, terms) : undefined;
    const access = yield* settled(control.authorizeList(scope, { geo, prepare }));
    // parse and window, unless authorize ran them.
    const window = request.window ?? this.validate(request, access, clock.now());
    const { q } = request.parsed!;
    if (head) {
      access.describe();
      return this.respond(scope, null);
    }
    const limit = yield* settled(access.open(q.limit));
    // select and hydrate, unless the page was known before stage 3 and its size stands.
    let out: PageOut;
    try {
      out = request.known && limit === q.limit ? request.known : this.page(request, window, limit);
    } catch (err) {
      yield* settled(access.settle(0));
      throw err;
    }
    yield* settled(access.settle(out.page.count));
    return this.respond(scope, out);
  }

  /** parse and window inside stage 3's ledger step, with the page when the page cache holds it. */
  prepare(request: ListRequest, terms: ListTerms): PreparedPage {
    const window = this.validate(request, terms, this.deps.clock.now());
    const { limit } = request.parsed!.q;
    request.known = this.keptPage(pageCacheKey(request.search, limit, window), request.parsed!, window);
    return { limit, rows: request.known?.page.count ?? null };
  }

  /** Stages 4–8: the parsed query (kept by the raw query string) and the window it reads. */
  validate(request: ListRequest, terms: ListTerms, nowMs: number): ListWindow {
    request.parsed = this.parse(request, terms);
    request.window = windowOf(request.parsed, terms.horizonMs, nowMs);
    return request.window;
  }

  /** Stages 4–6, kept by the raw query string; a replica of another deployment refuses what it cannot answer. */
  parse(request: ListRequest, terms: ListTerms): ParsedQuery {
    const scope = this.caches.scope.at(this.deps.replica, this.caches.replicaMark.read());
    if (request.parsed) return recheck(request.parsed, terms.polygons, scope);
    const parsed = parseQuery(request.params!, this.deps.secret, terms.polygons, scope);
    this.caches.parsed.set(request.search, parsed);
    return parsed;
  }

  /** The page of `limit` rows: kept, or selected and hydrated in one read transaction. */
  page(request: ListRequest, window: ListWindow, limit: number): PageOut {
    const parsed = request.parsed!;
    const key = pageCacheKey(request.search, limit, window);
    const kept = this.keptPage(key, parsed, window);
    if (kept) return kept;
    return readConsistently(this.deps.replica, () => {
      const selected = this.select(key, parsed, window, limit);
      return withCursor(this.deps.secret, selected.selection, this.hydrate(key, selected, window), parsed, window);
    });
  }

  /** The page when it needs no read of the replica (the page cache holds it, or nothing can match), else null. */
  keptPage(key: string, parsed: ParsedQuery, window: ListWindow): PageOut | null {
    // A city sent twice with different values: no venue is in both (docs/api.md, Listing events).
    if (parsed.q.cityConflict) return NO_MATCH;
    // Outside a transaction: the latest commit's mark (another process's seen at most a few ms late).
    const hit = this.caches.pages.getBody(key, this.caches.replicaMark.read(), window);
    if (!hit) return null;
    return withCursor(this.deps.secret, hit.selection, hit.body, parsed, window);
  }

  /** Geo candidates, then the page's snapshot rows (or a kept selection that provably equals them), in a transaction. */
  select(key: string, { q }: ParsedQuery, window: ListWindow, limit: number) {
    const { replica } = this.deps;
    const { geo: geoIndex, pages, estimates, scans, blocks } = this.caches;
    const geo = q.geo ? geoIndex.find(q.geo, q.includeCentroids) : null;
    const filter = pageFilterOf(q, window, geo);
    const mark = readReplicaState(replica);
    let selection = pages.get(key, mark, window);
    if (!selection) {
      const view = { stats: readSnapshotStats(replica), estimates, scans: { kept: scans, state: mark }, blocks };
      selection = selectPage(replica, view, filter, q.cursor?.position ?? null, limit);
      pages.set(key, mark, window, selection);
    }
    return { filter, geo, selection, mark };
  }

  /** The selected rows, read live and re-checked, as the body up to the page object. Inside the same transaction. */
  hydrate(key: string, { filter, geo, selection, mark }: Selected, window: ListWindow): PageBody {
    const bounds = { latestAfterMs: Infinity, droppedAfterClose: false };
    const live = { baseUrl: this.deps.baseUrl, geo: geo?.live ?? null };
    const data = hydratePageJson(this.deps.replica, this.caches.events, mark, selection.keys, filter, live, bounds);
    const body: PageBody = { headText: headOf(data.join(",")), count: data.length, window: { ...window }, bounds };
    this.caches.pages.setBody(key, selection, body);
    return body;
  }

  /** The 200 with the page (none for HEAD): in parts for a listener that takes them, else a Response. */
  respond(scope: RequestScope, out: PageOut | null): Reply {
    if (out) scope.rows = out.page.count;
    if (scope.takesParts) return new ReplyParts(200, listHeaderFields(scope), out && bodyParts(out));
    return new Response(out && responseBody(out), { status: 200, headers: this.caches.headers.for(scope) });
  }
}
