/**
 * Both halves of a page (db/events-query.ts) from blocks of a part's rows kept for one snapshot generation: new windows
 * read the same index rows again and again (docs/architecture.md, "Caches"). A part is a state, a city in a state, a
 * source, or all. Its short rows are kept in blocks of time, each holding every short row starting within its span (a
 * page binary-searches its first block); its long rows in one block: they are few, yet their index range reads some
 * 250 rows that ended before the window opened.
 */
import { DAY_MS } from "./contract.ts";
import type { Db } from "./driver.ts";
import { ByteBoundedStore } from "./kept-scans.ts";
import { indexAfter, inWindow, type PageFilter, type PagePosition, type PageRow } from "./page-filter.ts";
import type { SnapshotStats } from "./snapshot-stats.ts";

/** A state's block spans a week, every state's a day: at most 13,055 and 38,551 rows of the demo's million events. */
const SPAN_MS = { state: 7 * DAY_MS, all: DAY_MS } as const;

/** The longest span of a source's (or a city's) block: past the whole range of the demo's snapshot (451 days). */
const MAX_SOURCE_SPAN_DAYS = 512;

/** A snapshot row with the two flags a filter may exclude. */
type FlaggedRow = PageRow & { sold_out: number; aggregator: number };

const SOLD_OUT = 1;
const AGGREGATOR = 2;

/** One block's rows in (start_ms, id) order as parallel arrays, with their flags. */
class Block {
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

  get bytes(): number {
    return 25 * this.count + 96;
  }
}

/** One block's rows of a half: a state's, a city's in a state (the state a residual test), a source's or all (`""`). */
const blockSql = (index: string) => `
SELECT start_ms, id, end_ms, sold_out, aggregator FROM snapshot ${index === "" ? "NOT INDEXED" : `INDEXED BY snapshot_${index}`}
WHERE ${index === "" ? "" : `${index} = $${index} AND `}${index === "city" ? "+state = $state AND " : ""}long = $long AND start_ms >= $lo AND start_ms < $hi ORDER BY start_ms, id`;

type Index = "" | "state" | "city" | "source";
type Where = Record<string, string | null>;

/** The long rows' one block spans every start. */
const EVERY_START = { lo: Number.MIN_SAFE_INTEGER, hi: Number.MAX_SAFE_INTEGER };

/** A source's or a city's (in a state) short rows, for its blocks' span. */
const COUNT_SQL = {
  source: "SELECT events AS n FROM snapshot_sources WHERE source = $source",
  city: "SELECT count(*) AS n FROM snapshot INDEXED BY snapshot_city WHERE city = $city AND long = 0 AND +state = $state",
};

/** The earliest and latest short starts, and the long rows (counted by the span index without reading them). */
const GENERATION_SQL = `SELECT (SELECT min(start_ms) FROM snapshot WHERE long = 0) AS first,
(SELECT max(start_ms) FROM snapshot WHERE long = 0) AS last,
(SELECT count(*) FROM snapshot INDEXED BY snapshot_span WHERE long = 1) AS longs`;

/** Blocks of the current snapshot generation, bounded by bytes. Owned by server/list/caches.ts. */
export class SnapshotBlocks extends ByteBoundedStore<number, Block> {
  /** The earliest and latest starts among the snapshot's short rows, for the generation: no block lies outside. */
  #firstStartMs = Number.POSITIVE_INFINITY;
  #lastStartMs = Number.NEGATIVE_INFINITY;
  /** The snapshot's long rows, for the generation. */
  #longRows = 0;
  /** The block span of each source, and of each city in a state, read in the generation (`#spanMs`). */
  readonly #spans = new Map<string, number>();

  /** The bounds db/tuning.ts sets: the blocks' bytes, a source's (or city's) block rows, the long rows kept. */
  constructor(private readonly bounds: Record<"blockBytes" | "sourceBlockRows" | "longEventRows", number>) {
    super(bounds.blockBytes);
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
   * What the half's index range scan returns (db/events-query.ts `buildHalfQuery`), null when long rows are not kept;
   * with sources, at most `want` of each snapshot source the tokens match (the caller merges them).
   */
  scan(
    db: Db,
    stats: SnapshotStats,
    filter: PageFilter,
    sources: readonly string[] | null,
    from: PagePosition,
    want: number,
    long: 0 | 1,
  ): PageRow[] | null {
    this.#forGeneration(db, stats);
    if (long === 1 && this.#longRows > this.bounds.longEventRows) return null;
    const { state, city } = filter;
    const scan = (part: string, index: Index, where: Where) =>
      this.#scan(db, filter, from, want, long, part, index, where);
    if (filter.sources !== null) return sources!.flatMap((source) => scan(`s\n${source}`, "source", { source }));
    if (city !== null) return scan(`c\n${state}\n${city}`, "city", { state, city });
    if (state !== null) return scan(`t\n${state}`, "state", { state });
    return scan("", "", {});
  }

  /** The rows of one part's half (`index` names the part, `where` binds it), block by block. */
  #scan(
    db: Db,
    f: PageFilter,
    from: PagePosition,
    want: number,
    long: 0 | 1,
    part: string,
    index: Index,
    where: Where,
  ) {
    const span =
      long === 1
        ? Number.POSITIVE_INFINITY
        : index === "" || index === "state"
          ? SPAN_MS[index || "all"]
          : this.#spanMs(part, db, index, where);
    // The long rows' one block, or the short blocks from the first start to the last.
    const first = long ? 0 : Math.floor(Math.max(from.startMs, this.#firstStartMs) / span);
    const last = long ? 0 : Math.floor(Math.min(f.beforeMs, this.#lastStartMs) / span);
    const out: PageRow[] = [];
    const skip = (f.excludeSoldOut ? SOLD_OUT : 0) | (f.excludeAggregators ? AGGREGATOR : 0);
    for (let n = first; n <= last; n++) {
      const key = `${part}\n${long ? "long" : n}`;
      let block = this.entries.get(key);
      if (!block) {
        const range = long ? EVERY_START : { lo: n * span, hi: (n + 1) * span };
        block = new Block(db.prepare<FlaggedRow>(blockSql(index)).all({ ...where, long, ...range }));
        this.entries.set(key, block);
      }
      const { start, id, end, flags, count } = block;
      for (let i = long || n * span <= from.startMs ? indexAfter(start, id, count, from) : 0; i < count; i++) {
        if (start[i] > f.beforeMs) return out;
        if (!inWindow(f, start[i], end[i]) || (flags[i] & skip) !== 0) continue;
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
    while (days < MAX_SOURCE_SPAN_DAYS && (rows * 2 * days) / rangeDays <= this.bounds.sourceBlockRows) days *= 2;
    this.#spans.set(part, days * DAY_MS);
    return days * DAY_MS;
  }

  #forGeneration(db: Db, stats: SnapshotStats): void {
    if (!this.follow(stats.generation)) return;
    const row = db.prepare<{ first: number | null; last: number | null; longs: number }>(GENERATION_SQL).get();
    this.#firstStartMs = row?.first ?? Number.POSITIVE_INFINITY;
    this.#lastStartMs = row?.last ?? Number.NEGATIVE_INFINITY;
    this.#longRows = Number(row?.longs ?? 0);
  }

  override clear(): void {
    super.clear();
    this.#spans.clear();
  }
}
