/**
 * Stages 4–8 of the list's stages (docs/api.md, "Order of checks"), the first failure winning, and the window a
 * request reads (docs/api.md, "Date window"). The schemas are server/params.ts; this module owns the rules that span
 * values: empty values dropped, repeats, comma-separated sources, and what a replica of another deployment refuses.
 */
import * as v from "valibot";
import { DAY_MS, LIST, type ListErrorCode, UNSUPPORTED_PAGINATION_PARAMS } from "../../db/contract.ts";
import type { Db } from "../../db/driver.ts";
import type { PageFilter } from "../../db/events-query.ts";
import type { GeoCandidates } from "../../db/geo.ts";
import { parseRecordedScope, type RecordedScope } from "../../sync/api/scope.ts";
import { assertCursorMatches, decodeCursor, filterFingerprint } from "../cursor.ts";
import { ApiError } from "../errors.ts";
import * as param from "../params.ts";
import { isGeoRequest, parseGeoParams, single } from "../params-geo.ts";

export type ListQuery = ReturnType<typeof parseListParams>;

/** What a query string decides (stages 4–6 are pure functions of it), with its geo cost and its polygon gate. */
export type ParsedQuery = ReturnType<typeof parseQuery>;

export type ListWindow = Pick<PageFilter, "afterMs" | "beforeMs">;

const DEFAULTS = param.LIST_DEFAULTS;

const MESSAGES: Partial<Record<ListErrorCode, string>> = {
  invalid_state: "`state` must be a two-letter US state code (50 states plus DC).",
  invalid_date:
    "`starts_after` and `starts_before` must be ISO 8601: `YYYY-MM-DD` or a date-time such as `2026-12-01T20:00:00Z`.",
  invalid_source:
    "Each `source` token must be 1 to 64 characters of `a-z 0-9 . _ : -` starting with a letter or digit, e.g. `ticketmaster` or `scraper:fillmore`.",
  invalid_exclude_aggregators: "`exclude_aggregators` must be `true` or `false`.",
  invalid_exclude_sold_out: "`exclude_sold_out` must be `true` or `false`.",
  invalid_include_centroids: "`include_centroids` must be `true` or `false`.",
  invalid_limit: "`limit` must be an integer from 1 to 100.",
  invalid_date_range: "`starts_before` must be after `starts_after` (default: now).",
  lookahead_not_in_plan:
    "The requested dates reach beyond your plan's lookahead horizon. Start a new request within it, or upgrade.",
  feature_not_in_plan: "Custom polygons need Business or Enterprise access.",
};

const fail = (code: ListErrorCode, message = MESSAGES[code]) => new ApiError(code, message);

type Schema<T> = v.GenericSchema<string, T>;

function parseWith<T>(schema: Schema<T>, raw: string, code: ListErrorCode): T {
  const result = v.safeParse(schema, raw);
  if (!result.success) throw fail(code);
  return result.output;
}

/** A single-valued parameter's value, `absent` when it is not sent; its code is `invalid_<name>` unless given. */
function one<T, A>(query: URLSearchParams, name: string, schema: Schema<T>, absent: A, code?: ListErrorCode) {
  const error = code ?? (`invalid_${name}` as ListErrorCode);
  const raw = single(query, name, error);
  return raw === undefined ? absent : parseWith(schema, raw, error);
}

/** Stage 4: `page`, `offset`, `next_cursor`, `nextCursor` are refused even empty or beside a cursor. */
export function assertKeysetPagination(query: URLSearchParams): void {
  const found = UNSUPPORTED_PAGINATION_PARAMS.find((p) => query.has(p));
  if (found) {
    throw new ApiError(
      "unsupported_pagination",
      `\`${found}\` is not supported. Page with \`cursor\` set to \`page.nextCursor\` until \`page.hasMore\` is false.`,
    );
  }
}

/** Stage 5: the plan gate runs before the ring is parsed, so even an empty `polygon` is gated. */
function assertPolygonAllowed(sent: boolean, polygons: boolean): void {
  if (sent && !polygons) throw fail("feature_not_in_plan");
}

/** Stages 4–6 of a query string; `scope`: what a replica of another deployment cannot answer. */
export function parseQuery(query: URLSearchParams, secret: string, polygons: boolean, scope: ScopeCheck | null) {
  assertKeysetPagination(query);
  const polygon = query.has("polygon");
  assertPolygonAllowed(polygon, polygons);
  const q = parseListParams(query, secret, scope);
  return { q, fingerprint: filterFingerprint(query), geo: isGeoRequest(query), polygon };
}

/** Stages 5 and 6's checks that depend on the plan and the replica, for a query string parsed before. */
export function recheck(parsed: ParsedQuery, polygons: boolean, scope: ScopeCheck | null): ParsedQuery {
  assertPolygonAllowed(parsed.polygon, polygons);
  if (scope && parsed.q.sources) scope.sources(parsed.q.sources);
  if (scope && parsed.q.excludeAggregators) scope.excludeAggregators();
  return parsed;
}

function parseSources(query: URLSearchParams): string[] | null {
  const tokens = new Set<string>();
  for (const value of query.getAll("source")) {
    for (const part of value.split(",")) {
      const token = part.trim();
      if (token !== "") tokens.add(parseWith(param.SourceTokenParam, token, "invalid_source"));
    }
  }
  return tokens.size === 0 ? null : [...tokens];
}

/**
 * Stage 6, in docs/api.md table's order: a pure function of the query string (and the secret that verifies cursors).
 * `scope`: what a replica of another deployment cannot answer, checked in its parameter's place.
 */
export function parseListParams(query: URLSearchParams, secret: string, scope: ScopeCheck | null = null) {
  const rawState = single(query, "state", "invalid_state");
  const state = rawState?.trim() ? parseWith(param.StateParam, rawState, "invalid_state") : null;
  const cities = [...new Set(query.getAll("city").filter((c) => c !== ""))];
  const startsAfterMs = one(query, "starts_after", param.StartsAfterParam, null, "invalid_date");
  const startsBeforeMs = one(query, "starts_before", param.StartsBeforeParam, null, "invalid_date");
  const sources = parseSources(query);
  if (sources && scope) scope.sources(sources);
  const noAggregators = one(query, "exclude_aggregators", param.ExcludeAggregatorsParam, DEFAULTS.excludeAggregators);
  if (noAggregators && scope) scope.excludeAggregators();
  const excludeSoldOut = one(query, "exclude_sold_out", param.ExcludeSoldOutParam, DEFAULTS.excludeSoldOut);
  const limit = one(query, "limit", param.LimitParam, DEFAULTS.limit);
  const rawCursor = one(query, "cursor", param.CursorParam, null);
  const cursor = rawCursor === null ? null : decodeCursor(secret, rawCursor);
  const geo = parseGeoParams(query);
  const includeCentroids = one(query, "include_centroids", param.IncludeCentroidsParam, DEFAULTS.includeCentroids);
  const [city = null] = cities;
  return {
    state,
    city,
    /** `city` repeated with different values: no venue is in two cities at once. */
    cityConflict: cities.length > 1,
    /** Explicit dates, null when absent. */
    startsAfterMs,
    startsBeforeMs,
    /** Distinct source tokens, null when no token was sent. */
    sources,
    excludeAggregators: noAggregators,
    excludeSoldOut,
    limit,
    cursor,
    geo,
    includeCentroids,
  };
}

/**
 * `invalid_date_range` (against the window's opening: explicit, else pinned by a current cursor, else now), stage 7
 * (explicit dates or a current cursor's close past the horizon from now; null: no tier cap), stage 8 (the cursor's
 * filters), then the window the request reads.
 */
export function windowOf({ q, fingerprint }: ParsedQuery, horizonMs: number | null, nowMs: number): ListWindow {
  const opensAt = q.startsAfterMs ?? (q.cursor?.version === 2 ? q.cursor.afterMs : nowMs);
  if (q.startsBeforeMs !== null && q.startsBeforeMs <= opensAt) throw fail("invalid_date_range");
  const limit = horizonMs === null ? Infinity : nowMs + horizonMs;
  const beyond =
    (q.startsAfterMs ?? -Infinity) > limit ||
    (q.startsBeforeMs ?? -Infinity) > limit ||
    (q.cursor?.version === 2 && q.cursor.beforeMs > limit);
  if (beyond) throw fail("lookahead_not_in_plan");
  assertCursorMatches(q.cursor, fingerprint);
  return resolveWindow(q, nowMs, horizonMs);
}

/** The window this request reads: pinned by a current cursor (never extended or slid), else computed from now. */
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

export type ScopeCheck = ReturnType<typeof scopeCheck>;

const SCOPE_SQL =
  "SELECT (SELECT value FROM sync_state WHERE key = 'source_kind') AS kind, (SELECT value FROM sync_state WHERE key = 'source_scope') AS scope";

/** The replica's `ScopeCheck`, null when it answers every filter (kept per replica mark: server/list/caches.ts). */
export function readScopeCheck(db: Db): ScopeCheck | null {
  const row = db.prepare<{ kind: string | null; scope: string | null }>(SCOPE_SQL).get();
  return row?.kind === "api" ? scopeCheck(parseRecordedScope(row.scope)) : null;
}

const named = (tokens: readonly string[]) => tokens.map((t) => `\`${t}\``).join(", ");

/**
 * What a replica of another deployment refuses in stage 6 rather than answer with a plausible, wrong page
 * (docs/api.md, "A replica of another deployment"): a `source` outside the tokens its URL named, and
 * `exclude_aggregators=true` when no aggregator walk marked its events. `scope`: its last complete pass's, or null.
 */
function scopeCheck(scope: RecordedScope | null) {
  const recorded = scope?.sources ?? null;
  return {
    sources(tokens: readonly string[]): void {
      const unknown = tokens.filter((t) => !recorded?.includes(t));
      if (unknown.length === 0) return;
      throw new ApiError(
        "invalid_source",
        recorded
          ? `This server is a replica of another deployment and knows its events' sources only as ${named(recorded)}; ` +
              `${named(unknown)} cannot be answered exactly here. Send one of those, or ask the upstream.`
          : "This server is a replica of another deployment, whose events do not say their source; " +
              "`source` cannot be answered exactly here. Ask the upstream.",
      );
    },
    excludeAggregators(): void {
      if (scope?.aggregators === "known" || scope?.aggregators === "excluded") return;
      throw new ApiError(
        "invalid_exclude_aggregators",
        "This server is a replica of another deployment that does not know which of its events come from aggregators; " +
          "`exclude_aggregators=true` cannot be answered exactly here (its operator can sync with --aggregators). Ask the upstream.",
      );
    },
  };
}
