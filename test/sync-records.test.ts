/**
 * Record validation (docs/upstream-records.md): error messages name the line and the field, and the fast
 * path of sync/fast-records.ts never disagrees with the valibot schema, which stays the source
 * of truth (property test over mutated demo records).
 */
import fc from "fast-check";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { parseIsoInstant } from "../db/instant.ts";
import { demoRecords } from "../sync/demo/generate.ts";
import { fastRecord } from "../sync/fast-records.ts";
import { parseRecordLine, RecordError, UpstreamRecord } from "../sync/records.ts";

const sample = [...demoRecords({ events: 400, seed: "records", anchor: "2026-12-01" })];
const valid = {
  venue: sample.find((r) => r.type === "venue")!,
  event: sample.find((r) => r.type === "event" && (r.event as { ticketLinks: unknown[] }).ticketLinks.length > 0)!,
  delete: sample.find((r) => r.type === "delete")!,
};
const isInstant = (s: string) => parseIsoInstant(s) !== null;

function errorOf(record: unknown, line = 7): string {
  try {
    parseRecordLine(typeof record === "string" ? record : JSON.stringify(record), line);
  } catch (err) {
    expect(err).toBeInstanceOf(RecordError);
    return (err as Error).message;
  }
  throw new Error("expected a RecordError");
}

describe("record validation messages", () => {
  const event = valid.event as { event: Record<string, unknown> };
  const venue = valid.venue as { venue: Record<string, unknown> };
  const cases: Array<[string, unknown, RegExp]> = [
    ["not JSON", "{", /^line 7: not valid JSON$/],
    ["JSON but not a record", "[1,2]", /^line 7: /],
    ["unknown type", { type: "show", seq: 1 }, /^line 7: type: /],
    ["seq missing", { ...valid.delete, seq: undefined }, /^line 7: seq: missing$/],
    ["seq not an integer", { ...valid.delete, seq: 1.5 }, /^line 7: seq: /],
    ["seq zero", { ...valid.delete, seq: 0 }, /^line 7: seq: /],
    ["delete of an unknown entity", { ...valid.delete, entity: "ticket" }, /^line 7: entity: /],
    ["venue state", { ...venue, venue: { ...venue.venue, state: "Calif" } }, /^line 7: venue\.state: /],
    ["venue latitude", { ...venue, venue: { ...venue.venue, latitude: 91 } }, /^line 7: venue\.latitude: /],
    [
      "venue precision",
      { ...venue, venue: { ...venue.venue, geocodePrecision: "rooftop" } },
      /^line 7: venue\.geocodePrecision: /,
    ],
    ["venue visible", { ...venue, venue: { ...venue.venue, visible: "yes" } }, /^line 7: venue\.visible: /],
    [
      "event startDate",
      { ...event, event: { ...event.event, startDate: "next Friday" } },
      /^line 7: event\.startDate: /,
    ],
    [
      "event endDate missing",
      { ...event, event: { ...event.event, endDate: undefined } },
      /^line 7: event\.endDate: missing$/,
    ],
    ["event status", { ...event, event: { ...event.event, status: "postponed" } }, /^line 7: event\.status: /],
    ["event source", { ...event, event: { ...event.event, source: "Ticketmaster" } }, /^line 7: event\.source: /],
    [
      "event ticket link",
      { ...event, event: { ...event.event, ticketLinks: [{ seller: "axs" }] } },
      /^line 7: event\.ticketLinks\.0\.url: /,
    ],
    ["event categories", { ...event, event: { ...event.event, categories: "Music" } }, /^line 7: event\.categories: /],
  ];
  for (const [what, record, message] of cases) {
    it(`${what}`, () => expect(errorOf(record)).toMatch(message));
  }

  it("fills the documented defaults for optional event fields", () => {
    const minimal = {
      type: "event",
      seq: 3,
      event: {
        id: 1,
        venueId: 2,
        title: "T",
        slug: "t",
        startDate: "2030-01-01T20:00",
        endDate: null,
        source: "axs",
        status: "active",
      },
    };
    expect(parseRecordLine(JSON.stringify(minimal), 1)).toEqual({
      ...minimal,
      event: {
        ...minimal.event,
        costText: null,
        isFree: null,
        isSoldOut: false,
        isLowTickets: false,
        age: null,
        website: null,
        websiteBroken: false,
        imageUrl: null,
        categories: [],
        duplicateOf: null,
        ticketed: true,
        ticketLinks: [],
      },
    });
  });
});

describe("the fast validation path", () => {
  it("takes every demo record, with exactly valibot's output", () => {
    for (const record of sample) {
      const fast = fastRecord(record, isInstant);
      expect(fast).toBeDefined();
      expect(fast).toEqual(v.parse(UpstreamRecord, record));
    }
  });

  /** A JSON value that is often close to what the field expects, sometimes not. */
  const jsonValue = fc.oneof(
    fc.constant(null),
    fc.constant(undefined),
    fc.boolean(),
    fc.integer({ min: -3, max: 3 }),
    fc.double(),
    fc.string({ maxLength: 4 }),
    fc.constantFrom(
      "2030-02-29T20:00:00Z",
      "2032-02-29T20:00:00Z",
      "0999-01-01T00:00:00Z",
      "2030-01-01T24:00:00Z",
      "2030-01-01t20:00:00z",
      "CA",
      "ca",
      "active",
      "street",
      "event",
      "venue",
      "scraper:x",
    ),
    fc.array(fc.oneof(fc.string({ maxLength: 3 }), fc.integer()), { maxLength: 2 }),
    fc.record(
      {
        url: fc.oneof(fc.string(), fc.integer()),
        seller: fc.oneof(fc.constant(null), fc.string(), fc.integer()),
        broken: fc.oneof(fc.boolean(), fc.constant(1)),
      },
      { requiredKeys: [] },
    ),
    fc.array(fc.record({ url: fc.string(), broken: fc.boolean() }), { maxLength: 2 }),
  );

  /** Sets `path` in a deep copy of `record` to `value` (undefined deletes the key). */
  function mutate(record: Record<string, unknown>, path: string[], value: unknown): unknown {
    const copy = structuredClone(record) as Record<string, any>;
    let target = copy;
    for (const key of path.slice(0, -1)) target = target[key];
    if (value === undefined) delete target[path.at(-1)!];
    else target[path.at(-1)!] = value;
    return copy;
  }

  const fieldPaths = (record: Record<string, unknown>): string[][] => {
    const nested = Object.entries(record).filter(([, x]) => x && typeof x === "object" && !Array.isArray(x));
    return [
      ...Object.keys(record).map((k) => [k]),
      ...nested.flatMap(([k, x]) => Object.keys(x as object).map((f) => [k, f])),
      ["event", "ticketLinks", "0", "url"],
      ["event", "ticketLinks", "0", "seller"],
      ["event", "ticketLinks", "0", "broken"],
      ["event", "extra"],
      ["extra"],
    ].filter((p) => p[0] in record || p[0] === "extra");
  };

  it("never accepts what valibot rejects, and agrees with it on what both accept", () => {
    const base = fc.constantFrom(...sample.slice(0, 200), valid.event, valid.venue, valid.delete);
    const mutated = base.chain((record) =>
      fc
        .array(fc.tuple(fc.constantFrom(...fieldPaths(record)), jsonValue), { minLength: 1, maxLength: 3 })
        .map((changes) => {
          let out: unknown = record;
          for (const [path, value] of changes) {
            try {
              out = mutate(out as Record<string, unknown>, path, value);
            } catch {
              // the path does not exist in this record (e.g. no ticket link): leave it
            }
          }
          return out;
        }),
    );
    fc.assert(
      fc.property(mutated, (record) => {
        const slow = v.safeParse(UpstreamRecord, record);
        const fast = fastRecord(record, isInstant);
        if (!slow.success) expect(fast).toBeUndefined();
        else if (fast !== undefined) expect(fast).toEqual(slow.output);
      }),
      { numRuns: 3000 },
    );
  });

  it("the digit parser of canonical dates agrees with the general one", () => {
    const general = (s: string) => {
      const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z$/.exec(s)!;
      const ms = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]);
      const d = new Date(ms);
      const ok =
        d.getUTCFullYear() === +m[1] &&
        d.getUTCMonth() === +m[2] - 1 &&
        d.getUTCDate() === +m[3] &&
        +m[4] < 24 &&
        +m[5] < 60 &&
        +m[6] < 60;
      return ok ? ms : null;
    };
    const two = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, "0"));
    const canonical = fc
      .tuple(fc.integer({ min: 1000, max: 9999 }), two(13), two(32), two(25), two(61), two(61))
      .map(([y, mo, d, h, mi, s]) => `${y}-${mo}-${d}T${h}:${mi}:${s}Z`);
    fc.assert(
      fc.property(canonical, (s) => parseIsoInstant(s) === general(s)),
      { numRuns: 5000 },
    );
  });
});
