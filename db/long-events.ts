/**
 * The long half of a page in memory (db/events-query.ts; docs/architecture.md, "Caches"): long
 * events are few, yet their index range reads some 250 rows that ended before the window opened.
 * Kept in (start_ms, id) order with each state's, city's and source's positions, for one generation.
 */
import { inWindow, type PageFilter, type PagePosition } from "./page-filter.ts";
import { PerGeneration } from "./snapshot-stats.ts";

/** One snapshot row as page selection reads it. */
export type LongRow = { start_ms: number; id: number; end_ms: number };

/** A snapshot row with the two flags a filter may exclude, as the stores read it. */
export type FlaggedRow = LongRow & { sold_out: number; aggregator: number };

type Loaded = FlaggedRow & { state: string; city: string; source: string };

/** The first of `count` rows (or of the rows `list` names), in (start_ms, id) order in parallel arrays, after `p`. */
export function indexAfter(start: Float64Array, id: Float64Array, count: number, p: PagePosition, list?: Int32Array) {
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const i = list === undefined ? mid : list[mid];
    if (start[i] < p.startMs || (start[i] === p.startMs && id[i] <= p.id)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const SOLD_OUT = 1;
const AGGREGATOR = 2;

/** Snapshot rows in (start_ms, id) order as parallel arrays, with their flags. */
export class KeptRows {
  readonly count: number;
  readonly start: Float64Array;
  readonly id: Float64Array;
  readonly end: Float64Array;
  readonly flags: Uint8Array;

  constructor(rows: readonly FlaggedRow[]) {
    const n = rows.length;
    this.count = n;
    this.start = new Float64Array(n);
    this.id = new Float64Array(n);
    this.end = new Float64Array(n);
    this.flags = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const r = rows[i];
      this.start[i] = r.start_ms;
      this.id[i] = r.id;
      this.end[i] = r.end_ms;
      this.flags[i] = (r.sold_out ? SOLD_OUT : 0) | (r.aggregator ? AGGREGATOR : 0);
    }
  }
}

/** The flags whose rows the filter excludes. */
export const skipOf = (f: PageFilter) => (f.excludeSoldOut ? SOLD_OUT : 0) | (f.excludeAggregators ? AGGREGATOR : 0);

/** A source filter of more sources walks every row, not their lists merged (a rare source's rows lie far apart). */
const MERGED_SOURCES = 8;

/** Each distinct value of one column as a small integer, and the positions of its rows. */
class Column {
  readonly ids = new Map<string, number>();
  readonly of: Int32Array;
  readonly rowsOf: Int32Array[];

  constructor(values: readonly string[]) {
    this.of = new Int32Array(values.length);
    const lists: number[][] = [];
    values.forEach((value, i) => {
      if (!this.ids.has(value)) this.ids.set(value, lists.push([]) - 1);
      this.of[i] = this.ids.get(value)!;
      lists[this.of[i]].push(i);
    });
    this.rowsOf = lists.map((list) => Int32Array.from(list));
  }
}

/** The long rows of one snapshot generation. */
export class LongRows extends KeptRows {
  readonly #state: Column;
  readonly #city: Column;
  readonly #source: Column;
  readonly #all: Int32Array;

  constructor(rows: readonly Loaded[]) {
    super(rows);
    this.#state = new Column(rows.map((r) => r.state));
    this.#city = new Column(rows.map((r) => r.city));
    this.#source = new Column(rows.map((r) => r.source));
    this.#all = Int32Array.from(rows, (_, i) => i);
  }

  /**
   * What the long half's index range scan returns (db/events-query.ts `buildHalfQuery`), sources as
   * the snapshot sources the tokens match: `rowMatcher`'s test (test/long-events.test.ts).
   */
  scan(filter: PageFilter, sources: readonly string[] | null, from: PagePosition, want: number): LongRow[] {
    const out: LongRow[] = [];
    const state = filter.state === null ? -1 : this.#state.ids.get(filter.state);
    const city = filter.city === null ? -1 : this.#city.ids.get(filter.city);
    if (state === undefined || city === undefined) return out;
    let sourceOk: Uint8Array | null = null;
    const sourceIds: number[] = [];
    if (sources !== null) {
      sourceOk = new Uint8Array(this.#source.ids.size);
      for (const s of sources) {
        const id = this.#source.ids.get(s);
        if (id === undefined || sourceOk[id] === 1) continue;
        sourceOk[id] = 1;
        sourceIds.push(id);
      }
    }
    // The positions to walk, each list in row order: a city's, a state's, a few sources' or all.
    const lists =
      city >= 0
        ? [this.#city.rowsOf[city]]
        : state >= 0
          ? [this.#state.rowsOf[state]]
          : sources !== null && sourceIds.length <= MERGED_SOURCES
            ? sourceIds.map((id) => this.#source.rowsOf[id])
            : [this.#all];
    const at = lists.map((list) => indexAfter(this.start, this.id, list.length, from, list));
    const skip = skipOf(filter);
    while (out.length < want) {
      // The next position of all lists: positions are row order, which is (start_ms, id) order.
      let next = -1;
      for (let j = 0; j < lists.length; j++)
        if (at[j] < lists[j].length && (next < 0 || lists[j][at[j]] < lists[next][at[next]])) next = j;
      if (next < 0) break;
      const i = lists[next][at[next]++];
      const start = this.start[i];
      if (start > filter.beforeMs) break;
      if (!inWindow(filter, start, this.end[i]) || (this.flags[i] & skip) !== 0) continue;
      if ((state >= 0 && this.#state.of[i] !== state) || (city >= 0 && this.#city.of[i] !== city)) continue;
      if (sourceOk !== null && sourceOk[this.#source.of[i]] !== 1) continue;
      out.push({ start_ms: start, id: this.id[i], end_ms: this.end[i] });
    }
    return out;
  }
}

/** The long rows of the current generation, none beyond `maxRows`. Owned by server/list/caches.ts. */
export class LongEvents extends PerGeneration<LongRows | null> {
  constructor(maxRows: number) {
    super((db) => {
      // The span index counts long rows without reading them.
      const n = db.prepare<{ n: number }>("SELECT count(*) AS n FROM snapshot INDEXED BY snapshot_span WHERE long = 1");
      if (Number(n.get()?.n ?? 0) > maxRows) return null;
      const sql = `SELECT state, city, source, start_ms, id, end_ms, sold_out, aggregator
FROM snapshot WHERE long = 1 ORDER BY start_ms, id`;
      return new LongRows(db.prepare<Loaded>(sql).all());
    });
  }

  /** Any filter without a geo filter: the rows are not kept by venue. */
  static supports(f: PageFilter): boolean {
    return f.venueIds === null;
  }
}
