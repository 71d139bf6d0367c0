/**
 * Venue scans for page selection (db/events-query.ts; docs/architecture.md, "Caches" and "The list path"): an index
 * range's rows at a geo filter's venues, tested in JavaScript, from SQLite in growing chunks (`scanVenues`) or from
 * ranges kept per state, half and row flags, each holding every row from its start, shared by a state's geo pages.
 */
import type { SqlValue, Statement } from "./driver.ts";
import {
  before,
  indexAfter,
  inWindow,
  type PageFilter,
  type PagePosition,
  type PageRow,
  type VenueSet,
} from "./page-filter.ts";
import { TwoGenerations } from "./two-generations.ts";

/** Entries bounded in bytes, kept for one key (the replica state, or the snapshot generation) until it moves. */
export class ByteBoundedStore<K, V extends { bytes: number }> {
  protected readonly entries: TwoGenerations<string, V>;
  #key: K | null = null;

  constructor(maxBytes: number) {
    this.entries = new TwoGenerations<string, V>({ size: maxBytes, sizeOf: (v) => v.bytes });
  }

  /** Drops everything when `key` moved; whether it did. */
  protected follow(key: K): boolean {
    if (key === this.#key) return false;
    this.clear();
    this.#key = key;
    return true;
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.entries.held;
  }

  clear(): void {
    this.entries.clear();
    this.#key = null;
  }
}

/** One row of the state index, as page selection reads it. */
export type ScannedRow = PageRow & { venue_id: number };

/** The rows of one range after `from`, in index order, in arrays that double as it grows. */
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
    if (this.count === this.start.length) {
      [this.start, this.id, this.end, this.venue] = [this.start, this.id, this.end, this.venue].map((a) => {
        const b = new Float64Array(a.length * 2);
        b.set(a);
        return b;
      });
    }
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

/** The kept ranges of one state of the replica, bounded by bytes. */
export class KeptScans extends ByteBoundedStore<string, KeptRange> {
  constructor(
    maxBytes: number,
    /** Rows one range may keep; a scan past them reads on from SQLite without keeping. */
    readonly maxRows: number,
  ) {
    super(maxBytes);
  }

  /** A geo filter alone: a range's query tests its row flags, a scan its window and venues. */
  static supports(f: PageFilter): boolean {
    return f.venueIds !== null && f.state === null && f.city === null && f.sources === null;
  }

  /** The ranges kept for `state`; everything is dropped first when the state moved. */
  forState(state: string): TwoGenerations<string, KeptRange> {
    this.follow(state);
    return this.entries;
  }
}

/** A venue scan: its query and parameters (bound with `ls`, `lid`, `lim`), the page's window and venues. */
type VenueScan = {
  stmt: Statement<ScannedRow>;
  params: Record<string, SqlValue>;
  filter: PageFilter;
  venues: VenueSet;
};

/** Over a kept range (its query without the window): the replica state's ranges, the range's name and row bound. */
type RangeScan = VenueScan & { ranges: TwoGenerations<string, KeptRange>; key: string; maxRows: number };

/**
 * Up to `want` rows after `from` in the window and at the venues, in index order, from the kept
 * range, grown by at least `firstChunk` rows a read. A range restarts when the scan begins before
 * it or more than half of it lies behind; a scan past its end reads without keeping.
 */
export function scanKept(s: RangeScan, from: PagePosition, want: number, firstChunk: number): ScannedRow[] {
  const out: ScannedRow[] = [];
  let range = s.ranges.get(s.key);
  let i = range && !before(from, range.from) ? indexAfter(range.start, range.id, range.count, from) : -1;
  if (range && i === range.count && !range.complete && before(range.last, from)) {
    return scanVenues(s, from, want, firstChunk, out);
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
    if (range.count >= s.maxRows) return scanVenues(s, range.last, want, chunk, out); // long enough: read on without keeping
    const last = range.last;
    const rows = s.stmt.all({ ...s.params, ls: last.startMs, lid: last.id, lim: chunk });
    for (const r of rows) range.push(r);
    if (rows.length < chunk) range.complete = true;
    s.ranges.set(s.key, range); // its size in the cache follows its growth
  }
}

/** Up to `want` rows after `from` (counting those in `out`, which it returns) from SQLite in growing chunks. */
export function scanVenues(s: VenueScan, from: PagePosition, want: number, firstChunk: number, out: ScannedRow[]) {
  let pos = from;
  for (let chunk = firstChunk; ; chunk = Math.min(chunk * 2, 8192)) {
    const rows = s.stmt.all({ ...s.params, ls: pos.startMs, lid: pos.id, lim: chunk });
    for (const r of rows) {
      if (r.start_ms > s.filter.beforeMs) return out;
      if (inWindow(s.filter, r.start_ms, r.end_ms) && s.venues.has(r.venue_id) && out.push(r) === want) return out;
    }
    if (rows.length < chunk) return out;
    const last = rows[rows.length - 1];
    pos = { startMs: last.start_ms, id: last.id };
  }
}
