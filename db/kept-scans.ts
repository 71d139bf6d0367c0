/**
 * Venue scans for page selection (db/events-query.ts): rows of an ordered index range whose venue
 * is among a geo filter's candidates, checked in JavaScript. Straight from SQLite in growing
 * chunks (`scanVenues`), or over ranges read once and shared by the pages that scan them
 * (`scanKept`; docs/architecture.md, "Caches").
 *
 * A geo page with no other filter scans its candidates' states in the state index, in
 * (start_ms, id) order from the window's opening (plan `venue_states`). Every such page in a
 * state reads the same rows from about the same place, whatever its point or polygon, so the rows
 * read are kept: by state, half (short or long events) and the two row flags a filter can add, as
 * parallel arrays growing from the first place read. A later page finds its place by binary
 * search and checks its window and venues in JavaScript; only rows past the kept end are read
 * from SQLite, and kept in turn.
 *
 * Exact for one state of the replica: `forState` drops everything when the state moves (the
 * same state string as the page and event caches, read in the page's transaction). A kept range
 * holds every row of the index after its start, without gaps, so a scan over it sees exactly the
 * rows SQLite would return (tested against the uncached path).
 */
import { LRUCache } from "lru-cache";
import type { Db, SqlValue, Statement } from "./driver.ts";
import { inWindow, type PageFilter, type PagePosition, type VenueSet } from "./page-filter.ts";

/** The first of `count` rows, in (start_ms, id) order in parallel arrays, that comes after `p`. */
export function indexAfter(start: Float64Array, id: Float64Array, count: number, p: PagePosition): number {
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const s = start[mid];
    if (s < p.startMs || (s === p.startMs && id[mid] <= p.id)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** One row of the state index, as page selection reads it. */
export interface ScannedRow {
  start_ms: number;
  id: number;
  end_ms: number;
  venue_id: number;
}

/** A copy of `a` in twice the room. */
function twice(a: Float64Array): Float64Array<ArrayBuffer> {
  const b = new Float64Array(a.length * 2);
  b.set(a);
  return b;
}

/** The rows of one range after `from`, in index order. */
class KeptRange {
  count = 0;
  /** No rows of the range follow the last one kept. */
  complete = false;
  start = new Float64Array(256);
  id = new Float64Array(256);
  end = new Float64Array(256);
  venue = new Float64Array(256);

  constructor(readonly from: PagePosition) {}

  get bytes(): number {
    return 32 * this.start.length + 64;
  }

  push(r: ScannedRow): void {
    if (this.count === this.start.length)
      [this.start, this.id, this.end, this.venue] = [this.start, this.id, this.end, this.venue].map(twice);
    this.start[this.count] = r.start_ms;
    this.id[this.count] = r.id;
    this.end[this.count] = r.end_ms;
    this.venue[this.count] = r.venue_id;
    this.count++;
  }

  /** The last kept row's position, or where the range starts when none is kept. */
  get last(): PagePosition {
    return this.count === 0 ? this.from : { startMs: this.start[this.count - 1], id: this.id[this.count - 1] };
  }
}

const before = (a: PagePosition, b: PagePosition) => a.startMs < b.startMs || (a.startMs === b.startMs && a.id < b.id);

/** The kept ranges of one state of the replica, bounded by bytes. */
export class KeptScans {
  readonly #ranges: LRUCache<string, KeptRange>;
  #state = "";

  constructor(
    maxBytes: number,
    /** Rows one range may keep; a scan past them reads on from SQLite without keeping. */
    readonly maxRows: number,
  ) {
    this.#ranges = new LRUCache<string, KeptRange>({ maxSize: maxBytes, sizeCalculation: (r) => r.bytes });
  }

  /** A geo filter alone: a range's query tests its row flags, a scan its window and venues. */
  static supports(f: PageFilter): boolean {
    return f.venueIds !== null && f.state === null && f.city === null && f.sources === null;
  }

  /** The ranges kept for `state`; everything is dropped first when the state moved. */
  forState(state: string): LRUCache<string, KeptRange> {
    if (state !== this.#state) {
      this.#ranges.clear();
      this.#state = state;
    }
    return this.#ranges;
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.#ranges.calculatedSize;
  }

  clear(): void {
    this.#ranges.clear();
    this.#state = "";
  }
}

/** What a venue scan is asked for: its query's parameters, the page's window and venues. */
export interface VenueScan {
  /** Bound besides `ls`, `lid` (exclusive lower bound) and `lim`. */
  params: Record<string, SqlValue>;
  filter: PageFilter;
  venues: VenueSet;
}

/** A venue scan over a range that is kept. */
export interface RangeScan extends VenueScan {
  /** Ranges of the page's replica state (`KeptScans.forState`). */
  ranges: LRUCache<string, KeptRange>;
  /** Names the range: index, filter value, half and row flags. */
  key: string;
  /** The range's query, without the window. */
  sql: string;
}

/**
 * Up to `want` rows after `from`, in index order, that start by the window's close, end at or
 * after its opening and are at one of the venues: what `SELECT … AND start_ms <= before AND
 * end_ms >= after ORDER BY start_ms, id` filtered by venue returns, read from the kept range
 * where it covers them and kept as the range grows (by at least `firstChunk` rows a read). A
 * range is started afresh when the scan begins before it or when more than half of it lies
 * behind the scan's start; a scan beginning past its end reads without keeping.
 */
export function scanKept(
  db: Db,
  s: RangeScan,
  from: PagePosition,
  want: number,
  firstChunk: number,
  maxRows: number,
): ScannedRow[] {
  const stmt = db.prepare<ScannedRow>(s.sql);
  const out: ScannedRow[] = [];
  let range = s.ranges.get(s.key);
  let i = range && !before(from, range.from) ? indexAfter(range.start, range.id, range.count, from) : -1;
  if (range && i === range.count && !range.complete && before(range.last, from)) {
    return scanVenues(stmt, s, from, want, firstChunk, out);
  }
  if (!range || i === -1 || (i > range.count / 2 && i > 4096)) {
    range = new KeptRange(from);
    s.ranges.set(s.key, range);
    i = 0;
  }
  for (let chunk = firstChunk; ; chunk = Math.min(chunk * 2, 8192)) {
    for (; i < range.count; i++) {
      if (range.start[i] > s.filter.beforeMs) return out;
      if (inWindow(s.filter, range.start[i], range.end[i]) && s.venues.has(range.venue[i])) {
        out.push({ start_ms: range.start[i], id: range.id[i], end_ms: range.end[i], venue_id: range.venue[i] });
        if (out.length === want) return out;
      }
    }
    if (range.complete) return out;
    if (range.count >= maxRows) return scanVenues(stmt, s, range.last, want, chunk, out); // long enough: read on without keeping
    const last = range.last;
    const rows = stmt.all({ ...s.params, ls: last.startMs, lid: last.id, lim: chunk });
    for (const r of rows) range.push(r);
    if (rows.length < chunk) range.complete = true;
    s.ranges.set(s.key, range); // its size in the cache follows its growth
  }
}

/**
 * Up to `want` rows after `from` (counting those already in `out`, which it returns) straight
 * from SQLite, nothing kept: in growing chunks from `firstChunk`, the window and the venues
 * tested here (the query may test the window too).
 */
export function scanVenues(
  stmt: Statement<ScannedRow>,
  s: VenueScan,
  from: PagePosition,
  want: number,
  firstChunk: number,
  out: ScannedRow[],
): ScannedRow[] {
  let pos = from;
  for (let chunk = firstChunk; ; chunk = Math.min(chunk * 2, 8192)) {
    const rows = stmt.all({ ...s.params, ls: pos.startMs, lid: pos.id, lim: chunk });
    for (const r of rows) {
      if (r.start_ms > s.filter.beforeMs) return out;
      if (inWindow(s.filter, r.start_ms, r.end_ms) && s.venues.has(r.venue_id) && out.push(r) === want) return out;
    }
    if (rows.length < chunk) return out;
    const last = rows[rows.length - 1];
    pos = { startMs: last.start_ms, id: last.id };
  }
}
