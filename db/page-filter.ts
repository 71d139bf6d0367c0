/**
 * What a list request asks of its rows (docs/api.md, Listing events), written once: the filter,
 * its SQL terms, and the one row test every other reader applies (kept stores, hydration). A
 * source token matches a source starting with it, `_` any one character: a GLOB in SQL.
 */
import { AGGREGATOR_VENDOR_VALUES } from "./contract.ts";
import type { SqlValue } from "./driver.ts";

/** Candidate venues as the venue tests ask of them (db/geo.ts keeps one with each search). */
export type VenueSet = { has(venueId: number): boolean };

/** A place in (start_ms, id) order: a page's keyset position. */
export type PagePosition = { startMs: number; id: number };

/** Whether `a` comes before `b` in (start_ms, id) order. */
export const before = (a: PagePosition, b: PagePosition) =>
  a.startMs < b.startMs || (a.startMs === b.startMs && a.id < b.id);

/** One snapshot row as page selection reads it. */
export type PageRow = { start_ms: number; id: number; end_ms: number };

/** The first of `count` rows, in (start_ms, id) order in parallel arrays, after `p`. */
export function indexAfter(start: Float64Array, id: Float64Array, count: number, p: PagePosition): number {
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (start[mid] < p.startMs || (start[mid] === p.startMs && id[mid] <= p.id)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export interface PageFilter {
  afterMs: number;
  beforeMs: number;
  state: string | null;
  city: string | null;
  /** Validated source tokens (`_` = any one character), null = unfiltered. */
  sources: readonly string[] | null;
  /** Geo candidate venues, null = no geo filter. */
  venueIds: readonly number[] | null;
  /** Membership of the same venues, when the caller has it (db/geo.ts keeps it with its result). */
  venueSet?: VenueSet | null;
  /** The states of those venues, when the caller knows them: lets selection scan just those states. */
  venueStates?: readonly string[] | null;
  excludeSoldOut: boolean;
  excludeAggregators: boolean;
}

/** A row as the filter reads it: a snapshot row, or an event's live row and its venue's. */
export interface FilterRow {
  startMs: number;
  /** The served end: the end, or the start when there is none or it comes first (db/snapshot.ts). */
  endMs: number;
  state: string;
  city: string;
  source: string;
  venueId: number;
  soldOut: boolean;
  aggregator: boolean;
}

/** Served end of a live row, as the snapshot stores it. */
export const servedEndMs = (startMs: number, endMs: number | null): number => Math.max(endMs ?? startMs, startMs);

const aggregators = new Set<string>(AGGREGATOR_VENDOR_VALUES);

/** Whether a vendor is an aggregator (`exclude_aggregators`), as the snapshot's `aggregator` column says. */
export const isAggregator = (vendor: string): boolean => aggregators.has(vendor);

/** `scraper:fill_more` → GLOB `scraper:fill?more*` plus the literal range before the first `_`. */
export function sourceGlob(token: string): { glob: string; lo: string; hi: string } {
  const cut = token.indexOf("_");
  const lo = cut === -1 ? token : token.slice(0, cut);
  // Sources are [a-z0-9._:-]; '{' sorts after all of them, so [lo, lo + '{') is "starts with lo".
  return { glob: `${token.replaceAll("_", "?")}*`, lo, hi: `${lo}{` };
}

/** Whether `source` starts with one of the tokens, `_` matching any one character: `sourceGlob`'s GLOB. */
export const sourceMatches = (tokens: readonly string[], source: string): boolean =>
  tokens.some((t) => source.length >= t.length && [...t].every((c, i) => c === "_" || c === source[i]));

/** Membership of the candidate venues: the one the filter carries, else a Set built now. */
export const venueSetOf = (f: PageFilter): VenueSet | null =>
  f.venueIds === null ? null : (f.venueSet ?? new Set(f.venueIds));

/** Whether a row starting and ending then lies in the filter's window. */
export const inWindow = (f: PageFilter, startMs: number, endMs: number): boolean =>
  endMs >= f.afterMs && startMs <= f.beforeMs;

/** The filter's row test, its venue set built once: what the filter's SQL terms and window select. */
export function rowMatcher(f: PageFilter): (row: FilterRow) => boolean {
  const venues = venueSetOf(f);
  return (r) =>
    inWindow(f, r.startMs, r.endMs) &&
    (f.state === null || r.state === f.state) &&
    (f.city === null || r.city === f.city) &&
    (f.sources === null || sourceMatches(f.sources, r.source)) &&
    (venues === null || venues.has(r.venueId)) &&
    !(f.excludeSoldOut && r.soldOut) &&
    !(f.excludeAggregators && r.aggregator);
}

/**
 * The filter as WHERE terms over `snapshot` and their parameters: sources by GLOB, as the list of
 * snapshot sources they match, or not at all (read one by one); venues and window unless false;
 * each column named through `col` (the caller decides which may use an index).
 */
export function filterTerms(
  f: PageFilter,
  col: (name: string) => string,
  o: { sources: "glob" | { list: readonly string[] } | "none"; venues: boolean; window: boolean },
): { terms: string[]; params: Record<string, SqlValue> } {
  const terms: string[] = [];
  const params: Record<string, SqlValue> = {};
  for (const name of ["state", "city"] as const) {
    if (f[name] === null) continue;
    terms.push(`${col(name)} = $${name}`);
    params[name] = f[name];
  }
  if (f.sources !== null && o.sources !== "none") {
    if (o.sources !== "glob") {
      terms.push("source IN (SELECT value FROM json_each($sourceList))");
      params.sourceList = JSON.stringify(o.sources.list);
    } else if (f.sources.length === 1) {
      terms.push("+source GLOB $glob");
      params.glob = sourceGlob(f.sources[0]).glob;
    } else {
      terms.push("EXISTS (SELECT 1 FROM json_each($globs) g WHERE snapshot.source GLOB g.value)");
      params.globs = JSON.stringify(f.sources.map((t) => sourceGlob(t).glob));
    }
  }
  if (f.venueIds !== null && o.venues) {
    terms.push(`${col("venue_id")} IN (SELECT value FROM json_each($venues))`);
    params.venues = JSON.stringify(f.venueIds);
  }
  if (f.excludeSoldOut) terms.push("+sold_out = 0");
  if (f.excludeAggregators) terms.push("+aggregator = 0");
  if (o.window) {
    terms.push("start_ms <= $before AND end_ms >= $after");
    params.before = f.beforeMs;
    params.after = f.afterMs;
  }
  return { terms, params };
}
