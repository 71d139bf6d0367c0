/**
 * The short half of a page (db/events-query.ts) from blocks of time kept for one snapshot generation: new windows read
 * the same index rows again and again (docs/architecture.md, "Caches"). A block holds every short row of its part (a
 * state, a city in a state, a source, or all) starting within its span; a page binary-searches its first block.
 */
import { DAY_MS } from "./contract.ts";
import type { Db } from "./driver.ts";
import { ByteBoundedStore } from "./kept-scans.ts";
import { type FlaggedRow, indexAfter, KeptRows, type LongRow, skipOf } from "./long-events.ts";
import { inWindow, type PageFilter, type PagePosition } from "./page-filter.ts";
import type { SnapshotStats } from "./snapshot-stats.ts";

/** A state's block spans a week, every state's a day: at most 13,055 and 38,551 rows of the demo's million events. */
const SPAN_MS = { state: 7 * DAY_MS, all: DAY_MS } as const;

/** The longest span of a source's (or a city's) block: past the whole range of the demo's snapshot (451 days). */
const MAX_SOURCE_SPAN_DAYS = 512;

class Block extends KeptRows {
  get bytes(): number {
    return 25 * this.count + 96;
  }
}

/** One block's rows: a state's, a city's in a state (the state a residual test), a source's, or all (`""`). */
const blockSql = (index: string) => `
SELECT start_ms, id, end_ms, sold_out, aggregator FROM snapshot ${index === "" ? "NOT INDEXED" : `INDEXED BY snapshot_${index}`}
WHERE ${index === "" ? "" : `${index} = $${index} AND `}${index === "city" ? "+state = $state AND " : ""}long = 0 AND start_ms >= $lo AND start_ms < $hi ORDER BY start_ms, id`;

type Index = "" | "state" | "city" | "source";
type Where = Record<string, string | null>;

/** A source's or a city's (in a state) short rows, for its blocks' span. */
const COUNT_SQL = {
  source: "SELECT events AS n FROM snapshot_sources WHERE source = $source",
  city: "SELECT count(*) AS n FROM snapshot INDEXED BY snapshot_city WHERE city = $city AND long = 0 AND +state = $state",
};

const SHORT_STARTS_SQL =
  "SELECT (SELECT min(start_ms) FROM snapshot WHERE long = 0) AS first, (SELECT max(start_ms) FROM snapshot WHERE long = 0) AS last";

/** Blocks of the current snapshot generation, bounded by bytes. Owned by server/list/caches.ts. */
export class SnapshotBlocks extends ByteBoundedStore<number, Block> {
  /** The earliest and latest starts among the snapshot's short rows, for the generation: no block lies outside. */
  #firstStartMs = Number.POSITIVE_INFINITY;
  #lastStartMs = Number.NEGATIVE_INFINITY;
  /** The block span of each source, and of each city in a state, read in the generation (`#spanMs`). */
  readonly #spans = new Map<string, number>();

  /** @param sourceBlockRows The most rows a source's (or city's) span of 1, 2, 4 … 512 days is expected to hold. */
  constructor(
    maxBytes: number,
    private readonly sourceBlockRows: number,
  ) {
    super(maxBytes);
  }

  /** No geo filter, a city only in a state, sources only alone: a scan tests the rest (window, row flags). */
  static supports(f: PageFilter): boolean {
    return (
      f.venueIds === null &&
      (f.city === null || f.state !== null) &&
      (f.sources === null || (f.state === null && f.city === null))
    );
  }

  /**
   * What the short half's index range scan returns (db/events-query.ts `buildHalfQuery`); with
   * sources, at most `want` of each snapshot source the tokens match (the caller merges them).
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
    const { state, city } = filter;
    if (filter.sources !== null)
      return sources!.flatMap((source) => this.#scan(db, filter, from, want, `s\n${source}`, "source", { source }));
    if (city !== null) return this.#scan(db, filter, from, want, `c\n${state}\n${city}`, "city", { state, city });
    if (state !== null) return this.#scan(db, filter, from, want, `t\n${state}`, "state", { state });
    return this.#scan(db, filter, from, want, "", "", {});
  }

  /** The rows of one part (`index` names it, `where` binds it), block by block. */
  #scan(db: Db, filter: PageFilter, from: PagePosition, want: number, part: string, index: Index, where: Where) {
    const span = index === "" ? SPAN_MS.all : index === "state" ? SPAN_MS.state : this.#spanMs(part, db, index, where);
    const out: LongRow[] = [];
    const skip = skipOf(filter);
    const last = Math.min(filter.beforeMs, this.#lastStartMs);
    for (let n = Math.floor(Math.max(from.startMs, this.#firstStartMs) / span); n * span <= last; n++) {
      const key = `${part}\n${n}`;
      let block = this.entries.get(key);
      if (!block) {
        block = new Block(db.prepare<FlaggedRow>(blockSql(index)).all({ ...where, lo: n * span, hi: (n + 1) * span }));
        this.entries.set(key, block);
      }
      const { start, id, end, flags, count } = block;
      for (let i = n * span <= from.startMs ? indexAfter(start, id, count, from) : 0; i < count; i++) {
        if (start[i] > filter.beforeMs) return out;
        if (!inWindow(filter, start[i], end[i]) || (flags[i] & skip) !== 0) continue;
        if (out.push({ start_ms: start[i], id: id[i], end_ms: end[i] }) === want) return out;
      }
    }
    return out;
  }

  /** The span of a source's or a city's blocks for this generation, from its count (`sourceBlockRows`). */
  #spanMs(part: string, db: Db, index: keyof typeof COUNT_SQL, where: Where): number {
    const known = this.#spans.get(part);
    if (known !== undefined) return known;
    const rows = db.prepare<{ n: number }>(COUNT_SQL[index]).get(where)?.n ?? 0;
    const rangeDays = Math.max(1, (this.#lastStartMs - this.#firstStartMs) / DAY_MS);
    let days = 1;
    while (days < MAX_SOURCE_SPAN_DAYS && (rows * 2 * days) / rangeDays <= this.sourceBlockRows) days *= 2;
    this.#spans.set(part, days * DAY_MS);
    return days * DAY_MS;
  }

  #forGeneration(db: Db, stats: SnapshotStats): void {
    if (!this.follow(stats.generation)) return;
    const row = db.prepare<{ first: number | null; last: number | null }>(SHORT_STARTS_SQL).get();
    this.#firstStartMs = row?.first ?? Number.POSITIVE_INFINITY;
    this.#lastStartMs = row?.last ?? Number.NEGATIVE_INFINITY;
  }

  override clear(): void {
    super.clear();
    this.#spans.clear();
  }
}
