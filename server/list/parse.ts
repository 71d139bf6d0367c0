/**
 * Stages 4–6 of the list's stages (docs/api.md, Listing events): offset-style pagination, the polygon
 * plan gate, then every parameter in docs/api.md table's order, the first failure winning. The schemas are
 * server/params.ts; this module owns the rules that span values: empty values dropped, repeats,
 * comma-separated sources.
 */
import * as v from "valibot";
import { type ListErrorCode, UNSUPPORTED_PAGINATION_PARAMS } from "../../db/contract.ts";
import type { GeoFilter } from "../../db/geo.ts";
import { type Cursor, decodeCursor } from "../cursor.ts";
import { ApiError } from "../errors.ts";
import {
  CursorParam,
  LIST_DEFAULTS as DEFAULTS,
  ExcludeAggregatorsParam,
  ExcludeSoldOutParam,
  IncludeCentroidsParam,
  LimitParam,
  SourceTokenParam,
  StartsAfterParam,
  StartsBeforeParam,
  StateParam,
} from "../params.ts";
import { parseGeoParams } from "../params-geo.ts";
import type { ScopeCheck } from "./replica-scope.ts";

export interface ListQuery {
  state: string | null;
  city: string | null;
  /** True when `city` was repeated with different values: no venue is in two cities at once. */
  cityConflict: boolean;
  /** Explicit dates (ms), null when absent. */
  startsAfterMs: number | null;
  startsBeforeMs: number | null;
  /** Distinct source tokens, null when no token was sent. */
  sources: string[] | null;
  excludeAggregators: boolean;
  excludeSoldOut: boolean;
  limit: number;
  cursor: Cursor | null;
  geo: GeoFilter | null;
  includeCentroids: boolean;
}

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
};

const fail = (code: ListErrorCode, message = MESSAGES[code]) => new ApiError(code, message);

/** The one value of a single-valued parameter; a repeated one is invalid (docs/api.md, Listing events). */
function single(query: URLSearchParams, name: string, code: ListErrorCode): string | undefined {
  const all = query.getAll(name);
  if (all.length > 1) throw fail(code, `\`${name}\` may be given only once.`);
  return all[0];
}

function parseWith<T>(schema: v.GenericSchema<string, T>, raw: string, code: ListErrorCode): T {
  const result = v.safeParse(schema, raw);
  if (!result.success) throw fail(code);
  return result.output;
}

/** A single-valued parameter's value, `absent` when it is not sent; its code is `invalid_<name>` unless given. */
function one<T, A>(
  query: URLSearchParams,
  name: string,
  schema: v.GenericSchema<string, T>,
  absent: A,
  code?: ListErrorCode,
) {
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
export function assertPolygonAllowed(polygonSent: boolean, polygons: boolean): void {
  if (polygonSent && !polygons) {
    throw new ApiError("feature_not_in_plan", "Custom polygons need Business or Enterprise access.");
  }
}

function parseSources(query: URLSearchParams): string[] | null {
  const tokens = new Set<string>();
  for (const value of query.getAll("source")) {
    for (const part of value.split(",")) {
      const token = part.trim();
      if (token !== "") tokens.add(parseWith(SourceTokenParam, token, "invalid_source"));
    }
  }
  return tokens.size === 0 ? null : [...tokens];
}

/**
 * Stage 6, in docs/api.md table's order; `assertDateRange` follows. A pure function of the query
 * string (and the secret that verifies cursors), so its result may be kept for the same string.
 * `scope`: what a replica of another deployment cannot answer, checked in its parameter's place.
 */
export function parseListParams(query: URLSearchParams, secret: string, scope: ScopeCheck | null = null): ListQuery {
  const rawState = single(query, "state", "invalid_state");
  const state = rawState?.trim() ? parseWith(StateParam, rawState, "invalid_state") : null;
  const cities = [...new Set(query.getAll("city").filter((c) => c !== ""))];
  const startsAfterMs = one(query, "starts_after", StartsAfterParam, null, "invalid_date");
  const startsBeforeMs = one(query, "starts_before", StartsBeforeParam, null, "invalid_date");
  const sources = parseSources(query);
  if (sources && scope) scope.sources(sources);
  const excludeAggregators = one(query, "exclude_aggregators", ExcludeAggregatorsParam, DEFAULTS.excludeAggregators);
  if (excludeAggregators && scope) scope.excludeAggregators();
  const excludeSoldOut = one(query, "exclude_sold_out", ExcludeSoldOutParam, DEFAULTS.excludeSoldOut);
  const limit = one(query, "limit", LimitParam, DEFAULTS.limit);
  const rawCursor = one(query, "cursor", CursorParam, null);
  const cursor = rawCursor === null ? null : decodeCursor(secret, rawCursor);
  const geo = parseGeoParams(query);
  const includeCentroids = one(query, "include_centroids", IncludeCentroidsParam, DEFAULTS.includeCentroids);
  const [city = null] = cities;
  return {
    state,
    city,
    cityConflict: cities.length > 1,
    startsAfterMs,
    startsBeforeMs,
    sources,
    excludeAggregators,
    excludeSoldOut,
    limit,
    cursor,
    geo,
    includeCentroids,
  };
}

/** Rule 4: measured against the window's opening — explicit, else pinned by a current cursor, else now. */
export function assertDateRange(q: ListQuery, nowMs: number): void {
  const opensAt = q.startsAfterMs ?? (q.cursor?.version === 2 ? q.cursor.afterMs : nowMs);
  if (q.startsBeforeMs !== null && q.startsBeforeMs <= opensAt) {
    throw new ApiError("invalid_date_range", "`starts_before` must be after `starts_after` (default: now).");
  }
}
