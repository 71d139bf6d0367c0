/**
 * What a replica of another deployment follows (docs/upstream-records.md, A replica of another
 * deployment): the upstream's list endpoint and the filters of the URL it was given. The filters
 * are checked by the list path's own rules before a scope is made (server/api-scope.ts), so every
 * request built here is one the upstream accepts as well formed.
 */

export interface ApiScope {
  /** The list endpoint without its query, e.g. `https://events.example.com/v1/events`. */
  endpoint: string;
  /** The URL's filters other than `source`, in order, as given: sent with every request. */
  filters: ReadonlyArray<readonly [string, string]>;
  /** The source tokens the URL names, each walked on its own; null: every source. */
  sources: readonly string[] | null;
  /** A circle or polygon: windows of at most 90 days, 5 rate units a request. */
  geo: boolean;
  /** The URL itself asks for `exclude_aggregators=true`: no event of the scope is an aggregator's. */
  excludesAggregators: boolean;
  /** How logs, summaries and /healthz name it: the URL, which holds no secret (the key never is in it). */
  display: string;
}

/** What a request of a walk adds to the scope's filters. */
export interface WalkRequest {
  /** One source token; null: the scope's tokens all together, or none. */
  source: string | null;
  /** The walk that tells aggregators apart (`--aggregators`). */
  excludeAggregators?: boolean;
  startsAfterMs: number | null;
  startsBeforeMs: number | null;
  limit: number;
  cursor: string | null;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The query of one request. A cursor goes with the same filters and dates as the page that gave
 * it (docs/api.md, Pagination); `limit` may change between pages.
 */
export function requestQuery(scope: ApiScope, r: WalkRequest): URLSearchParams {
  const q = new URLSearchParams();
  for (const [name, value] of scope.filters) {
    if (name === "exclude_aggregators" && r.excludeAggregators) continue;
    q.append(name, value);
  }
  if (r.source !== null) q.set("source", r.source);
  else if (scope.sources) q.set("source", scope.sources.join(","));
  if (r.excludeAggregators) q.set("exclude_aggregators", "true");
  if (r.startsAfterMs !== null) q.set("starts_after", iso(r.startsAfterMs));
  if (r.startsBeforeMs !== null) q.set("starts_before", iso(r.startsBeforeMs));
  q.set("limit", String(r.limit));
  if (r.cursor !== null) q.set("cursor", r.cursor);
  return q;
}

/**
 * What the replica records of its scope once a pass completed, for the list path to know which
 * filters it can answer exactly (docs/api.md, A replica of another deployment).
 */
export interface RecordedScope {
  url: string;
  /** The source tokens events were recorded under; null when the URL named none. */
  sources: string[] | null;
  /** `known`: an aggregator walk marked them; `excluded`: the scope has none; `unknown`. */
  aggregators: "known" | "excluded" | "unknown";
}

export function recordedScope(scope: ApiScope, aggregatorWalk: boolean): RecordedScope {
  return {
    url: scope.display,
    sources: scope.sources ? [...scope.sources] : null,
    aggregators: scope.excludesAggregators ? "excluded" : aggregatorWalk ? "known" : "unknown",
  };
}

export function parseRecordedScope(json: string | null): RecordedScope | null {
  if (json === null) return null;
  try {
    return JSON.parse(json) as RecordedScope;
  } catch {
    return null;
  }
}
