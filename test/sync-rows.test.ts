/**
 * The row encoding that carries a batch to the writer (sync/rows.ts): every field comes back as
 * it went in, through the latin1 bytes of narrow records and the string of wide ones, when the
 * arrays grow past their first size, and when a recycled batch's arrays are filled again with a
 * smaller batch (nothing of the larger one may show through).
 */
import { describe, expect, it } from "vitest";
import { parseRecordLine, type UpstreamRecord } from "../sync/records.ts";
import { EVENT_COLUMNS, type RowBatch, RowDecoder, RowEncoder, RowKind } from "../sync/rows.ts";
import { deleteRecord, eventRecord, venueRecord } from "./records.ts";

/** A record as the sync reads it (validated, defaults filled in). */
const parsed = (record: object): UpstreamRecord => parseRecordLine(JSON.stringify(record), 1);

/** Reads a batch back, field by field, in the order apply reads it (sync/apply.ts). */
function decode(batch: RowBatch): unknown[][] {
  const d = new RowDecoder(batch);
  const out: unknown[][] = [];
  for (let kind = d.next(); kind !== undefined; kind = d.next()) {
    const row: unknown[] = [kind, d.int(), d.int()];
    if (kind === RowKind.Venue) {
      row.push(d.num(), d.num(), d.int());
      for (let i = 0; i < 5; i++) row.push(d.str());
    } else if (kind === RowKind.Event) {
      for (let i = 0; i < 9; i++) row.push(d.num());
      for (let i = 0; i < EVENT_COLUMNS.filter((c) => c.type === "text").length; i++) row.push(d.str());
    }
    out.push(row);
  }
  return out;
}

/** The same records encoded by a fresh encoder, decoded: the reference a recycled one must match. */
function fresh(records: Array<[UpstreamRecord, boolean]>): unknown[][] {
  const encoder = new RowEncoder();
  for (const [r, narrow] of records) encoder.push(r, narrow);
  return decode(encoder.finish());
}

const venue = (id: number, name: string) => parsed(venueRecord(id, { name, latitude: id === 2 ? null : 40.7 }));
const event = (id: number, title: string, extra: Record<string, unknown> = {}) =>
  parsed(eventRecord(id, 1, "2027-01-02T03:04:05Z", { title, ...extra }));

describe("row batches", () => {
  it("carry narrow latin1 text, wide text and nulls back unchanged", () => {
    const encoder = new RowEncoder();
    const records: Array<[UpstreamRecord, boolean]> = [
      [venue(1, "Café Ñandú"), true], // above U+007F but within latin1: one byte each
      [venue(2, "Zoë’s ✓ Hall"), false],
      [event(3, "Señor ÿ ¡ ©"), true],
      [event(4, "Ω 🎉", { costText: null, website: null }), false],
      [parsed(deleteRecord("event", 3)), true],
    ];
    for (const [r, narrow] of records) encoder.push(r, narrow);
    const rows = decode(encoder.finish());
    expect(rows.map((r) => r[0])).toEqual([
      RowKind.Venue,
      RowKind.Venue,
      RowKind.Event,
      RowKind.Event,
      RowKind.DeleteEvent,
    ]);
    expect(rows[0]).toContain("Café Ñandú");
    expect(rows[1]).toContain("Zoë’s ✓ Hall");
    expect(rows[1][3]).toBeNull(); // latitude
    expect(rows[2]).toContain("Señor ÿ ¡ ©");
    expect(rows[3]).toContain("Ω 🎉");
    expect(rows[3].slice(12, 29)).toContain(null);
  });

  it("grow past their first size and come back whole", () => {
    const records: Array<[UpstreamRecord, boolean]> = [];
    const long = "x".repeat(5000);
    for (let id = 1; id <= 3000; id++) records.push([event(id, `${long} ${id} é`), id % 7 !== 0]);
    const encoder = new RowEncoder();
    for (const [r, narrow] of records) encoder.push(r, narrow);
    const batch = encoder.finish();
    expect(batch.textBytes).toBeGreaterThan(2500 * 5000); // the narrow six in seven, one byte a character
    const rows = decode(batch);
    expect(rows).toHaveLength(3000);
    expect(rows[2999]).toContain(`${long} 3000 é`);
    expect(rows[6]).toContain(`${long} 7 é`); // a wide one
  });

  it("filled again after recycling, hold only the new batch", () => {
    const encoder = new RowEncoder();
    const big: Array<[UpstreamRecord, boolean]> = [];
    for (let id = 1; id <= 50; id++) big.push([event(id, `a long title to leave bytes behind ${id}`.repeat(20)), true]);
    for (const [r, narrow] of big) encoder.push(r, narrow);
    const first = encoder.finish();
    encoder.recycle(first);
    encoder.push(event(51, "between"), true);
    encoder.finish(); // filled the arrays made when `first` was finished; the encoder now holds first's
    const small: Array<[UpstreamRecord, boolean]> = [
      [venue(9, "Small"), true],
      [event(60, "short"), true],
      [event(61, "wide ✓"), false],
    ];
    for (const [r, narrow] of small) encoder.push(r, narrow);
    const third = encoder.finish();
    expect(third.text === first.text && third.lengths === first.lengths).toBe(true); // the recycled arrays, filled again
    expect(decode(third)).toEqual(fresh(small));
  });

  it("leave out arrays that were transferred away", () => {
    const encoder = new RowEncoder();
    encoder.push(event(1, "one"), true);
    const sent = encoder.finish();
    structuredClone(sent, { transfer: [sent.text.buffer] }); // detaches it, as a postMessage does
    encoder.recycle(sent);
    for (const id of [2, 3]) {
      const record = event(id, `event ${id}`);
      encoder.push(record, true);
      const next = encoder.finish();
      expect(next.text.length).toBeGreaterThan(0);
      expect(decode(next)).toEqual(fresh([[record, true]]));
    }
  });
});
