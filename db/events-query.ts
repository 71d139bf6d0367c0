/**
 * Page selection for `GET /v1/events` over the serving snapshot (docs/api.md, Serving snapshot
 * and Pagination). Keyset over (start_ms, id): a page is every snapshot row after the position, inside
 * the window and the filters, in that order, `limit + 1` of them so the extra row says hasMore.
 *
 * The snapshot splits short and long events (db/replica.ts). A page reads two ordered index
 * range scans and merges them:
 *   long = 0: start_ms >= after - LONG_EVENT_MS (a short event still running started then)
 *   long = 1: start_ms >= after - the longest long event (db/snapshot-stats.ts)
 * each from the cursor position on, so no query depends on how many pages came before. The
 * filter and its SQL terms are db/page-filter.ts's. A half may come from a store the caller keeps
 * (long rows: db/long-events.ts; blocks of short rows: db/short-blocks.ts; state ranges geo pages
 * scan: db/kept-scans.ts) only when the store's `supports(filter)` admits the filter.
 *
 * Index per filter combination (chosen here, forced with INDEXED BY so plans cannot drift):
 *   few rows at the sources    → snapshot_source, rows sorted (bounded by the count)
 *   few rows at the geo venues → snapshot_venue, rows sorted (bounded by the count)
 *   city (+ state)             → snapshot_city, time-ordered (state is a residual filter: a city
 *                                name in several states costs a few extra index rows, cheaper
 *                                than a sixth snapshot index to build on every full refresh)
 *   state                      → snapshot_state, time-ordered
 *   otherwise                  → the primary key, time-ordered
 * Everything else is a residual filter on the chosen scan. "Few" means cheaper to sort than to
 * skip: k of N rows match (f = k/N); sorting costs about f·R for R rows in the window, an ordered
 * scan about (n+1)/f, so sorting wins when k <= sqrt((n+1)·N) (taking R <= N leans towards the
 * scan). Geo venues on an ordered scan are checked in JS (db/kept-scans.ts), scanning in growing
 * chunks: cheaper than building a 2,000-entry SQL list for each half of every page. When the
 * caller keeps state ranges in memory, a geo filter alone scans its states whenever the scan is
 * expected to fit in half a kept range (want × state rows / venue rows), sorting only beyond.
 */
import { LONG_EVENT_MS } from "./contract.ts";
import type { Db, SqlValue } from "./driver.ts";
import { KeptScans, type ScannedRow, scanKept, scanVenues } from "./kept-scans.ts";
import { LongEvents } from "./long-events.ts";
import { filterTerms, type PageFilter, type PagePosition, venueSetOf } from "./page-filter.ts";
import { SnapshotBlocks } from "./short-blocks.ts";
import type { SnapshotEstimates, SnapshotStats } from "./snapshot-stats.ts";

export type { PageFilter, PagePosition };

/** Before every row: (start, id) > (MIN, 0) holds for all rows. */
export const FIRST_POSITION: PagePosition = { startMs: Number.MIN_SAFE_INTEGER, id: 0 };

export type PagePlan = "source" | "source_each" | "venue" | "venue_states" | "state_city" | "city" | "state" | "time";

export interface PageSelection {
  /** At most `limit` snapshot rows, in page order. */
  keys: PagePosition[];
  hasMore: boolean;
  /** The index used; null when the filters could match nothing. */
  plan: PagePlan | null;
  /**
   * The earliest end (ms) among the rows read for the page, the `limit + 1`-th included;
   * Infinity when there are none. Until then the page cannot lose a row to a sliding window
   * (server/list/page-cache.ts).
   */
  earliestEndMs: number;
}

/**
 * The column each plan's index leads with (`long` follows it, then start_ms, id: replica v7);
 * none: the table itself, WITHOUT ROWID, i.e. the (long, start_ms, id) key.
 */
const PLAN_COLUMN: Record<PagePlan, string | null> = {
  source: "source",
  source_each: "source",
  venue: "venue_id",
  venue_states: "state",
  state_city: "city", // replica v5 dropped snapshot_state_city
  city: "city",
  state: "state",
  time: null,
};

const indexOf = (column: string | null) =>
  column === null ? "NOT INDEXED" : `INDEXED BY snapshot_${column === "venue_id" ? "venue" : column}`;

export interface HalfQuery {
  sql: string;
  /** Bind with `ls`, `lid` (exclusive lower bound) and `lim` added. */
  params: Record<string, SqlValue>;
}

/**
 * One half (short or long events) of a page query. With `venuesInSql` false the venue filter is
 * left to the caller and `venue_id` is selected; with `windowInSql` false so is the window (a
 * range kept across pages, db/kept-scans.ts). Exported for the query-plan test.
 */
export function buildHalfQuery(
  plan: PagePlan,
  long: 0 | 1,
  filter: PageFilter,
  sourceList: readonly string[] | null,
  venuesInSql = true,
  windowInSql = true,
): HalfQuery {
  // Columns outside the plan's index get a unary plus, so the planner cannot pick another
  // index for them (NOT INDEXED alone does not stop it on a WITHOUT ROWID table).
  const col = (name: string) => (PLAN_COLUMN[plan] === name ? name : `+${name}`);
  // One source, or one state, of several read in turn: the caller binds `part` (selectPage).
  const part = plan === "source_each" ? "source = $part" : plan === "venue_states" ? "state = $part" : null;
  const sources = plan === "source_each" ? "none" : sourceList !== null ? { list: sourceList } : "glob";
  const { terms, params } = filterTerms(filter, col, { sources, venues: venuesInSql, window: windowInSql });
  if (part !== null) {
    terms.unshift(part);
    params.part = "";
  }
  const columns = venuesInSql ? "start_ms, id, end_ms" : "start_ms, id, end_ms, venue_id";
  const sql =
    `SELECT ${columns} FROM snapshot ${indexOf(PLAN_COLUMN[plan])} WHERE long = ${long}` +
    terms.map((t) => ` AND ${t}`).join("") +
    " AND (start_ms, id) > ($ls, $lid) ORDER BY start_ms, id LIMIT $lim";
  return { sql, params };
}

/** Sources read one by one, each in index order, when a filter matches at most this many. */
export const MAX_SOURCES_EACH = 32;

export interface PlanEstimates {
  sourceRows: number | null;
  /** How many snapshot sources the source filter matches, when it was read. */
  sourceCount?: number | null;
  venueRows: number | null;
  /** Snapshot rows in the geo candidates' states, when they are known. */
  venueStateRows?: number | null;
  /** sqrt((limit + 1) · rows of the snapshot): see the file comment. */
  threshold: number;
  want?: number;
  /**
   * Rows a kept state range may hold (db/kept-scans.ts), when the caller keeps them: a geo
   * filter alone then scans its states in memory when the scan is expected to fit in half that.
   */
  keptScanRows?: number;
}

/** Picks the index for a filter combination (see the file comment). */
export function choosePlan(filter: PageFilter, est: PlanEstimates): PagePlan {
  const alone = filter.state === null && filter.city === null && filter.venueIds === null;
  if (est.sourceCount != null && est.sourceCount <= MAX_SOURCES_EACH && alone) return "source_each";
  if (est.sourceRows !== null && est.sourceRows <= est.threshold) return "source";
  // Sorting a venue set's rows against scanning its states' rows in order.
  const venueThreshold =
    est.venueStateRows != null && est.want !== undefined ? Math.sqrt(est.want * est.venueStateRows) : est.threshold;
  if (est.venueRows !== null && est.venueRows <= venueThreshold && !fitsKeptScan(filter, est)) return "venue";
  if (filter.city !== null) return filter.state !== null ? "state_city" : "city";
  if (filter.state !== null) return "state";
  if (filter.venueIds !== null && filter.venueStates?.length) return "venue_states";
  return "time";
}

/** A geo filter alone whose state ranges, scanned in memory, should yield a page within half a kept range. */
function fitsKeptScan(filter: PageFilter, est: PlanEstimates): boolean {
  if (!est.keptScanRows || est.want === undefined || est.venueStateRows == null || !est.venueRows) return false;
  if (!KeptScans.supports(filter)) return false;
  return (est.want * est.venueStateRows) / est.venueRows <= est.keptScanRows / 2;
}

/** Lexicographic max of the cursor position and "start_ms >= floorMs". */
function lowerBound(position: PagePosition, floorMs: number): PagePosition {
  const floor = { startMs: floorMs - 1, id: Number.MAX_SAFE_INTEGER };
  const later = position.startMs > floor.startMs || (position.startMs === floor.startMs && position.id >= floor.id);
  return later ? position : floor;
}

type SnapshotRow = { start_ms: number; id: number; end_ms: number; venue_id?: number };

const byKey = (a: SnapshotRow, b: SnapshotRow) => a.start_ms - b.start_ms || a.id - b.id;

/**
 * What a selection reads about the snapshot besides its rows: its stats and cached estimates,
 * and the stores the caller keeps (the state ranges for the read transaction's replica state).
 */
export interface SnapshotView {
  stats: SnapshotStats;
  estimates: SnapshotEstimates;
  scans?: { kept: KeptScans; state: string } | null;
  longs?: LongEvents | null;
  blocks?: SnapshotBlocks | null;
}

/**
 * Selects one page. Call inside `readConsistently` so the counts, the long-event bound and the
 * rows all come from one snapshot (`view.stats` read in the same transaction).
 */
export function selectPage(
  db: Db,
  view: SnapshotView,
  filter: PageFilter,
  position: PagePosition | null,
  limit: number,
): PageSelection {
  const empty: PageSelection = { keys: [], hasMore: false, plan: null, earliestEndMs: Infinity };
  if (filter.venueIds?.length === 0) return empty;
  const { stats, estimates } = view;
  const want = limit + 1;
  const threshold = Math.sqrt(want * Math.max(stats.events, 1));
  // The sources a filter matches: this list decides the result (kept per generation, like the stats).
  const sourceList = filter.sources ? estimates.matchingSources(db, stats, filter.sources) : null;
  if (sourceList?.length === 0) return empty;
  const sourceRows = filter.sources ? estimates.sourceRows(db, stats, filter.sources) : null;
  const venueRows = filter.venueIds ? estimates.venueRows(db, stats, filter.venueIds) : null;
  const venueStateRows =
    filter.venueIds && filter.venueStates ? estimates.stateRows(db, stats, filter.venueStates) : null;
  const plan = choosePlan(filter, {
    sourceRows,
    sourceCount: sourceList?.length ?? null,
    venueRows,
    venueStateRows,
    threshold,
    want,
    keptScanRows: view.scans?.kept.maxRows,
  });

  const from = position ?? FIRST_POSITION;
  const longest = estimates.longestLongEventMs(db, stats) ?? LONG_EVENT_MS;
  const bounds = [lowerBound(from, filter.afterMs - LONG_EVENT_MS), lowerBound(from, filter.afterMs - longest)];
  const venuesInSql = filter.venueIds === null || plan === "venue";
  const venueSet = venuesInSql ? null : venueSetOf(filter);
  // Each store serves only the filters its `supports` admits; every other half reads SQLite.
  // A geo page with no other column filter scans ranges every such page in its states shares.
  const kept = plan === "venue_states" && KeptScans.supports(filter) ? (view.scans ?? null) : null;
  const ranges = kept ? kept.kept.forState(kept.state) : null;
  // Read one part at a time (each in index order, merged below), or the whole filter at once.
  const parts: readonly (string | null)[] =
    plan === "source_each" ? sourceList! : plan === "venue_states" ? filter.venueStates! : [null];
  // Growing chunks for the JS venue check, starting near what the venues' share of the rows needs.
  const share = venueRows !== null ? venueRows / Math.max(1, venueStateRows ?? stats.events) : 1;
  const firstChunk = Math.min(8192, Math.max(64, Math.ceil((1.25 * want) / Math.max(share, 1e-4))));
  const longRows = view.longs && LongEvents.supports(filter) ? view.longs.forSnapshot(db, stats) : null;
  // Sources are read from blocks one by one, so only when they are few (plan source_each).
  const blocks =
    view.blocks && SnapshotBlocks.supports(filter) && (filter.sources === null || plan === "source_each")
      ? view.blocks
      : null;
  const rows: SnapshotRow[] = [];
  for (const long of [0, 1] as const) {
    if (long === 0 && blocks) {
      rows.push(...blocks.scan(db, stats, filter, sourceList, bounds[0], want));
      continue;
    }
    if (long === 1 && longRows) {
      rows.push(...longRows.scan(filter, sourceList, bounds[1], want));
      continue;
    }
    const q = buildHalfQuery(plan, long, filter, plan === "source" ? sourceList : null, venuesInSql, !ranges);
    const b = bounds[long];
    for (const part of parts) {
      const params = part === null ? q.params : { ...q.params, part };
      if (venueSet) {
        const scan = { params, filter, venues: venueSet };
        if (ranges) {
          const flags = `${filter.excludeSoldOut ? 1 : 0}${filter.excludeAggregators ? 1 : 0}`;
          const range = { ...scan, ranges, key: `${part}\n${long}\n${flags}`, sql: q.sql };
          rows.push(...scanKept(db, range, b, want, firstChunk, kept!.kept.maxRows));
        } else rows.push(...scanVenues(db.prepare<ScannedRow>(q.sql), scan, b, want, firstChunk, []));
      } else rows.push(...db.prepare<SnapshotRow>(q.sql).all({ ...params, ls: b.startMs, lid: b.id, lim: want }));
    }
  }
  rows.sort(byKey);
  const keys = rows.slice(0, limit).map((r) => ({ startMs: Number(r.start_ms), id: Number(r.id) }));
  let earliestEndMs = Infinity;
  for (const r of rows.slice(0, want)) earliestEndMs = Math.min(earliestEndMs, Number(r.end_ms));
  return { keys, hasMore: rows.length > limit, plan, earliestEndMs };
}

/**
 * Runs `fn` in one read transaction, so page selection and hydration see one state of the
 * replica even while another process commits a sync (WAL readers keep their snapshot).
 */
export function readConsistently<T>(db: Db, fn: () => T): T {
  // A savepoint opens a (deferred) transaction, and nests if one is somehow already open.
  // Prepared (and cached by the driver) rather than exec'd: this runs on every page.
  db.prepare("SAVEPOINT page_read").run();
  try {
    return fn();
  } finally {
    db.prepare("RELEASE page_read").run();
  }
}
