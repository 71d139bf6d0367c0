/**
 * The short half of a page from blocks of the snapshot kept in memory (db/events-query.ts): a
 * page of a state (and a city in it), of sources read one by one, or with no column filter. Such a page reads an
 * index (the state's, each source's, or the snapshot's key) from a day before its window opens:
 * the short events of that day that have ended, then the page. New windows read the same rows
 * again and again, so the rows are kept in blocks of time: a state's short rows starting within
 * one week, all short rows starting within one day, or a source's short rows within a span sized
 * to its count. A page finds its place in the first block by binary search and reads on block by
 * block; a block not kept yet is read whole, with one index range scan. A state's block also
 * lists its rows by city, so a page of a city in the state reads only that city's rows of the
 * blocks a state page reads (and keeps) too, where SQLite would scan the city's index.
 *
 * Exact for one serving snapshot, like the long rows (db/long-events.ts): the snapshot's rows
 * change only in a refresh, which bumps its generation in the same transaction, and a block is
 * read in the page's read transaction, for the generation that transaction sees. A block holds
 * every short row of its state or source (or of the whole snapshot) that starts within its
 * span, so the blocks from the page's place on meet exactly the rows the index range scan would
 * return.
 */
import { LRUCache } from "lru-cache";
import { DAY_MS } from "./contract.ts";
import type { Db } from "./driver.ts";
import { indexAfter } from "./kept-scans.ts";
import type { LongRow } from "./long-events.ts";
import { inWindow, type PageFilter, type PagePosition } from "./page-filter.ts";
import type { SnapshotStats } from "./snapshot-stats.ts";

const SOLD_OUT = 1;
const AGGREGATOR = 2;

/**
 * A state's block spans a week, a block of every state a day. In the demo's million events the
 * largest are 13,055 rows (a state's week) and 38,551 (a day), read once per generation.
 */
const SPAN_MS = { state: 7 * DAY_MS, all: DAY_MS } as const;

/** The longest span of a source's block: past the whole range of the demo's snapshot (451 days). */
const MAX_SOURCE_SPAN_DAYS = 512;

interface BlockRow {
  start_ms: number;
  id: number;
  end_ms: number;
  sold_out: number;
  aggregator: number;
}

/** The short rows of one state (or all) starting within one span, in (start_ms, id) order. */
class Block {
  readonly count: number;
  readonly start: Float64Array;
  readonly id: Float64Array;
  readonly end: Float64Array;
  readonly flags: Uint8Array;
  /** A state's block, once a city's page read it: each city's rows, as ascending indexes into the arrays above. */
  cities: Map<string, Int32Array> | null = null;
  bytes: number;

  constructor(rows: readonly BlockRow[]) {
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
    this.bytes = 25 * n + 96;
  }

  /** Lists the rows by city, `cities` being each row's city in the block's order. */
  listCities(cities: readonly { city: string }[]): void {
    const byCity = new Map<string, number[]>();
    for (let i = 0; i < cities.length; i++) {
      const list = byCity.get(cities[i].city);
      if (list) list.push(i);
      else byCity.set(cities[i].city, [i]);
    }
    this.cities = new Map();
    for (const [city, list] of byCity) {
      this.cities.set(city, Int32Array.from(list));
      this.bytes += 4 * list.length + 2 * city.length + 96;
    }
  }
}

/** The first of the ascending `indexes` at or after `i`. */
function firstAtOrAfter(indexes: Int32Array, i: number): number {
  let lo = 0;
  let hi = indexes.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (indexes[mid] < i) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** One block's rows (or `columns` of them): a state's (`state`), a source's (`source`) or all (NOT INDEXED: the table's key). */
const blockSql = (index: string, columns = "start_ms, id, end_ms, sold_out, aggregator") => `
SELECT ${columns} FROM snapshot ${index === "" ? "NOT INDEXED" : `INDEXED BY snapshot_${index}`}
WHERE ${index === "" ? "" : `${index} = $${index} AND `}long = 0 AND start_ms >= $lo AND start_ms < $hi ORDER BY start_ms, id`;

/**
 * Blocks of the current snapshot generation, bounded by bytes; everything is dropped when the
 * generation moves. Owned by the list path's caches (server/list/caches.ts).
 */
export class SnapshotBlocks {
  readonly #blocks: LRUCache<string, Block>;
  #generation = -1;
  /** The earliest and latest starts among the snapshot's short rows, for the generation: no block lies outside. */
  #firstStartMs = Number.POSITIVE_INFINITY;
  #lastStartMs = Number.NEGATIVE_INFINITY;
  /** The block span of each source read in the generation (`#sourceSpanMs`). */
  readonly #sourceSpans = new Map<string, number>();

  /**
   * @param sourceBlockRows A source's span is the longest of a day, two, four … 512 days
   * expected to hold at most this many of its rows, its count in snapshot_sources spread evenly
   * over the snapshot's range.
   */
  constructor(
    maxBytes: number,
    private readonly sourceBlockRows: number,
  ) {
    this.#blocks = new LRUCache<string, Block>({ maxSize: maxBytes, sizeCalculation: (b) => b.bytes });
  }

  /**
   * A filter without geo, with a city only beside a state, and with sources only alone: a block
   * holds one state's rows (listed by city) or all or one source's, and a scan tests the window
   * and the row flags, which is then all the rest of the filter (db/page-filter.ts `rowMatcher`).
   */
  static supports(f: PageFilter): boolean {
    return (
      f.venueIds === null &&
      (f.city === null || f.state !== null) &&
      (f.sources === null || (f.state === null && f.city === null))
    );
  }

  /**
   * What the short half's index range scan returns (db/events-query.ts `buildHalfQuery`): the
   * short rows of the filter's state and city (or all, or of each of `sources`, the snapshot sources its
   * tokens match) after `from` that the filter admits, in (start_ms, id) order, at most `want`
   * (of each source: the caller merges them).
   */
  scan(
    db: Db,
    stats: SnapshotStats,
    filter: PageFilter,
    sources: readonly string[] | null,
    from: PagePosition,
    want: number,
  ): LongRow[] {
    this.#forGeneration(db, stats);
    if (filter.sources !== null)
      return sources!.flatMap((source) => {
        const span = this.#sourceSpanMs(db, source);
        return this.#scan(filter, from, want, span, (n) =>
          this.#block(`s\n${source}\n${n}`, () =>
            db.prepare<BlockRow>(blockSql("source")).all({ lo: n * span, hi: (n + 1) * span, source }),
          ),
        );
      });
    const { state, city } = filter;
    const span = state === null ? SPAN_MS.all : SPAN_MS.state;
    return this.#scan(filter, from, want, span, (n) => {
      const key = `${state ?? ""}\n${n}`;
      const range = { lo: n * span, hi: (n + 1) * span };
      const block = this.#block(key, () =>
        state === null
          ? db.prepare<BlockRow>(blockSql("")).all(range)
          : db.prepare<BlockRow>(blockSql("state")).all({ ...range, state }),
      );
      // Cities only for a city's page: a state's page would not read them.
      if (city !== null && block.cities === null) {
        block.listCities(db.prepare<{ city: string }>(blockSql("state", "city")).all({ ...range, state }));
        this.#blocks.set(key, block); // for its new size
      }
      return block;
    });
  }

  /** The source's span for this generation, from its count (`sourceBlockRows`). */
  #sourceSpanMs(db: Db, source: string): number {
    let span = this.#sourceSpans.get(source);
    if (span === undefined) {
      const events =
        db.prepare<{ events: number }>("SELECT events FROM snapshot_sources WHERE source = $source").get({ source })
          ?.events ?? 0;
      const rangeDays = Math.max(1, (this.#lastStartMs - this.#firstStartMs) / DAY_MS);
      let days = 1;
      while (days < MAX_SOURCE_SPAN_DAYS && (events * 2 * days) / rangeDays <= this.sourceBlockRows) days *= 2;
      span = days * DAY_MS;
      this.#sourceSpans.set(source, span);
    }
    return span;
  }

  #scan(filter: PageFilter, from: PagePosition, want: number, span: number, blockAt: (n: number) => Block): LongRow[] {
    const out: LongRow[] = [];
    const skip = (filter.excludeSoldOut ? SOLD_OUT : 0) | (filter.excludeAggregators ? AGGREGATOR : 0);
    const last = Math.min(filter.beforeMs, this.#lastStartMs);
    for (let n = Math.floor(Math.max(from.startMs, this.#firstStartMs) / span); n * span <= last; n++) {
      const block = blockAt(n);
      // A city's page reads the city's rows of the state's block, in the same order.
      const rows = filter.city === null ? null : block.cities?.get(filter.city);
      if (rows === undefined) continue;
      const first = n * span <= from.startMs ? indexAfter(block.start, block.id, block.count, from) : 0;
      const count = rows ? rows.length : block.count;
      for (let k = rows ? firstAtOrAfter(rows, first) : first; k < count; k++) {
        const i = rows ? rows[k] : k;
        const start = block.start[i];
        if (start > filter.beforeMs) return out;
        if (!inWindow(filter, start, block.end[i]) || (block.flags[i] & skip) !== 0) continue;
        out.push({ start_ms: start, id: block.id[i], end_ms: block.end[i] });
        if (out.length === want) return out;
      }
    }
    return out;
  }

  #forGeneration(db: Db, stats: SnapshotStats): void {
    if (stats.generation === this.#generation) return;
    this.#blocks.clear();
    this.#sourceSpans.clear();
    this.#generation = stats.generation;
    const row = db
      .prepare<{ first: number | null; last: number | null }>(
        "SELECT (SELECT min(start_ms) FROM snapshot WHERE long = 0) AS first, (SELECT max(start_ms) FROM snapshot WHERE long = 0) AS last",
      )
      .get();
    this.#firstStartMs = row?.first ?? Number.POSITIVE_INFINITY;
    this.#lastStartMs = row?.last ?? Number.NEGATIVE_INFINITY;
  }

  #block(key: string, read: () => BlockRow[]): Block {
    let block = this.#blocks.get(key);
    if (!block) {
      block = new Block(read());
      this.#blocks.set(key, block);
    }
    return block;
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.#blocks.calculatedSize;
  }

  clear(): void {
    this.#blocks.clear();
    this.#sourceSpans.clear();
    this.#generation = -1;
  }
}
