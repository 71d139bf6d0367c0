/**
 * Stages 4–6 of the list pipeline (docs/api.md, Listing events): offset-style pagination, the polygon plan gate,
 * then every parameter in docs/api.md table's order, the first failure winning. The schemas are
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
  ExcludeAggregatorsParam,
  ExcludeSoldOutParam,
  IncludeCentroidsParam,
  LIST_DEFAULTS,
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

function parseState(query: URLSearchParams): string | null {
  const raw = single(query, "state", "invalid_state");
  if (raw === undefined || raw.trim() === "") return null;
  return parseWith(StateParam, raw, "invalid_state");
}

function parseCity(query: URLSearchParams): { city: string | null; cityConflict: boolean } {
  const values = [...new Set(query.getAll("city").filter((c) => c !== ""))];
  return { city: values[0] ?? null, cityConflict: values.length > 1 };
}

function parseDate(query: URLSearchParams, name: string, schema: typeof StartsAfterParam): number | null {
  const raw = single(query, name, "invalid_date");
  return raw === undefined ? null : parseWith(schema, raw, "invalid_date");
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

function parseBoolean(
  query: URLSearchParams,
  name: string,
  schema: typeof ExcludeSoldOutParam,
  code: ListErrorCode,
  fallback: boolean,
): boolean {
  const raw = single(query, name, code);
  return raw === undefined ? fallback : parseWith(schema, raw, code);
}

/**
 * Stage 6, in docs/api.md table's order; `assertDateRange` follows. A pure function of the query
 * string (and the secret that verifies cursors), so its result may be kept for the same string.
 * `scope`: what a replica of another deployment cannot answer, checked in its parameter's place.
 */
export function parseListParams(query: URLSearchParams, secret: string, scope: ScopeCheck | null = null): ListQuery {
  const state = parseState(query);
  const { city, cityConflict } = parseCity(query);
  const startsAfterMs = parseDate(query, "starts_after", StartsAfterParam);
  const startsBeforeMs = parseDate(query, "starts_before", StartsBeforeParam);
  const sources = parseSources(query);
  if (sources && scope) scope.sources(sources);
  const excludeAggregators = parseBoolean(
    query,
    "exclude_aggregators",
    ExcludeAggregatorsParam,
    "invalid_exclude_aggregators",
    LIST_DEFAULTS.excludeAggregators,
  );
  if (excludeAggregators && scope) scope.excludeAggregators();
  const excludeSoldOut = parseBoolean(
    query,
    "exclude_sold_out",
    ExcludeSoldOutParam,
    "invalid_exclude_sold_out",
    LIST_DEFAULTS.excludeSoldOut,
  );
  const rawLimit = single(query, "limit", "invalid_limit");
  const limit = rawLimit === undefined ? LIST_DEFAULTS.limit : parseWith(LimitParam, rawLimit, "invalid_limit");
  const rawCursor = single(query, "cursor", "invalid_cursor");
  const cursor =
    rawCursor === undefined ? null : decodeCursor(secret, parseWith(CursorParam, rawCursor, "invalid_cursor"));
  const geo = parseGeoParams(query);
  const includeCentroids = parseBoolean(
    query,
    "include_centroids",
    IncludeCentroidsParam,
    "invalid_include_centroids",
    LIST_DEFAULTS.includeCentroids,
  );

  return {
    state,
    city,
    cityConflict,
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
