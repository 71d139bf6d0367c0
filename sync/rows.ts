/**
 * Validated records turned into the rows apply writes, in a compact form that crosses a thread
 * boundary cheaply: one typed array of numbers, one string of all text fields end to end with
 * their lengths, and one kind byte per record. A bulk sync derives and encodes on the thread that
 * parses (sync/worker.ts) while the writer thread (sync/writer-thread.ts) decodes and inserts;
 * structured-cloning the same rows as objects cost about as much as deriving them (measured:
 * ~150 ms per 20,000 records, against a memcpy for a typed array and one flat string).
 *
 * The derived fields (CONTRACT §3) are computed here, once per record, by sync/derive.ts.
 * Nulls: NaN in the numbers (no numeric field admits NaN: the schema rejects it), -1 as a length.
 */
import { deriveCategories, deriveCost, deriveInstant, deriveTicketing, deriveWebsite, vendorOf } from "./derive.ts";
import type { UpstreamRecord } from "./records.ts";

export const RowKind = { Venue: 0, Event: 1, DeleteEvent: 2, DeleteVenue: 3 } as const;
export type RowKind = (typeof RowKind)[keyof typeof RowKind];

/** One batch of encoded records, in stream order. Its buffers can be transferred to a worker. */
export interface RowBatch {
  count: number;
  /** RowKind, plus WIDE for a record whose strings are in `wideText`. */
  kinds: Uint8Array;
  nums: Float64Array;
  /** Strings of records known to hold no character above U+00FF: one byte per character. */
  text: string;
  /** Strings of the other records (see sync/source.ts decodeLines for why they are apart). */
  wideText: string;
  lengths: Int32Array;
}

const WIDE = 0x80;
/** Numbers an encoder makes room for at first (an event has 11). */
const NUMS_START = 4096;

const b = (x: boolean | null | undefined) => (x == null ? null : x ? 1 : 0);

/** Accumulates records of one batch; `finish()` returns the batch and starts a new one. */
export class RowEncoder {
  private kinds: number[] = [];
  // Written in place and grown by doubling: a number[] copied into a Float64Array at the end
  // cost ~0.5 s of a million-record import.
  private nums = new Float64Array(NUMS_START);
  private numCount = 0;
  private narrowTexts: string[] = [];
  private wideTexts: string[] = [];
  private texts = this.wideTexts;
  private lengths: number[] = [];

  get count(): number {
    return this.kinds.length;
  }

  private num(x: number | null): void {
    if (this.numCount === this.nums.length) {
      const grown = new Float64Array(this.nums.length * 2);
      grown.set(this.nums);
      this.nums = grown;
    }
    this.nums[this.numCount++] = x ?? NaN;
  }

  private str(s: string | null): void {
    if (s === null) this.lengths.push(-1);
    else {
      this.texts.push(s);
      this.lengths.push(s.length);
    }
  }

  /**
   * Adds a record. `narrow`: its line held no character above U+00FF and no \u escape, so
   * neither do its strings (nor what is derived from them).
   */
  push(r: UpstreamRecord, narrow = false): void {
    const wide = narrow ? 0 : WIDE;
    this.texts = narrow ? this.narrowTexts : this.wideTexts;
    switch (r.type) {
      case "venue": {
        const x = r.venue;
        this.kinds.push(RowKind.Venue | wide);
        this.num(r.seq), this.num(x.id), this.num(x.latitude), this.num(x.longitude), this.num(b(x.visible));
        this.str(x.name), this.str(x.city), this.str(x.state), this.str(x.timezone), this.str(x.geocodePrecision);
        return;
      }
      case "event": {
        const e = r.event;
        const start = deriveInstant(e.startDate);
        const end = e.endDate == null ? null : deriveInstant(e.endDate);
        const website = deriveWebsite(e.website, e.websiteBroken);
        const ticketing = deriveTicketing(e, website);
        this.kinds.push(RowKind.Event | wide);
        this.num(r.seq), this.num(e.id), this.num(e.venueId), this.num(start.ms), this.num(end?.ms ?? null);
        this.num(b(e.isFree)), this.num(b(e.isSoldOut)), this.num(b(e.isLowTickets)), this.num(b(e.websiteBroken));
        this.num(e.duplicateOf), this.num(b(e.ticketed));
        this.str(e.title), this.str(e.slug), this.str(start.iso), this.str(end?.iso ?? null), this.str(e.costText);
        this.str(e.age), this.str(e.website), this.str(e.imageUrl), this.str(JSON.stringify(deriveCategories(e.categories)));
        this.str(e.source), this.str(vendorOf(e.source)), this.str(e.status), this.str(deriveCost(e.costText, e.isFree));
        this.str(website), this.str(ticketing.status), this.str(ticketing.destination);
        this.str(e.ticketLinks.length === 0 ? null : JSON.stringify(e.ticketLinks)); // {url, seller, broken}, as validated
        return;
      }
      case "delete":
        this.kinds.push((r.entity === "event" ? RowKind.DeleteEvent : RowKind.DeleteVenue) | wide);
        this.num(r.seq), this.num(r.id);
        return;
    }
  }

  finish(): RowBatch {
    const batch: RowBatch = {
      count: this.kinds.length,
      kinds: new Uint8Array(this.kinds),
      nums: this.nums.slice(0, this.numCount),
      text: this.narrowTexts.join(""),
      wideText: this.wideTexts.join(""),
      lengths: new Int32Array(this.lengths),
    };
    this.kinds = [];
    this.numCount = 0;
    this.narrowTexts = [];
    this.texts = this.wideTexts = [];
    this.lengths = [];
    return batch;
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

  constructor(private readonly batch: RowBatch) {}

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
    if (this.wide) return this.batch.wideText.slice(this.wideAt, (this.wideAt += length));
    return this.batch.text.slice(this.at, (this.at += length));
  }

  /** A string the encoder never writes as null. */
  text(): string {
    return this.str()!;
  }
}
