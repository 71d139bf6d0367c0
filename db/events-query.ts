/**
 * Page selection for `GET /v1/events` over the serving snapshot (CONTRACT §4, spec "Pagination
 * rules"). Keyset over (start_ms, id): a page is every snapshot row after the position, inside
 * the window and the filters, in that order, `limit + 1` of them so the extra row says hasMore.
 *
 * The snapshot splits short and long events (db/replica.ts). A page query is a merge of two
 * ordered index range scans, each `LIMIT n+1`:
 *   long = 0: start_ms >= after - LONG_EVENT_MS (a short event that is still running started then)
 *   long = 1: start_ms >= after - longest long event (read from the partial span index)
 * so no query reads more than its page plus what its filters skip, whatever page it is on.
 *
 * Index per filter combination (chosen here, forced with INDEXED BY so plans cannot drift):
 *   source set estimated small → snapshot_source, rows sorted (bounded by the estimate)
 *   geo venues estimated small → snapshot_venue, rows sorted (bounded by the estimate)
 *   city (+ state)             → snapshot_state_city / snapshot_city, time-ordered
 *   state                      → snapshot_state, time-ordered
 *   otherwise                  → the primary key, time-ordered
 * Everything else is a residual filter on the chosen scan. "Small" means cheaper to sort than to
 * skip: below sqrt((n+1) · events), the break-even of sorting k rows against scanning (n+1)/f.
 */
import { LRUCache } from "lru-cache";
import { LONG_EVENT_MS } from "./contract.ts";
import type { Db, SqlValue } from "./driver.ts";

export interface PagePosition {
  startMs: number;
  id: number;
}

/** Before every row: (start, id) > (MIN, 0) holds for all rows. */
export const FIRST_POSITION: PagePosition = { startMs: Number.MIN_SAFE_INTEGER, id: 0 };

export interface PageFilter {
  afterMs: number;
  beforeMs: number;
  state: string | null;
  city: string | null;
  /** Validated source tokens (`_` = any one character), null = unfiltered. */
  sources: readonly string[] | null;
  /** Geo candidate venues, null = no geo filter. */
  venueIds: readonly number[] | null;
  excludeSoldOut: boolean;
  excludeAggregators: boolean;
}

export interface PageSelection {
  /** At most `limit` snapshot rows, in page order. */
  keys: PagePosition[];
  hasMore: boolean;
}

export type PagePlan = "source" | "venue" | "state_city" | "city" | "state" | "time";

const INDEX: Record<PagePlan, string> = {
  source: "INDEXED BY snapshot_source",
  venue: "INDEXED BY snapshot_venue",
  state_city: "INDEXED BY snapshot_state_city",
  city: "INDEXED BY snapshot_city",
  state: "INDEXED BY snapshot_state",
  time: "NOT INDEXED", // WITHOUT ROWID: the table itself, i.e. the (long, start_ms, id) key
};

/** `scraper:fill_more` → GLOB `scraper:fill?more*` plus the literal range before the first `_`. */
export function sourceGlob(token: string): { glob: string; lo: string; hi: string } {
  const cut = token.indexOf("_");
  const lo = cut === -1 ? token : token.slice(0, cut);
  // Sources are [a-z0-9._:-]; '{' sorts after all of them, so [lo, lo + '{') is "starts with lo".
  return { glob: `${token.replaceAll("_", "?")}*`, lo, hi: `${lo}{` };
}

interface Stats {
  generation: number;
  events: number;
  venues: number;
}

const estimateCaches = new WeakMap<Db, LRUCache<string, number>>();

function readStats(db: Db): Stats {
  return db.prepare<Stats>("SELECT generation, events, venues FROM snapshot_stats WHERE id = 1").get() ?? {
    generation: -1, events: 0, venues: 0,
  };
}

/** Snapshot rows whose source matches a token, cached per snapshot generation. */
function estimateSourceRows(db: Db, generation: number, tokens: readonly string[]): number {
  let cache = estimateCaches.get(db);
  if (!cache) estimateCaches.set(db, (cache = new LRUCache({ max: 2000 })));
  let total = 0;
  for (const token of tokens) {
    const key = `${generation}\n${token}`;
    let n = cache.get(key);
    if (n === undefined) {
      const g = sourceGlob(token);
      n = Number(
        db.prepare<{ n: number | null }>(
          "SELECT sum(events) AS n FROM snapshot_sources WHERE source >= $lo AND source < $hi AND source GLOB $glob",
        ).get(g)?.n ?? 0,
      );
      cache.set(key, n);
    }
    total += n;
  }
  return total;
}

/** The exact list of snapshot sources matching any token (read fresh: it decides the result). */
function matchingSources(db: Db, tokens: readonly string[]): string[] {
  const out = new Set<string>();
  const stmt = db.prepare<{ source: string }>(
    "SELECT source FROM snapshot_sources WHERE source >= $lo AND source < $hi AND source GLOB $glob",
  );
  for (const token of tokens) for (const row of stmt.all(sourceGlob(token))) out.add(row.source);
  return [...out];
}

function longestLongEventMs(db: Db): number | null {
  const row = db
    .prepare<{ span: number | null }>("SELECT max(end_ms - start_ms) AS span FROM snapshot INDEXED BY snapshot_span WHERE long = 1")
    .get();
  return row?.span ?? null;
}

/** Lexicographic max of the cursor position and "start_ms >= floorMs". */
function lowerBound(position: PagePosition, floorMs: number): PagePosition {
  const floor = { startMs: floorMs - 1, id: Number.MAX_SAFE_INTEGER };
  const after = position.startMs > floor.startMs || (position.startMs === floor.startMs && position.id >= floor.id);
  return after ? position : floor;
}

/** The filter columns each plan's index is keyed on (after `long`). */
const PLAN_COLUMNS: Record<PagePlan, readonly string[]> = {
  source: ["source"],
  venue: ["venue_id"],
  state_city: ["state", "city"],
  city: ["city"],
  state: ["state"],
  time: [],
};

export interface PageQuery {
  plan: PagePlan;
  sql: string;
  params: Record<string, SqlValue>;
}

/** Builds the merged short/long query. Exported for the query-plan test. */
export function buildPageQuery(
  plan: PagePlan,
  filter: PageFilter,
  sourceList: readonly string[] | null,
  bounds: { short: PagePosition; long: PagePosition },
  limit: number,
): PageQuery {
  const params: Record<string, SqlValue> = {
    before: filter.beforeMs, after: filter.afterMs, n1: limit + 1,
    ls0: bounds.short.startMs, lid0: bounds.short.id, ls1: bounds.long.startMs, lid1: bounds.long.id,
  };
  // Columns outside the plan's index get a unary plus, so the planner cannot pick another
  // index for them (NOT INDEXED alone does not stop it on a WITHOUT ROWID table).
  const keyed = PLAN_COLUMNS[plan];
  const col = (name: string) => (keyed.includes(name) ? name : `+${name}`);
  const terms: string[] = [];
  if (filter.state !== null) (terms.push(`${col("state")} = $state`), (params.state = filter.state));
  if (filter.city !== null) (terms.push(`${col("city")} = $city`), (params.city = filter.city));
  if (sourceList !== null) {
    terms.push("source IN (SELECT value FROM json_each($sourceList))");
    params.sourceList = JSON.stringify(sourceList);
  } else if (filter.sources?.length === 1) {
    terms.push("+source GLOB $glob");
    params.glob = sourceGlob(filter.sources[0]).glob;
  } else if (filter.sources) {
    terms.push("EXISTS (SELECT 1 FROM json_each($globs) g WHERE snapshot.source GLOB g.value)");
    params.globs = JSON.stringify(filter.sources.map((t) => sourceGlob(t).glob));
  }
  if (filter.venueIds !== null) {
    terms.push(`${col("venue_id")} IN (SELECT value FROM json_each($venues))`);
    params.venues = JSON.stringify(filter.venueIds);
  }
  if (filter.excludeSoldOut) terms.push("sold_out = 0");
  if (filter.excludeAggregators) terms.push("aggregator = 0");
  const half = (long: 0 | 1) =>
    `SELECT start_ms, id FROM snapshot ${INDEX[plan]} WHERE long = ${long}` +
    terms.map((t) => ` AND ${t}`).join("") +
    ` AND (start_ms, id) > ($ls${long}, $lid${long}) AND start_ms <= $before AND end_ms >= $after` +
    " ORDER BY start_ms, id LIMIT $n1";
  const sql = `SELECT * FROM (${half(0)}) UNION ALL SELECT * FROM (${half(1)}) ORDER BY 1, 2 LIMIT $n1`;
  return { plan, sql, params };
}

/** Picks the index for a filter combination (see the file comment). */
export function choosePlan(filter: PageFilter, est: { sourceRows: number | null; venueRows: number | null; threshold: number }): PagePlan {
  if (est.sourceRows !== null && est.sourceRows <= est.threshold) return "source";
  if (est.venueRows !== null && est.venueRows <= est.threshold) return "venue";
  if (filter.city !== null) return filter.state !== null ? "state_city" : "city";
  if (filter.state !== null) return "state";
  return "time";
}

/**
 * Selects one page. Call inside `readConsistently` so estimates, the long-event bound and the
 * rows all come from one snapshot.
 */
export function selectPage(db: Db, filter: PageFilter, position: PagePosition | null, limit: number): PageSelection & { plan: PagePlan | null } {
  const empty = { keys: [], hasMore: false, plan: null };
  if (filter.venueIds?.length === 0) return empty;
  const stats = readStats(db);
  const threshold = Math.sqrt((limit + 1) * Math.max(stats.events, 1));
  const sourceRows = filter.sources ? estimateSourceRows(db, stats.generation, filter.sources) : null;
  const venueRows =
    filter.venueIds !== null && stats.venues > 0 ? (stats.events * filter.venueIds.length) / stats.venues : null;
  const plan = choosePlan(filter, { sourceRows, venueRows, threshold });

  let sourceList: string[] | null = null;
  if (plan === "source") {
    sourceList = matchingSources(db, filter.sources!);
    if (sourceList.length === 0) return empty;
  }
  const from = position ?? FIRST_POSITION;
  const longest = longestLongEventMs(db) ?? LONG_EVENT_MS;
  const bounds = {
    short: lowerBound(from, filter.afterMs - LONG_EVENT_MS),
    long: lowerBound(from, filter.afterMs - longest),
  };
  const q = buildPageQuery(plan, filter, sourceList, bounds, limit);
  const rows = db.prepare<{ start_ms: number; id: number }>(q.sql).all(q.params);
  const keys = rows.slice(0, limit).map((r) => ({ startMs: Number(r.start_ms), id: Number(r.id) }));
  return { keys, hasMore: rows.length > limit, plan };
}

/**
 * Runs `fn` in one read transaction, so page selection and hydration see one state of the
 * replica even while another process commits a sync (WAL readers keep their snapshot).
 */
export function readConsistently<T>(db: Db, fn: () => T): T {
  db.exec("BEGIN");
  try {
    return fn();
  } finally {
    db.exec("COMMIT");
  }
}
