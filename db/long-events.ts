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
import { inWindow, type PageFilter, type PagePosition } from "./page-filter.ts";
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

const SOLD_OUT = 1;
const AGGREGATOR = 2;

/**
 * A source filter of at most this many sources with long rows walks their lists merged; one of
 * more walks every row (a rare source's rows lie far apart in the whole list).
 */
const MERGED_SOURCES = 8;

/** Small integers for the strings of one column, so a row compares numbers. */
class Names {
  readonly ids = new Map<string, number>();

  of(name: string): number {
    let id = this.ids.get(name);
    if (id === undefined) {
      id = this.ids.size;
      this.ids.set(name, id);
    }
    return id;
  }
}

/** The long rows of one snapshot generation. */
export class LongRows {
  readonly count: number;
  readonly #start: Float64Array;
  readonly #id: Float64Array;
  readonly #end: Float64Array;
  readonly #state: Int32Array;
  readonly #city: Int32Array;
  readonly #source: Int32Array;
  readonly #flags: Uint8Array;
  readonly #states = new Names();
  readonly #cities = new Names();
  readonly #sources = new Names();
  /** Positions of each state's rows, each city's and each source's, in row order. */
  readonly #byState = new Map<number, Int32Array>();
  readonly #byCity = new Map<number, Int32Array>();
  readonly #bySource = new Map<number, Int32Array>();
  readonly #all: Int32Array;

  constructor(rows: readonly Loaded[]) {
    const n = rows.length;
    this.count = n;
    this.#start = new Float64Array(n);
    this.#id = new Float64Array(n);
    this.#end = new Float64Array(n);
    this.#state = new Int32Array(n);
    this.#city = new Int32Array(n);
    this.#source = new Int32Array(n);
    this.#flags = new Uint8Array(n);
    this.#all = new Int32Array(n);
    const byState = new Map<number, number[]>();
    const byCity = new Map<number, number[]>();
    const bySource = new Map<number, number[]>();
    for (let i = 0; i < n; i++) {
      const r = rows[i];
      this.#start[i] = r.start_ms;
      this.#id[i] = r.id;
      this.#end[i] = r.end_ms;
      const state = this.#states.of(r.state);
      const city = this.#cities.of(r.city);
      this.#state[i] = state;
      this.#city[i] = city;
      const source = this.#sources.of(r.source);
      this.#source[i] = source;
      this.#flags[i] = (r.sold_out ? SOLD_OUT : 0) | (r.aggregator ? AGGREGATOR : 0);
      this.#all[i] = i;
      listIn(byState, state).push(i);
      listIn(byCity, city).push(i);
      listIn(bySource, source).push(i);
    }
    for (const [k, v] of byState) this.#byState.set(k, Int32Array.from(v));
    for (const [k, v] of byCity) this.#byCity.set(k, Int32Array.from(v));
    for (const [k, v] of bySource) this.#bySource.set(k, Int32Array.from(v));
  }

  /**
   * What the long half's index range scan returns (db/events-query.ts `buildHalfQuery`): the
   * rows after `from` that the filter admits, in (start_ms, id) order, at most `want`. The
   * filter's columns are compared as small integers, the sources as the snapshot sources its
   * tokens match (`sources`, null when it has none): db/page-filter.ts `rowMatcher`'s test, to
   * which test/long-events.test.ts holds it.
   */
  scan(filter: PageFilter, sources: readonly string[] | null, from: PagePosition, want: number): LongRow[] {
    const out: LongRow[] = [];
    const state = filter.state === null ? -1 : this.#states.ids.get(filter.state);
    const city = filter.city === null ? -1 : this.#cities.ids.get(filter.city);
    if (state === undefined || city === undefined) return out;
    let sourceOk: Uint8Array | null = null;
    const sourceIds: number[] = [];
    if (sources !== null) {
      sourceOk = new Uint8Array(this.#sources.ids.size);
      for (const s of sources) {
        const id = this.#sources.ids.get(s);
        if (id === undefined || sourceOk[id] === 1) continue;
        sourceOk[id] = 1;
        sourceIds.push(id);
      }
    }
    // The positions to walk, each list in row order: a city's, a state's, a few sources' or all.
    const lists =
      city >= 0
        ? [this.#byCity.get(city)!]
        : state >= 0
          ? [this.#byState.get(state)!]
          : sources !== null && sourceIds.length <= MERGED_SOURCES
            ? sourceIds.map((id) => this.#bySource.get(id)!)
            : [this.#all];
    const at = lists.map((list) => this.#firstAfter(list, from));
    const skip = (filter.excludeSoldOut ? SOLD_OUT : 0) | (filter.excludeAggregators ? AGGREGATOR : 0);
    const { beforeMs } = filter;
    while (out.length < want) {
      // The next position of all lists: positions are row order, which is (start_ms, id) order.
      let next = -1;
      for (let j = 0; j < lists.length; j++)
        if (at[j] < lists[j].length && (next < 0 || lists[j][at[j]] < lists[next][at[next]])) next = j;
      if (next < 0) break;
      const i = lists[next][at[next]++];
      const start = this.#start[i];
      if (start > beforeMs) break;
      if (!inWindow(filter, start, this.#end[i]) || (this.#flags[i] & skip) !== 0) continue;
      if ((state >= 0 && this.#state[i] !== state) || (city >= 0 && this.#city[i] !== city)) continue;
      if (sourceOk !== null && sourceOk[this.#source[i]] !== 1) continue;
      out.push({ start_ms: start, id: this.#id[i], end_ms: this.#end[i] });
    }
    return out;
  }

  /** The first entry of `list` whose row comes after `p` in (start_ms, id) order. */
  #firstAfter(list: Int32Array, p: PagePosition): number {
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const i = list[mid];
      const s = this.#start[i];
      if (s < p.startMs || (s === p.startMs && this.#id[i] <= p.id)) lo = mid + 1;
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

  /** Any filter without a geo filter: the rows are not kept by venue. */
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

/** The list kept under `key`, made empty on first use. */
function listIn<K>(lists: Map<K, number[]>, key: K): number[] {
  let list = lists.get(key);
  if (!list) {
    list = [];
    lists.set(key, list);
  }
  return list;
}
