/**
 * Validated records turned into the rows apply writes, in a compact form that crosses a thread
 * boundary cheaply: one typed array of numbers, the text fields end to end as latin1 bytes (the
 * rare record with wider characters: in a string of their own) with their lengths, and one kind
 * byte per record. A bulk sync derives and encodes on the thread that
 * parses (sync/sync-from.ts) while the writer thread (sync/writer-thread.ts) decodes and inserts;
 * structured-cloning the same rows as objects cost about as much as deriving them (measured:
 * ~150 ms per 20,000 records), where typed arrays are transferred without a copy.
 *
 * The derived fields (docs/upstream-records.md) are computed here, once per record, by sync/derive.ts.
 * Nulls: NaN in the numbers (no numeric field admits NaN: the schema rejects it), -1 as a length.
 */
import { SERVED_COLUMN_NAMES, type ServedColumns, servedJson } from "../db/served-json.ts";
import {
  deriveCategories,
  deriveCost,
  deriveInstant,
  deriveTicketing,
  deriveVendor,
  deriveWebsite,
  resolvedTicketing,
  safeHttpUrl,
} from "./derive.ts";
import type { UpstreamRecord } from "./records.ts";

export const RowKind = { Venue: 0, Event: 1, DeleteEvent: 2, DeleteVenue: 3 } as const;
export type RowKind = (typeof RowKind)[keyof typeof RowKind];

/**
 * One batch of encoded records, in stream order. Its four typed arrays can be transferred to a
 * worker and back (each owns its whole buffer); only their leading parts are filled.
 */
export interface RowBatch {
  count: number;
  /** RowKind, plus WIDE for a record whose strings are in `wideText`; `count` of them. */
  kinds: Uint8Array;
  nums: Float64Array;
  /**
   * Strings of records known to hold no character above U+00FF, end to end, one byte per
   * character (latin1): the first `textBytes` bytes.
   */
  text: Uint8Array;
  textBytes: number;
  /** Strings of the other records (see sync/source.ts decodeLines for why they are apart). */
  wideText: string;
  lengths: Int32Array;
}

/**
 * A column of an encoded row after its seq and id: its name in the replica, whether it crosses as
 * a number or as text, whether it may be null, and how it is derived from the record. The encoder
 * writes and the decoder reads the columns in this order; apply binds them in this order too
 * (sync/apply.ts), so the layout is written down once, here.
 */
interface Column<X> {
  name: string;
  type: "num" | "text";
  nullable: boolean;
  /** `before`: the values of the columns before it, in order. */
  from(x: X, before: readonly Value[]): Value;
}

type Value = number | string | null;

const num = <X>(name: string, from: (x: X) => number | null, nullable = true): Column<X> => ({
  name,
  type: "num",
  nullable,
  from,
});
const text = <X>(
  name: string,
  from: (x: X, before: readonly Value[]) => string | null,
  nullable = true,
): Column<X> => ({
  name,
  type: "text",
  nullable,
  from,
});

type VenueRecord = Extract<UpstreamRecord, { type: "venue" }>["venue"];

export const VENUE_COLUMNS: readonly Column<VenueRecord>[] = [
  num("latitude", (v) => v.latitude),
  num("longitude", (v) => v.longitude),
  num("visible", (v) => b(v.visible), false),
  text("name", (v) => v.name, false),
  text("city", (v) => v.city, false),
  text("state", (v) => v.state, false),
  text("timezone", (v) => v.timezone),
  text("geocode_precision", (v) => v.geocodePrecision),
];

/** An event with what is derived from it once, before its columns are read off it. */
interface DerivedEvent {
  e: Extract<UpstreamRecord, { type: "event" }>["event"];
  start: { ms: number; iso: string };
  end: { ms: number; iso: string } | null;
  website: string | null;
  ticketing: { status: string; destination: string | null };
}

const DERIVED_EVENT_COLUMNS: readonly Column<DerivedEvent>[] = [
  num("venue_id", (x) => x.e.venueId, false),
  num("start_ms", (x) => x.start.ms, false),
  num("end_ms", (x) => x.end?.ms ?? null),
  num("is_free", (x) => b(x.e.isFree)),
  num("is_sold_out", (x) => b(x.e.isSoldOut), false),
  num("is_low_tickets", (x) => b(x.e.isLowTickets), false),
  num("website_broken", (x) => b(x.e.websiteBroken), false),
  num("duplicate_of", (x) => x.e.duplicateOf),
  num("ticketed", (x) => b(x.e.ticketed), false),
  text("title", (x) => x.e.title, false),
  text("slug", (x) => x.e.slug, false),
  text("start_date", (x) => x.start.iso, false),
  text("end_date", (x) => x.end?.iso ?? null),
  text("cost_text", (x) => x.e.costText),
  text("age", (x) => x.e.age),
  // website_raw only where it differs from the served website (db/replica.ts): usually it is the same URL.
  text("website_raw", (x) => (x.e.website === x.website ? null : x.e.website)),
  text("image_url", (x) => x.e.imageUrl),
  text("categories", (x) => JSON.stringify(deriveCategories(x.e.categories)), false),
  text("source", (x) => x.e.source, false),
  text("vendor", (x) => deriveVendor(x.e.source, x.e.resolved), false),
  text("status", (x) => x.e.status, false),
  text("cost", (x) => (x.e.resolved ? x.e.resolved.cost : deriveCost(x.e.costText, x.e.isFree))),
  text("website", (x) => x.website),
  text("ticket_link_status", (x) => x.ticketing.status, false),
  text("ticket_destination", (x) => x.ticketing.destination),
  // {url, seller, broken}, as validated; NULL for none.
  text("ticket_links", (x) => (x.e.ticketLinks.length === 0 ? null : JSON.stringify(x.e.ticketLinks))),
  // Served as they are when set: an event of another deployment (docs/upstream-records.md).
  text("event_url", (x) => (x.e.resolved ? safeHttpUrl(x.e.resolved.eventUrl) : null)),
  text("ticket_url", (x) => (x.e.resolved ? x.ticketing.destination : null)),
];

/** Where each column above is in `before`, by name. */
const DERIVED_AT = columnIndex(DERIVED_EVENT_COLUMNS);

/** The served JSON's columns (db/served-json.ts) from the values of the columns above. */
function servedColumns(id: number, before: readonly Value[]): ServedColumns {
  const r: Record<string, Value> = { id };
  for (const name of SERVED_COLUMN_NAMES) if (name !== "id") r[name] = before[DERIVED_AT[name]];
  return r as ServedColumns;
}

export const EVENT_COLUMNS: readonly Column<DerivedEvent>[] = [
  ...DERIVED_EVENT_COLUMNS,
  // The Event's JSON as served, from the columns above as stored.
  text("served_json", (x, before) => servedJson(servedColumns(x.e.id, before)), false),
];

/** Each column's place in a decoded row (`readColumns`), by name. */
export function columnIndex<X>(columns: readonly Column<X>[]): Record<string, number> {
  return Object.fromEntries(columns.map((c, i) => [c.name, i]));
}

const WIDE = 0x80;
/** Room an encoder starts with, per array; each grows by doubling. */
const START = { records: 1024, nums: 16 * 1024, textBytes: 1024 * 1024, strings: 32 * 1024 } as const;

const b = (x: boolean | null | undefined) => (x == null ? null : x ? 1 : 0);

/** Buffer's latin1 writer (Node and Bun both have it; @types/node does not declare it). */
type Latin1Buffer = Buffer & { latin1Write(s: string, offset: number, length: number): number };
const latin1View = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) as Latin1Buffer;

/** The first `length` bytes of an array Latin1Text wrote, as one string (one copy). */
export const latin1String = (bytes: Uint8Array, length: number): string =>
  latin1View(bytes).toString("latin1", 0, length);

/** A copy of `used` elements of `array` in an array of at least `need`, doubling its length. */
function grown<T extends Uint8Array | Float64Array | Int32Array>(array: T, used: number, need: number): T {
  let length = array.length;
  while (length < need) length *= 2;
  const bigger = new (array.constructor as new (n: number) => T)(length);
  bigger.set(array.subarray(0, used));
  return bigger;
}

/**
 * Strings written end to end as latin1 bytes (the caller knows none is above U+00FF) into a typed
 * array that grows by doubling. `take()` hands the array over, to be transferred to the writer
 * thread, and goes on in a spare one; `recycle()` takes a handed-over array back once it is done
 * with, so a run fills the same few arrays again and again.
 */
export class Latin1Text {
  private bytes: Uint8Array;
  private view: Latin1Buffer;
  /** Bytes written since the last take(). */
  length = 0;
  private readonly spares: Uint8Array[] = [];

  constructor(capacity: number) {
    this.bytes = new Uint8Array(capacity);
    this.view = latin1View(this.bytes);
  }

  write(s: string): void {
    if (this.length + s.length > this.bytes.length) this.use(grown(this.bytes, this.length, this.length + s.length));
    this.length += this.view.latin1Write(s, this.length, s.length);
  }

  /** The array written so far (its first `length` bytes, read before); writing goes on in another. */
  take(): Uint8Array {
    const taken = this.bytes;
    this.use(this.spares.pop() ?? new Uint8Array(taken.length));
    this.length = 0;
    return taken;
  }

  /** An array take() handed out, free again; one transferred away and not back (detached) is left out. */
  recycle(bytes: Uint8Array): void {
    if (bytes.length > 0 && this.spares.length < 2) this.spares.push(bytes);
  }

  /** Forgets what was written since the last take(). */
  clear(): void {
    this.length = 0;
  }

  private use(bytes: Uint8Array): void {
    this.bytes = bytes;
    this.view = latin1View(bytes);
  }
}

/**
 * Accumulates records of one batch; `finish()` returns the batch and starts a new one. Everything
 * is written in place into typed arrays that are handed over whole and, once the batch is
 * committed, handed back (`recycle`): joining the batch's 340,000 strings into one and copying it
 * again to post it allocated ~25 MB a batch that the allocator gave back to the OS and faulted
 * in again (about 200,000 page faults and ~1.7 s of a million-record import's reading thread).
 */
export class RowEncoder {
  private kinds: Uint8Array = new Uint8Array(START.records);
  private nums: Float64Array = new Float64Array(START.nums);
  private readonly text = new Latin1Text(START.textBytes);
  private lengths: Int32Array = new Int32Array(START.strings);
  private recordCount = 0;
  private numCount = 0;
  private stringCount = 0;
  private wideTexts: string[] = [];
  private narrow = false;
  private readonly spares: Array<Pick<RowBatch, "kinds" | "nums" | "lengths">> = [];

  get count(): number {
    return this.recordCount;
  }

  private kind(k: number): void {
    if (this.recordCount === this.kinds.length) this.kinds = grown(this.kinds, this.recordCount, this.recordCount + 1);
    this.kinds[this.recordCount++] = k;
  }

  private num(x: number | null): void {
    if (this.numCount === this.nums.length) this.nums = grown(this.nums, this.numCount, this.numCount + 1);
    this.nums[this.numCount++] = x ?? NaN;
  }

  private str(s: string | null): void {
    if (this.stringCount === this.lengths.length)
      this.lengths = grown(this.lengths, this.stringCount, this.stringCount + 1);
    if (s === null) {
      this.lengths[this.stringCount++] = -1;
      return;
    }
    this.lengths[this.stringCount++] = s.length;
    if (this.narrow) this.text.write(s);
    else this.wideTexts.push(s);
  }

  private columns<X>(columns: readonly Column<X>[], x: X): void {
    const before: Value[] = [];
    for (const c of columns) {
      const value = c.from(x, before);
      before.push(value);
      if (c.type === "num") this.num(value as number | null);
      else this.str(value as string | null);
    }
  }

  /**
   * Adds a record. `narrow`: its line held no character above U+00FF and no \u escape, so
   * neither do its strings (nor what is derived from them).
   */
  push(r: UpstreamRecord, narrow = false): void {
    const wide = narrow ? 0 : WIDE;
    this.narrow = narrow;
    switch (r.type) {
      case "venue": {
        this.kind(RowKind.Venue | wide);
        this.num(r.seq);
        this.num(r.venue.id);
        this.columns(VENUE_COLUMNS, r.venue);
        return;
      }
      case "event": {
        const e = r.event;
        const start = deriveInstant(e.startDate);
        const website = deriveWebsite(e.website, e.websiteBroken);
        const x: DerivedEvent = {
          e,
          start,
          end: e.endDate == null ? null : deriveInstant(e.endDate),
          website,
          ticketing: e.resolved ? resolvedTicketing(e.resolved) : deriveTicketing(e, website),
        };
        this.kind(RowKind.Event | wide);
        this.num(r.seq);
        this.num(e.id);
        this.columns(EVENT_COLUMNS, x);
        return;
      }
      case "delete":
        this.kind((r.entity === "event" ? RowKind.DeleteEvent : RowKind.DeleteVenue) | wide);
        this.num(r.seq);
        this.num(r.id);
        return;
    }
  }

  /** The batch so far; its arrays are the batch's now, and the encoder fills a spare set. */
  finish(): RowBatch {
    const batch: RowBatch = {
      count: this.recordCount,
      kinds: this.kinds,
      nums: this.nums,
      textBytes: this.text.length,
      text: this.text.take(),
      wideText: this.wideTexts.join(""),
      lengths: this.lengths,
    };
    const spare = this.spares.pop();
    this.kinds = spare?.kinds ?? new Uint8Array(this.kinds.length);
    this.nums = spare?.nums ?? new Float64Array(this.nums.length);
    this.lengths = spare?.lengths ?? new Int32Array(this.lengths.length);
    this.recordCount = this.numCount = this.stringCount = 0;
    this.wideTexts = [];
    return batch;
  }

  /**
   * A committed batch's arrays, free to fill again. Arrays that were transferred away and not
   * back (detached: zero length) are left out.
   */
  recycle(batch: RowBatch): void {
    const { kinds, nums, lengths } = batch;
    this.text.recycle(batch.text);
    if (kinds.length > 0 && nums.length > 0 && lengths.length > 0 && this.spares.length < 2)
      this.spares.push({ kinds, nums, lengths });
  }
}

export function encodeRecords(records: readonly UpstreamRecord[]): RowBatch {
  const encoder = new RowEncoder();
  for (const r of records) encoder.push(r);
  return encoder.finish();
}

/** Reads a batch back in the order it was encoded; bind values come out as SQLite takes them. */
export class RowDecoder {
  private n = 0;
  private s = 0;
  private k = 0;
  /** Read positions in `text` and `wideText`; `wide` says which one the current record reads. */
  private at = 0;
  private wideAt = 0;
  private wide = false;

  /** The narrow strings, decoded once (one copy; each field is then a slice of it). */
  private readonly narrowText: string;

  constructor(private readonly batch: RowBatch) {
    this.narrowText = latin1String(batch.text, batch.textBytes);
  }

  /** The next record's kind, or undefined at the end. */
  next(): RowKind | undefined {
    if (this.k >= this.batch.count) return undefined;
    const kind = this.batch.kinds[this.k++];
    this.wide = (kind & WIDE) !== 0;
    return (kind & ~WIDE) as RowKind;
  }

  num(): number | null {
    const x = this.batch.nums[this.n++];
    return Number.isNaN(x) ? null : x;
  }

  /** A number the encoder never writes as null (seq, ids, counts, flags). */
  int(): number {
    return this.batch.nums[this.n++];
  }

  str(): string | null {
    const length = this.batch.lengths[this.s++];
    if (length < 0) return null;
    if (this.wide) {
      const from = this.wideAt;
      this.wideAt += length;
      return this.batch.wideText.slice(from, this.wideAt);
    }
    const from = this.at;
    this.at += length;
    return this.narrowText.slice(from, this.at);
  }

  /** A string the encoder never writes as null. */
  text(): string {
    return this.str()!;
  }

  /** The next row's columns, in their table's order. */
  readColumns<X>(columns: readonly Column<X>[]): Array<number | string | null> {
    const out: Array<number | string | null> = new Array(columns.length);
    for (let i = 0; i < columns.length; i++) {
      const c = columns[i];
      out[i] = c.type === "num" ? (c.nullable ? this.num() : this.int()) : c.nullable ? this.str() : this.text();
    }
    return out;
  }
}
