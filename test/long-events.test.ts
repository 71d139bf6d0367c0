/**
 * The long rows kept in memory (db/long-events.ts) against the page filter's row test
 * (db/page-filter.ts `rowMatcher`) over the same rows:
 * whichever list a scan walks (a city's, a state's, a few sources' merged, or every row), it
 * returns exactly the rows after the position that the filter admits, in (start_ms, id) order,
 * at most `want`. The page-level comparison with SQLite is in test/events-query.test.ts; this one
 * reaches source filters of more sources than a merge takes, and sources without long rows.
 */
import fc from "fast-check";
import { expect, it } from "vitest";
import { LongRows } from "../db/long-events.ts";
import { type PageFilter, rowMatcher, sourceMatches } from "../db/page-filter.ts";

const STATES = ["CA", "NY", "TX"];
const CITIES = ["Alpha", "Beta", "Gamma"];
/** More than a merge walks (eight), and two that no row has. */
const SOURCES = Array.from({ length: 14 }, (_, i) => `source-${i}`);
const ROW_SOURCES = SOURCES.slice(0, 12);
const HOUR = 3_600_000;

const rowArb = fc.record({
  start: fc.integer({ min: 0, max: 200 }),
  days: fc.integer({ min: 1, max: 30 }),
  state: fc.constantFrom(...STATES),
  city: fc.constantFrom(...CITIES),
  source: fc.constantFrom(...ROW_SOURCES),
  soldOut: fc.boolean(),
  aggregator: fc.boolean(),
});

const caseArb = fc.record({
  rows: fc.array(rowArb, { maxLength: 300 }),
  afterH: fc.integer({ min: -50, max: 400 }),
  spanH: fc.integer({ min: 1, max: 800 }),
  state: fc.option(fc.constantFrom(...STATES)),
  city: fc.option(fc.constantFrom(...CITIES)),
  sources: fc.option(fc.subarray(SOURCES, { minLength: 1 })),
  excludeSoldOut: fc.boolean(),
  excludeAggregators: fc.boolean(),
  fromH: fc.option(fc.integer({ min: -50, max: 400 })),
  fromId: fc.integer({ min: 0, max: 300 }),
  want: fc.integer({ min: 1, max: 40 }),
});

it("scans exactly the long rows a brute-force filter admits, for any list it walks", () => {
  fc.assert(
    fc.property(caseArb, (c) => {
      // Loaded as the snapshot query returns them: in (start_ms, id) order, ids unique.
      const loaded = c.rows
        .map((r, i) => ({
          state: r.state,
          city: r.city,
          source: r.source,
          start_ms: r.start * HOUR,
          id: i + 1,
          end_ms: r.start * HOUR + r.days * 24 * HOUR,
          sold_out: r.soldOut ? 1 : 0,
          aggregator: r.aggregator ? 1 : 0,
        }))
        .sort((a, b) => a.start_ms - b.start_ms || a.id - b.id);
      const filter: PageFilter = {
        afterMs: c.afterH * HOUR,
        beforeMs: (c.afterH + c.spanH) * HOUR,
        state: c.state,
        city: c.city,
        sources: c.sources,
        venueIds: null,
        excludeSoldOut: c.excludeSoldOut,
        excludeAggregators: c.excludeAggregators,
      };
      const from =
        c.fromH === null ? { startMs: Number.MIN_SAFE_INTEGER, id: 0 } : { startMs: c.fromH * HOUR, id: c.fromId };
      const matches = rowMatcher(filter);
      const expected = loaded
        .filter(
          (r) =>
            (r.start_ms > from.startMs || (r.start_ms === from.startMs && r.id > from.id)) &&
            matches({
              startMs: r.start_ms,
              endMs: r.end_ms,
              state: r.state,
              city: r.city,
              source: r.source,
              venueId: 0,
              soldOut: r.sold_out === 1,
              aggregator: r.aggregator === 1,
            }),
        )
        .slice(0, c.want)
        .map((r) => ({ start_ms: r.start_ms, id: r.id, end_ms: r.end_ms }));
      // The snapshot sources the tokens match ("source-1" matches "source-10" too), as page selection hands them.
      const matched = c.sources && SOURCES.filter((s) => sourceMatches(c.sources!, s));
      expect(new LongRows(loaded).scan(filter, matched, from, c.want)).toEqual(expected);
    }),
    { numRuns: 600 },
  );
});
