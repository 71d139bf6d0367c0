/**
 * Page selection (db/events-query.ts) against a brute-force reference: random filter
 * combinations, page sizes and windows traverse the snapshot by keyset and must return exactly
 * the expected ids in order, whichever plan the counts choose (sorted index, ordered index, the
 * JS-checked venue scan in growing chunks, short and long halves). Geo pages scanning state
 * ranges kept across pages (db/kept-scans.ts), and pages reading either half from kept blocks
 * (db/snapshot-blocks.ts), must select exactly what the uncached path does.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Db } from "../db/driver.ts";
import { type PageFilter, type PagePlan, type PagePosition, readConsistently, selectPage } from "../db/events-query.ts";
import { KeptScans } from "../db/kept-scans.ts";
import { type FilterRow, filterTerms, rowMatcher, sourceGlob, sourceMatches } from "../db/page-filter.ts";
import { openReplica } from "../db/replica.ts";
import { refreshSnapshot } from "../db/snapshot.ts";
import { SnapshotBlocks } from "../db/snapshot-blocks.ts";
import { readSnapshotStats, SnapshotEstimates } from "../db/snapshot-stats.ts";
import { applyBatch } from "../sync/apply.ts";
import { parseRecordLine } from "../sync/records.ts";
import { eventRecord, venueRecord } from "./records.ts";

const T0 = Date.parse("2030-01-01T00:00:00Z");
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const VENUES = 60;
const STATES = ["CA", "NY", "TX"];
const CITIES = ["Alpha", "Beta", "Gamma", "Delta"];
const SOURCES = [
  "ticketmaster",
  "ticketmaster:us",
  "songkick",
  "scraper:fillmore",
  "scraper:fill-more",
  "axs",
  "dice:nyc",
];
const AGGREGATORS = new Set(["ticketmaster", "axs"]);

interface Row {
  id: number;
  venue: number;
  startMs: number;
  endMs: number;
  source: string;
  soldOut: boolean;
}

let dir: string;
let db: Db;
const rows: Row[] = [];
const venueState = (v: number) => STATES[v % STATES.length];
const venueCity = (v: number) => CITIES[v % CITIES.length];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "marquee-query-"));
  db = await openReplica(join(dir, "replica.db"));
  // mulberry32: deterministic and well mixed in its low bits.
  let seed = 11;
  const rand = (n: number) => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
  const records: object[] = [];
  for (let v = 1; v <= VENUES; v++) records.push(venueRecord(v, { state: venueState(v), city: venueCity(v) }));
  for (let i = 1; i <= 3000; i++) {
    // Start times on a coarse grid (heavy ties); one in 12 lasts days (a long row).
    const startMs = T0 + (rand(120) - 10) * 6 * HOUR;
    const long = rand(12) === 0;
    const endMs = long ? startMs + (2 + rand(20)) * DAY : startMs + rand(4) * HOUR;
    const row = {
      id: i,
      venue: 1 + rand(VENUES),
      startMs,
      endMs,
      source: SOURCES[rand(SOURCES.length)],
      soldOut: rand(6) === 0,
    };
    rows.push(row);
    records.push(
      eventRecord(i, row.venue, new Date(startMs).toISOString(), {
        endDate: new Date(endMs).toISOString(),
        source: row.source,
        isSoldOut: row.soldOut,
      }),
    );
  }
  applyBatch(
    db,
    records.map((r, i) => parseRecordLine(JSON.stringify(r), i + 1)),
  );
  refreshSnapshot(db, T0);
});

afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

function reference(f: PageFilter): number[] {
  const like = (s: string, t: string) => new RegExp(`^${t.replace(/[.]/g, "\\.").replaceAll("_", ".")}`).test(s);
  const vendor = (s: string) => s.replace(/^scraper:/, "").split(":")[0];
  return rows
    .filter((r) => r.endMs >= f.afterMs && r.startMs <= f.beforeMs)
    .filter((r) => f.state === null || venueState(r.venue) === f.state)
    .filter((r) => f.city === null || venueCity(r.venue) === f.city)
    .filter((r) => f.sources === null || f.sources.some((t) => like(r.source, t)))
    .filter((r) => f.venueIds === null || f.venueIds.includes(r.venue))
    .filter((r) => !(f.excludeSoldOut && r.soldOut))
    .filter((r) => !(f.excludeAggregators && AGGREGATORS.has(vendor(r.source))))
    .sort((a, b) => a.startMs - b.startMs || a.id - b.id)
    .map((r) => r.id);
}

function traverse(f: PageFilter, limits: number[], plans: Set<PagePlan | null>): number[] {
  const out: number[] = [];
  let position: PagePosition | null = null;
  for (let i = 0; i < 10_000; i++) {
    const limit = limits[i % limits.length];
    const page = readConsistently(db, () =>
      selectPage(db, { stats: readSnapshotStats(db), estimates: new SnapshotEstimates(100) }, f, position, limit),
    );
    plans.add(page.plan);
    out.push(...page.keys.map((k) => k.id));
    if (!page.hasMore) return out;
    expect(page.keys).toHaveLength(limit);
    position = page.keys.at(-1)!;
  }
  throw new Error("traversal does not end");
}

const filterArb = fc.record({
  afterH: fc.integer({ min: -80, max: 700 }),
  spanH: fc.integer({ min: 1, max: 800 }),
  state: fc.option(fc.constantFrom(...STATES)),
  city: fc.option(fc.constantFrom(...CITIES, "Nowhere")),
  sources: fc.option(
    fc.subarray(["ticketmaster", "scraper:fill", "scraper:fill_more", "s_ngkick", "dice", "axs", "nothing"], {
      minLength: 1,
    }),
  ),
  venues: fc.option(
    fc.oneof(fc.subarray(Array.from({ length: VENUES }, (_, v) => v + 1)), fc.constant([] as number[])),
  ),
  excludeSoldOut: fc.boolean(),
  excludeAggregators: fc.boolean(),
});

type Filter = typeof filterArb extends fc.Arbitrary<infer T> ? T : never;

/** The page filter a drawn filter stands for. */
function pageFilter(g: Filter): PageFilter {
  return {
    afterMs: T0 + g.afterH * HOUR,
    beforeMs: T0 + (g.afterH + g.spanH) * HOUR,
    state: g.state,
    city: g.city,
    sources: g.sources,
    venueIds: g.venues,
    // What geo search hands over with its venues (db/geo.ts GeoCandidates.states).
    venueStates: g.venues ? [...new Set(g.venues.map(venueState))].sort() : null,
    excludeSoldOut: g.excludeSoldOut,
    excludeAggregators: g.excludeAggregators,
  };
}

function planExamples(): Array<[Filter, number[]]> {
  const none = {
    afterH: -10,
    spanH: 400,
    state: null,
    city: null,
    sources: null,
    venues: null,
    excludeSoldOut: false,
    excludeAggregators: false,
  };
  return [
    [none, [7, 30]],
    [{ ...none, state: STATES[0] }, [7, 30]],
    [{ ...none, city: CITIES[0] }, [7, 30]],
    [{ ...none, state: STATES[0], city: CITIES[0] }, [7, 30]],
    // Sources alone, few of them: each read in order. With another filter, the sorted source
    // plan needs few rows relative to the page: sqrt((limit+1) × rows).
    [{ ...none, sources: ["dice"] }, [100, 120]],
    [{ ...none, sources: ["ticketmaster", "axs"] }, [7, 30]],
    [{ ...none, sources: ["scraper:fill"], excludeSoldOut: true, excludeAggregators: true }, [5]],
    [{ ...none, state: STATES[0], sources: ["dice"] }, [100, 120]],
    [{ ...none, venues: [1, 2, 3] }, [7, 30]],
    // Many venues: their states' rows read in order, the venues checked in JS.
    [{ ...none, venues: Array.from({ length: 20 }, (_, v) => v + 1) }, [7, 30]],
    [{ ...none, sources: ["nothing"] }, [7]],
  ];
}

it("traverses exactly the brute-force answer for random filters, windows and page sizes", () => {
  const plans = new Set<PagePlan | null>();
  fc.assert(
    fc.property(filterArb, fc.array(fc.integer({ min: 1, max: 120 }), { minLength: 1, maxLength: 5 }), (g, limits) => {
      const f = pageFilter(g);
      expect(traverse(f, limits, plans)).toEqual(reference(f));
    }),
    // One example per plan, so the coverage check below never depends on the random draw.
    { numRuns: 150, examples: planExamples() },
  );
  // The property reached every plan, so every query shape was compared with the reference.
  for (const p of [
    "source",
    "source_each",
    "venue",
    "venue_states",
    "state_city",
    "city",
    "state",
    "time",
    null,
  ] as const) {
    expect(plans).toContain(p);
  }
});

it("walks long venue sets through several chunks of the JS-checked scan", () => {
  const plans = new Set<PagePlan | null>();
  // Three of sixty venues, about 150 rows: sorted for big pages, scanned in order for tiny ones.
  const f: PageFilter = {
    afterMs: T0 - 3 * DAY,
    beforeMs: T0 + 40 * DAY,
    state: null,
    city: null,
    sources: null,
    venueIds: [7, 27, 47],
    excludeSoldOut: false,
    excludeAggregators: false,
  };
  expect(traverse(f, [100], plans)).toEqual(reference(f)); // 150 <= sqrt(101 · 3000): sorted on snapshot_venue
  expect(plans).toEqual(new Set(["venue"]));
  // Pages of 1–2 rows lower the sort threshold below the count: time-ordered scan, 64-row chunks.
  expect(traverse(f, [1, 2], plans)).toEqual(reference(f));
  expect(plans).toContain("time");
});

it("selects the same pages from kept state ranges as from SQLite, page by page", () => {
  // Small bounds so ranges are dropped, restarted and read past their row cap in one run.
  const kept = new KeptScans(40_000, 300);
  const state = "one state of the replica";
  let keptPages = 0;
  fc.assert(
    fc.property(
      fc.record({
        afterH: fc.integer({ min: -80, max: 700 }),
        spanH: fc.integer({ min: 1, max: 800 }),
        venues: fc.subarray(
          Array.from({ length: VENUES }, (_, v) => v + 1),
          { minLength: 1 },
        ),
        excludeSoldOut: fc.boolean(),
        excludeAggregators: fc.boolean(),
      }),
      fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 4 }),
      (g, limits) => {
        const f: PageFilter = {
          afterMs: T0 + g.afterH * HOUR,
          beforeMs: T0 + (g.afterH + g.spanH) * HOUR,
          state: null,
          city: null,
          sources: null,
          venueIds: [...g.venues].sort((a, b) => a - b),
          venueStates: [...new Set(g.venues.map(venueState))].sort(),
          excludeSoldOut: g.excludeSoldOut,
          excludeAggregators: g.excludeAggregators,
        };
        const out: number[] = [];
        let position: PagePosition | null = null;
        for (let i = 0; ; i++) {
          const limit = limits[i % limits.length];
          const view = () => ({ stats: readSnapshotStats(db), estimates: new SnapshotEstimates(100) });
          const [fromKept, fresh] = readConsistently(db, () => [
            selectPage(db, { ...view(), scans: { kept, state } }, f, position, limit),
            selectPage(db, view(), f, position, limit),
          ]);
          // The same page; the plan may differ, since kept ranges make scanning in order cheaper than sorting.
          expect({ ...fromKept, plan: null }).toEqual({ ...fresh, plan: null });
          if (fresh.plan === "venue_states") expect(fromKept.plan).toBe("venue_states");
          if (fromKept.plan === "venue_states") keptPages++;
          out.push(...fromKept.keys.map((k) => k.id));
          if (!fromKept.hasMore) break;
          position = fromKept.keys.at(-1)!;
        }
        expect(out).toEqual(reference(f));
      },
    ),
    { numRuns: 120 },
  );
  expect(keptPages).toBeGreaterThan(100);
});

it("drops kept ranges when the replica state moves", () => {
  const kept = new KeptScans(1 << 20, 1000);
  const f: PageFilter = {
    afterMs: T0,
    beforeMs: T0 + 40 * DAY,
    state: null,
    city: null,
    sources: null,
    venueIds: Array.from({ length: 20 }, (_, v) => v + 1),
    venueStates: STATES,
    excludeSoldOut: false,
    excludeAggregators: false,
  };
  const select = (state: string) =>
    readConsistently(db, () =>
      selectPage(
        db,
        { stats: readSnapshotStats(db), estimates: new SnapshotEstimates(100), scans: { kept, state } },
        f,
        null,
        5,
      ),
    );
  expect(select("a").plan).toBe("venue_states");
  const held = kept.bytes;
  expect(held).toBeGreaterThan(0);
  expect(kept.forState("a").size).toBeGreaterThan(0);
  expect(kept.forState("b").size).toBe(0);
  expect(kept.bytes).toBe(0);
  select("b");
  expect(kept.bytes).toBe(held);
});

it("selects the same pages with every store kept as from SQLite, for any filter, page by page", () => {
  // Small: blocks are pushed out and read again within the run, and a source spans many.
  const blocks = new SnapshotBlocks({ blockBytes: 6_000, sourceBlockRows: 4, longEventRows: 10_000 });
  const kept = new KeptScans(40_000, 300);
  let pages = 0;
  let blockPages = 0;
  let cityBlockPages = 0;
  let blockBytes = 0;
  let sourceBlockPages = 0;
  let keptPages = 0;
  fc.assert(
    fc.property(filterArb, fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 4 }), (g, limits) => {
      // Any filter: a store serves only what its `supports` admits, the rest reads SQLite.
      const f = pageFilter(g);
      const out: number[] = [];
      let position: PagePosition | null = null;
      for (let i = 0; ; i++) {
        const limit = limits[i % limits.length];
        const view = () => ({ stats: readSnapshotStats(db), estimates: new SnapshotEstimates(100) });
        const [withBlocks, withAll, fresh] = readConsistently(db, () => [
          selectPage(db, { ...view(), blocks }, f, position, limit),
          selectPage(db, { ...view(), blocks, scans: { kept, state: "one state" } }, f, position, limit),
          selectPage(db, view(), f, position, limit),
        ]);
        expect(withBlocks).toEqual(fresh);
        // Kept state ranges may scan what SQLite would sort: the same page, another plan.
        expect({ ...withAll, plan: null }).toEqual({ ...fresh, plan: null });
        pages++;
        if (f.sources === null && f.venueIds === null && ["state", "state_city", "time"].includes(fresh.plan!))
          blockPages++;
        if (fresh.plan === "state_city") cityBlockPages++;
        blockBytes = Math.max(blockBytes, blocks.bytes);
        if (fresh.plan === "source_each") sourceBlockPages++;
        if (withAll.plan === "venue_states") keptPages++;
        out.push(...fresh.keys.map((k) => k.id));
        if (!fresh.hasMore) break;
        position = fresh.keys.at(-1)!;
      }
      expect(out).toEqual(reference(f));
    }),
    { numRuns: 150, examples: planExamples() },
  );
  expect(pages).toBeGreaterThan(300);
  expect(keptPages).toBeGreaterThan(10);
  expect(blockPages).toBeGreaterThan(100);
  expect(cityBlockPages).toBeGreaterThan(10);
  expect(sourceBlockPages).toBeGreaterThan(30);
  // A block whose cities no longer fit its budget is dropped, so the last page may leave none.
  expect(blockBytes).toBeGreaterThan(0);
  expect(blockBytes).toBeLessThanOrEqual(6_000);
});

it("reads its blocks again when the snapshot's generation moves, and a long half from SQLite past its bound", () => {
  const stats = readSnapshotStats(db);
  const longRows = rows.filter((r) => r.endMs - r.startMs > DAY).length;
  expect(longRows).toBeGreaterThan(0);
  const stateFilter = (state: string): PageFilter => ({
    afterMs: T0,
    beforeMs: T0 + 40 * DAY,
    state,
    city: null,
    sources: null,
    venueIds: null,
    excludeSoldOut: false,
    excludeAggregators: false,
  });
  const bounds = { blockBytes: 1_000_000, sourceBlockRows: 4, longEventRows: longRows };
  const select = (blocks: SnapshotBlocks, f: PageFilter, generation = stats.generation) =>
    readConsistently(db, () =>
      selectPage(db, { stats: { ...stats, generation }, estimates: new SnapshotEstimates(10), blocks }, f, null, 500),
    );
  const [a, b] = [stateFilter(STATES[0]), stateFilter(STATES[1])];
  // What state b's page keeps alone.
  const alone = new SnapshotBlocks(bounds);
  expect(select(alone, b).keys.map((k) => k.id)).toEqual(reference(b).slice(0, 500));
  // State a's blocks, then b's in the next generation: a's were dropped first.
  const blocks = new SnapshotBlocks(bounds);
  expect(select(blocks, a).keys.map((k) => k.id)).toEqual(reference(a).slice(0, 500));
  expect(blocks.bytes).toBeGreaterThan(0);
  expect(select(blocks, b, stats.generation + 1).keys.map((k) => k.id)).toEqual(reference(b).slice(0, 500));
  expect(blocks.bytes).toBe(alone.bytes);
  // More long rows than the bound: the long half is read from SQLite, and no long block is kept.
  const few = new SnapshotBlocks({ ...bounds, longEventRows: longRows - 1 });
  expect(select(few, b).keys.map((k) => k.id)).toEqual(reference(b).slice(0, 500));
  expect(few.bytes).toBeLessThan(alone.bytes);
});

it("keeps the sources a token matches for one snapshot generation, and reads them again in the next", () => {
  const estimates = new SnapshotEstimates(10);
  const matching = () =>
    readConsistently(db, () => [...estimates.matchingSources(db, readSnapshotStats(db), ["dice", "scraper:fill"])]);
  expect(matching().sort()).toEqual(["dice:nyc", "scraper:fill-more", "scraper:fillmore"]);
  // A source new to the snapshot, and a page over it, after the next refresh.
  const row: Row = { id: 9001, venue: 1, startMs: T0 + DAY, endMs: T0 + DAY + HOUR, source: "dice:la", soldOut: false };
  rows.push(row);
  const record = eventRecord(row.id, row.venue, new Date(row.startMs).toISOString(), {
    endDate: new Date(row.endMs).toISOString(),
    source: row.source,
  });
  applyBatch(db, [parseRecordLine(JSON.stringify(record), 1)]);
  refreshSnapshot(db, T0);
  expect(matching().sort()).toEqual(["dice:la", "dice:nyc", "scraper:fill-more", "scraper:fillmore"]);
  const f: PageFilter = {
    afterMs: T0,
    beforeMs: T0 + 2 * DAY,
    state: null,
    city: null,
    sources: ["dice:l"],
    venueIds: null,
    excludeSoldOut: false,
    excludeAggregators: false,
  };
  const page = readConsistently(db, () => selectPage(db, { stats: readSnapshotStats(db), estimates }, f, null, 25));
  expect(page.keys.map((k) => k.id)).toEqual([row.id]);
});

it("admits by the page filter's row test exactly the snapshot rows its SQL terms select", () => {
  type SnapshotColumns = {
    id: number;
    start_ms: number;
    end_ms: number;
    venue_id: number;
    state: string;
    city: string;
    source: string;
    sold_out: number;
    aggregator: number;
  };
  const snapshot = db.prepare<SnapshotColumns>("SELECT * FROM snapshot").all();
  fc.assert(
    fc.property(filterArb, (g) => {
      const f = pageFilter(g);
      const { terms, params } = filterTerms(f, (c) => c, { sources: "glob", venues: true, window: true });
      const sql = `SELECT id FROM snapshot WHERE 1${terms.map((t) => ` AND ${t}`).join("")} ORDER BY id`;
      const selected = db
        .prepare<{ id: number }>(sql)
        .all(params)
        .map((r) => r.id);
      const matches = rowMatcher(f);
      const row = (r: SnapshotColumns): FilterRow => ({
        startMs: r.start_ms,
        endMs: r.end_ms,
        state: r.state,
        city: r.city,
        source: r.source,
        venueId: r.venue_id,
        soldOut: r.sold_out === 1,
        aggregator: r.aggregator === 1,
      });
      const admitted = snapshot
        .filter((r) => matches(row(r)))
        .map((r) => r.id)
        .sort((a, b) => a - b);
      expect(admitted).toEqual(selected);
    }),
    { numRuns: 150 },
  );
});

it("matches a source token in JavaScript exactly as its GLOB does in SQLite", () => {
  const text = (min: number) =>
    fc.array(fc.constantFrom(..."ab1._:-"), { minLength: min, maxLength: 7 }).map((c) => c.join(""));
  const glob = db.prepare<{ m: number }>("SELECT $source GLOB $glob AS m");
  fc.assert(
    fc.property(text(1), text(0), (token, source) => {
      expect(sourceMatches([token], source)).toBe(glob.get({ source, glob: sourceGlob(token).glob })!.m === 1);
    }),
    { numRuns: 3000 },
  );
});
