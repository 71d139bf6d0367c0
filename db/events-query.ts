/**
 * Page selection over the serving snapshot (docs/architecture.md, "The serving snapshot": the keyset, the bounds, the
 * index chosen): short and long events are two ordered index range scans, merged, each SQLite's or a kept store's
 * (db/snapshot-blocks.ts, db/kept-scans.ts) when its `supports` admits the filter (db/page-filter.ts).
 */
import { LONG_EVENT_MS } from "./contract.ts";
import type { Db } from "./driver.ts";
import { KeptScans, type ScannedRow, scanKept, scanVenues } from "./kept-scans.ts";
import { before, filterTerms, type PageFilter, type PagePosition, type PageRow, venueSetOf } from "./page-filter.ts";
import { SnapshotBlocks } from "./snapshot-blocks.ts";
import type { SnapshotEstimates, SnapshotStats } from "./snapshot-stats.ts";

export type { PageFilter, PagePosition };

export type PagePlan = "source" | "source_each" | "venue" | "venue_states" | "state_city" | "city" | "state" | "time";

export interface PageSelection {
  /** At most `limit` snapshot rows, in page order. */
  keys: PagePosition[];
  hasMore: boolean;
  /** The index used; null when the filters could match nothing. */
  plan: PagePlan | null;
  /** Earliest end (ms) of the `limit + 1` rows read (Infinity: none), for server/list/page-cache.ts's windows. */
  earliestEndMs: number;
}

/** The column each plan's index leads with (then `long`, start_ms, id: replica v7); null: the table's own key. */
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

/**
 * One half (short or long events) of a page query, bound with `ls`, `lid` (exclusive lower bound) and `lim`. With
 * `venuesInSql` false the caller tests venues (`venue_id` is selected); with `windowInSql` false, the window too.
 */
export function buildHalfQuery(
  plan: PagePlan,
  long: 0 | 1,
  filter: PageFilter,
  sourceList: readonly string[] | null,
  venuesInSql = true,
  windowInSql = true,
) {
  const column = PLAN_COLUMN[plan];
  // A unary plus keeps other columns off other indexes (NOT INDEXED alone does not on a WITHOUT ROWID table).
  const col = (name: string) => (column === name ? name : `+${name}`);
  const sources = plan === "source_each" ? "none" : sourceList !== null ? { list: sourceList } : "glob";
  const { terms, params } = filterTerms(filter, col, { sources, venues: venuesInSql, window: windowInSql });
  // One source, or one state, of several read in turn: the caller binds `part`.
  if (plan === "source_each" || plan === "venue_states") {
    terms.unshift(`${column} = $part`);
    params.part = "";
  }
  const index = column === null ? "NOT INDEXED" : `INDEXED BY snapshot_${column === "venue_id" ? "venue" : column}`;
  const sql =
    `SELECT start_ms, id, end_ms${venuesInSql ? "" : ", venue_id"} FROM snapshot ${index} WHERE long = ${long}` +
    terms.map((t) => ` AND ${t}`).join("") +
    " AND (start_ms, id) > ($ls, $lid) ORDER BY start_ms, id LIMIT $lim";
  return { sql, params };
}

/** Rows at the sources, the venues and the venues' states; `threshold` is sqrt((limit + 1) · snapshot rows). */
export interface PlanEstimates {
  sourceRows: number | null;
  /** How many snapshot sources the source filter matches, when it was read. */
  sourceCount?: number | null;
  venueRows: number | null;
  venueStateRows?: number | null;
  threshold: number;
  want?: number;
  /** Rows a kept state range may hold, when the caller keeps them (db/kept-scans.ts). */
  keptScanRows?: number;
}

/** Picks the index for a filter combination (docs/architecture.md, "The serving snapshot"). */
export function choosePlan(filter: PageFilter, est: PlanEstimates): PagePlan {
  const alone = filter.state === null && filter.city === null && filter.venueIds === null;
  if (est.sourceCount != null && est.sourceCount <= 32 && alone) return "source_each";
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
  return before(position, floor) ? floor : position;
}

const byKey = (a: PageRow, b: PageRow) => a.start_ms - b.start_ms || a.id - b.id;

/** Before every row: (start, id) > (MIN, 0) holds for all rows. */
const FIRST_POSITION: PagePosition = { startMs: Number.MIN_SAFE_INTEGER, id: 0 };

/** Stats, estimates and the stores the caller keeps (kept scans for the read transaction's replica state). */
interface SnapshotView {
  stats: SnapshotStats;
  estimates: SnapshotEstimates;
  scans?: { kept: KeptScans; state: string } | null;
  blocks?: SnapshotBlocks | null;
}

/** Selects one page, inside `readConsistently` so the stats (`view.stats`), bounds and rows are one snapshot's. */
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
  // The sources a filter matches: this list decides the result (kept per generation, like the stats).
  const sourceList = filter.sources ? estimates.matchingSources(db, stats, filter.sources) : null;
  if (sourceList?.length === 0) return empty;
  const venueRows = filter.venueIds ? estimates.venueRows(db, stats, filter.venueIds) : null;
  const venueStateRows =
    filter.venueIds && filter.venueStates ? estimates.stateRows(db, stats, filter.venueStates) : null;
  const plan = choosePlan(filter, {
    sourceRows: filter.sources ? estimates.sourceRows(db, stats, filter.sources) : null,
    sourceCount: sourceList?.length ?? null,
    venueRows,
    venueStateRows,
    threshold: Math.sqrt(want * Math.max(stats.events, 1)),
    want,
    keptScanRows: view.scans?.kept.maxRows,
  });

  const from = position ?? FIRST_POSITION;
  const longest = estimates.longest.get(db, stats) ?? LONG_EVENT_MS;
  const bounds = [lowerBound(from, filter.afterMs - LONG_EVENT_MS), lowerBound(from, filter.afterMs - longest)];
  const venuesInSql = filter.venueIds === null || plan === "venue";
  const venueSet = venuesInSql ? null : venueSetOf(filter);
  // A geo page with no other column filter scans ranges every such page in its states shares.
  const kept = plan === "venue_states" && KeptScans.supports(filter) ? (view.scans ?? null) : null;
  const ranges = kept ? kept.kept.forState(kept.state) : null;
  // Read one part at a time (each in index order, merged below), or the whole filter at once.
  const parts: readonly (string | null)[] =
    plan === "source_each" ? sourceList! : plan === "venue_states" ? filter.venueStates! : [null];
  // Growing chunks for the JS venue check, starting near what the venues' share of the rows needs.
  const share = venueRows !== null ? venueRows / Math.max(1, venueStateRows ?? stats.events) : 1;
  const firstChunk = Math.min(8192, Math.max(64, Math.ceil((1.25 * want) / Math.max(share, 1e-4))));
  // Sources are read from blocks one by one, so only when they are few (plan source_each).
  const blocks = SnapshotBlocks.supports(filter) && (filter.sources === null || plan === "source_each");
  const rows: PageRow[] = [];
  for (const long of [0, 1] as const) {
    const b = bounds[long];
    const fromBlocks = blocks ? view.blocks?.scan(db, stats, filter, sourceList, b, want, long) : null;
    if (fromBlocks) {
      rows.push(...fromBlocks);
      continue;
    }
    const q = buildHalfQuery(plan, long, filter, plan === "source" ? sourceList : null, venuesInSql, !ranges);
    for (const part of parts) {
      const params = part === null ? q.params : { ...q.params, part };
      if (!venueSet) {
        rows.push(...db.prepare<PageRow>(q.sql).all({ ...params, ls: b.startMs, lid: b.id, lim: want }));
        continue;
      }
      const scan = { stmt: db.prepare<ScannedRow>(q.sql), params, filter, venues: venueSet };
      if (!ranges) rows.push(...scanVenues(scan, b, want, firstChunk, []));
      else {
        const key = `${part}\n${long}\n${filter.excludeSoldOut ? 1 : 0}${filter.excludeAggregators ? 1 : 0}`;
        rows.push(...scanKept({ ...scan, ranges, key, maxRows: kept!.kept.maxRows }, b, want, firstChunk));
      }
    }
  }
  rows.sort(byKey);
  const keys = rows.slice(0, limit).map((r) => ({ startMs: Number(r.start_ms), id: Number(r.id) }));
  let earliestEndMs = Infinity;
  for (const r of rows.slice(0, want)) earliestEndMs = Math.min(earliestEndMs, Number(r.end_ms));
  return { keys, hasMore: rows.length > limit, plan, earliestEndMs };
}

/** `fn` in one read transaction (a nesting savepoint, prepared so cached): selection and hydration see one state. */
export function readConsistently<T>(db: Db, fn: () => T): T {
  db.prepare("SAVEPOINT page_read").run();
  try {
    return fn();
  } finally {
    db.prepare("RELEASE page_read").run();
  }
}
