/**
 * The short half of a page from blocks of the snapshot kept in memory (db/events-query.ts): a
 * page of a state, of a city in a state, of sources read one by one, or with no column filter.
 * Such a page reads an index (the state's, the city's, each source's, or the snapshot's key) from
 * a day before its window opens: the short events of that day that have ended, then the page. New
 * windows read the same rows again and again, so the rows are kept in blocks of time: a state's
 * short rows starting within one week, all short rows starting within one day, or a source's (a
 * city's in a state) short rows within a span sized to its count. A page finds its place in the first block by binary search and reads on block by
 * block; a block not kept yet is read whole, with one index range scan.
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

/** The longest span of a source's (or a city's) block: past the whole range of the demo's snapshot (451 days). */
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
  }

  get bytes(): number {
    return 25 * this.count + 96;
  }
}

/**
 * One block's rows: a state's (`state`), a city's in a state (`city`, the state a residual
 * test: db/events-query.ts), a source's (`source`) or all (NOT INDEXED: the table's key).
 */
const blockSql = (index: string) => `
SELECT start_ms, id, end_ms, sold_out, aggregator FROM snapshot ${index === "" ? "NOT INDEXED" : `INDEXED BY snapshot_${index}`}
WHERE ${index === "" ? "" : `${index} = $${index} AND `}${index === "city" ? "+state = $state AND " : ""}long = 0 AND start_ms >= $lo AND start_ms < $hi ORDER BY start_ms, id`;

/** A city's short rows in a state, for its blocks' span. */
const CITY_COUNT_SQL =
  "SELECT count(*) AS n FROM snapshot INDEXED BY snapshot_city WHERE city = $city AND long = 0 AND +state = $state";

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
  /** The block span of each source, and of each city in a state, read in the generation (`#spanMs`). */
  readonly #spans = new Map<string, number>();

  /**
   * @param sourceBlockRows A source's (or a city's) span is the longest of a day, two, four …
   * 512 days expected to hold at most this many of its rows, its count (in snapshot_sources, or
   * the city's in its index) spread evenly over the snapshot's range.
   */
  constructor(
    maxBytes: number,
    private readonly sourceBlockRows: number,
  ) {
    this.#blocks = new LRUCache<string, Block>({ maxSize: maxBytes, sizeCalculation: (b) => b.bytes });
  }

  /**
   * A filter without geo, with a city only in a state, and with sources only alone: a block holds
   * one state's rows (or all), one city's in one state, or one source's, and a scan tests the
   * window and the row flags, which is then all the rest of the filter (db/page-filter.ts
   * `rowMatcher`).
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
   * short rows of the filter's state (and city; or all, or of each of `sources`, the snapshot sources its
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
        const span = this.#spanMs(`s\n${source}`, () =>
          db.prepare<{ n: number }>("SELECT events AS n FROM snapshot_sources WHERE source = $source").get({ source }),
        );
        return this.#scan(filter, from, want, span, (n) =>
          this.#block(`s\n${source}\n${n}`, () =>
            db.prepare<BlockRow>(blockSql("source")).all({ lo: n * span, hi: (n + 1) * span, source }),
          ),
        );
      });
    const { state, city } = filter;
    if (city !== null) {
      const where = { state, city };
      const span = this.#spanMs(`c\n${state}\n${city}`, () => db.prepare<{ n: number }>(CITY_COUNT_SQL).get(where));
      return this.#scan(filter, from, want, span, (n) =>
        this.#block(`c\n${state}\n${city}\n${n}`, () =>
          db.prepare<BlockRow>(blockSql("city")).all({ ...where, lo: n * span, hi: (n + 1) * span }),
        ),
      );
    }
    const span = state === null ? SPAN_MS.all : SPAN_MS.state;
    return this.#scan(filter, from, want, span, (n) =>
      this.#block(`${state ?? ""}\n${n}`, () =>
        state === null
          ? db.prepare<BlockRow>(blockSql("")).all({ lo: n * span, hi: (n + 1) * span })
          : db.prepare<BlockRow>(blockSql("state")).all({ lo: n * span, hi: (n + 1) * span, state }),
      ),
    );
  }

  /** The span of a source's or a city's blocks for this generation, from its count (`sourceBlockRows`). */
  #spanMs(key: string, count: () => { n: number } | undefined): number {
    let span = this.#spans.get(key);
    if (span === undefined) {
      const rows = count()?.n ?? 0;
      const rangeDays = Math.max(1, (this.#lastStartMs - this.#firstStartMs) / DAY_MS);
      let days = 1;
      while (days < MAX_SOURCE_SPAN_DAYS && (rows * 2 * days) / rangeDays <= this.sourceBlockRows) days *= 2;
      span = days * DAY_MS;
      this.#spans.set(key, span);
    }
    return span;
  }

  #scan(filter: PageFilter, from: PagePosition, want: number, span: number, blockAt: (n: number) => Block): LongRow[] {
    const out: LongRow[] = [];
    const skip = (filter.excludeSoldOut ? SOLD_OUT : 0) | (filter.excludeAggregators ? AGGREGATOR : 0);
    const last = Math.min(filter.beforeMs, this.#lastStartMs);
    for (let n = Math.floor(Math.max(from.startMs, this.#firstStartMs) / span); n * span <= last; n++) {
      const block = blockAt(n);
      for (
        let i = n * span <= from.startMs ? indexAfter(block.start, block.id, block.count, from) : 0;
        i < block.count;
        i++
      ) {
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
    this.#spans.clear();
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
    this.#spans.clear();
    this.#generation = -1;
  }
}
