/**
 * The long half of a page in memory (db/events-query.ts). Long events (longer than a day) are few
 * (about 2 % of the demo snapshot), yet every page reads their half from `after` minus the longest
 * of them: some 250 index rows of events that ended before the window opened, for each page of a
 * state, a city, a source or the whole country. Kept as parallel arrays in (start_ms, id) order,
 * with the positions of each state's, each city's and each source's rows, that half is a binary
 * search and a short loop instead of an index range scan.
 *
 * Exact for one serving snapshot: the snapshot's rows change only in a refresh, which bumps its
 * generation in the same transaction (db/snapshot.ts), and the rows are read in the page's read
 * transaction, for the generation that transaction sees. Pages with a geo filter keep their own
 * plans: their candidates are venues, which these lists are not ordered by.
 */
import type { Db } from "./driver.ts";
import { type FilterRow, type PageFilter, type PagePosition, rowMatcher } from "./page-filter.ts";
import type { SnapshotStats } from "./snapshot-stats.ts";

/** One snapshot row as page selection reads it. */
export interface LongRow {
  start_ms: number;
  id: number;
  end_ms: number;
}

interface Loaded {
  state: string;
  city: string;
  source: string;
  start_ms: number;
  id: number;
  end_ms: number;
  sold_out: number;
  aggregator: number;
}

/**
 * A source filter of at most this many sources with long rows walks their lists merged; one of
 * more walks every row (a rare source's rows lie far apart in the whole list).
 */
const MERGED_SOURCES = 8;

/** The positions of each value's rows, in row order. */
function positionsBy(rows: readonly FilterRow[], key: (r: FilterRow) => string): Map<string, number[]> {
  const by = new Map<string, number[]>();
  rows.forEach((r, i) => {
    const list = by.get(key(r));
    if (list) list.push(i);
    else by.set(key(r), [i]);
  });
  return by;
}

/** The long rows of one snapshot generation, in (start_ms, id) order. */
export class LongRows {
  readonly #rows: FilterRow[];
  readonly #ids: number[];
  readonly #byState: Map<string, number[]>;
  readonly #byCity: Map<string, number[]>;
  readonly #bySource: Map<string, number[]>;
  readonly #all: number[];

  constructor(rows: readonly Loaded[]) {
    this.#rows = rows.map((r) => ({
      startMs: r.start_ms,
      endMs: r.end_ms,
      state: r.state,
      city: r.city,
      source: r.source,
      venueId: 0, // no geo filter reads these rows (`LongEvents.supports`)
      soldOut: r.sold_out === 1,
      aggregator: r.aggregator === 1,
    }));
    this.#ids = rows.map((r) => r.id);
    this.#byState = positionsBy(this.#rows, (r) => r.state);
    this.#byCity = positionsBy(this.#rows, (r) => r.city);
    this.#bySource = positionsBy(this.#rows, (r) => r.source);
    this.#all = this.#rows.map((_, i) => i);
  }

  get count(): number {
    return this.#rows.length;
  }

  /**
   * What the long half's index range scan returns (db/events-query.ts `buildHalfQuery`): the
   * rows after `from` that the filter admits (db/page-filter.ts `rowMatcher`), in (start_ms, id)
   * order, at most `want`. `sources`: the snapshot sources the filter's tokens match, null when
   * it has none, which picks the lists to walk.
   */
  scan(filter: PageFilter, sources: readonly string[] | null, from: PagePosition, want: number): LongRow[] {
    const matches = rowMatcher(filter);
    const some = (list: number[] | undefined) => list ?? [];
    // The positions to walk, each list in row order: a city's, a state's, a few sources' or all.
    const lists =
      filter.city !== null
        ? [some(this.#byCity.get(filter.city))]
        : filter.state !== null
          ? [some(this.#byState.get(filter.state))]
          : sources !== null && sources.length <= MERGED_SOURCES
            ? sources.map((s) => some(this.#bySource.get(s)))
            : [this.#all];
    const at = lists.map((list) => this.#firstAfter(list, from));
    const out: LongRow[] = [];
    while (out.length < want) {
      // The next position of all lists: positions are row order, which is (start_ms, id) order.
      let next = -1;
      for (let j = 0; j < lists.length; j++)
        if (at[j] < lists[j].length && (next < 0 || lists[j][at[j]] < lists[next][at[next]])) next = j;
      if (next < 0) break;
      const i = lists[next][at[next]++];
      const r = this.#rows[i];
      if (r.startMs > filter.beforeMs) break;
      if (matches(r)) out.push({ start_ms: r.startMs, id: this.#ids[i], end_ms: r.endMs });
    }
    return out;
  }

  /** The first entry of `list` whose row comes after `p` in (start_ms, id) order. */
  #firstAfter(list: number[], p: PagePosition): number {
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const s = this.#rows[list[mid]].startMs;
      if (s < p.startMs || (s === p.startMs && this.#ids[list[mid]] <= p.id)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

const LONG_ROWS_SQL = `
SELECT state, city, source, start_ms, id, end_ms, sold_out, aggregator
FROM snapshot WHERE long = 1 ORDER BY start_ms, id`;

/**
 * The long rows of the current snapshot generation, read when a page first needs them and kept
 * until the generation moves. A snapshot with more long rows than `maxRows` is not kept: its
 * pages read the long half from SQLite as before. Owned by the list path's caches
 * (server/list/caches.ts).
 */
export class LongEvents {
  #kept: { generation: number; rows: LongRows | null } | null = null;

  constructor(readonly maxRows: number) {}

  /** Any filter without a geo filter: the rows carry no venues, which they are not ordered by. */
  static supports(f: PageFilter): boolean {
    return f.venueIds === null;
  }

  /** The rows for `stats` (read in the caller's read transaction), or null when there are too many. */
  forSnapshot(db: Db, stats: SnapshotStats): LongRows | null {
    if (this.#kept?.generation !== stats.generation) {
      // The span index counts long rows without reading them.
      const n = Number(
        db.prepare<{ n: number }>("SELECT count(*) AS n FROM snapshot INDEXED BY snapshot_span WHERE long = 1").get()
          ?.n ?? 0,
      );
      const rows = n <= this.maxRows ? new LongRows(db.prepare<Loaded>(LONG_ROWS_SQL).all()) : null;
      this.#kept = { generation: stats.generation, rows };
    }
    return this.#kept.rows;
  }

  clear(): void {
    this.#kept = null;
  }
}
