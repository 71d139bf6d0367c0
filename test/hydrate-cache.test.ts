/**
 * The kept hydrated events (db/hydrate.ts HydratedEvents): kept rows serve a page only while the
 * replica is in the state they were read from. A write on the serving connection itself
 * (test-mode records, in-process sync) and a commit by another connection (`marquee sync`)
 * must each be visible on the next page, and the serialized fragments must be byte for byte
 * what `JSON.stringify` of the shaped Event gives, distance spliced in or not.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Db } from "../db/driver.ts";
import { openDb } from "../db/driver.ts";
import type { PageFilter, PagePosition } from "../db/events-query.ts";
import type { LiveGeo } from "../db/geo.ts";
import { HydratedEvents, type Hydration, hydratePageJson, readReplicaState } from "../db/hydrate.ts";
import { openReplica } from "../db/replica.ts";
import { refreshSnapshot } from "../db/snapshot.ts";
import { applyBatch } from "../sync/apply.ts";
import { parseRecordLine } from "../sync/records.ts";
import { hydratePage } from "./hydrate-reference.ts";
import { eventRecord, venueRecord } from "./records.ts";

const T0 = Date.parse("2030-01-01T00:00:00Z");
const VENUE_2_LAT = 37.79;
const HOUR = 3_600_000;
let dir: string;
let db: Db;
let keys: PagePosition[];

const filter: PageFilter = {
  afterMs: T0,
  beforeMs: T0 + 100 * HOUR,
  state: null,
  city: null,
  sources: null,
  venueIds: null,
  excludeSoldOut: false,
  excludeAggregators: false,
};
const h: Hydration = { baseUrl: "http://marquee.test", geo: null };
const events = new HydratedEvents(h.baseUrl, { eventBytes: 1 << 20, venueBytes: 1 << 18 });
/** A page through the kept events, as the list path reads it (the state read with the rows). */
const kept = (d: Db, hd: Hydration = h) => hydratePageJson(d, events, readReplicaState(d), keys, filter, hd);
const titles = (d: Db) => kept(d).map((j) => (JSON.parse(j) as { title: string }).title);

/** Titles JSON must escape; one holds the character the stored served JSON marks the base URL with (db/served-json.ts). */
const TITLES: Record<number, string> = { 3: 'Ñoño \u2029 </script> "q"', 5: 'Raw \u0001 ","eventUrl":"\u0001 mark' };

/** Event `id` (1–6) at its venue and start, with `fields`; its seq rises past every record before it. */
const eventAt = (id: number, fields: Record<string, unknown> = {}) =>
  eventRecord(id, 1 + (id % 2), new Date(T0 + id * HOUR).toISOString(), {
    title: TITLES[id] ?? `Event ${id}`,
    ...fields,
  });

/** Applies `records` on connection `d`, as a sync does. */
const apply = (d: Db, records: object[]) =>
  applyBatch(
    d,
    records.map((r, i) => parseRecordLine(JSON.stringify(r), i + 1)),
  );

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "marquee-hydrate-"));
  db = await openReplica(join(dir, "replica.db"));
  apply(db, [
    venueRecord(1),
    venueRecord(2, { name: 'Café "Ünïcode" \u2028 ✓', latitude: VENUE_2_LAT }),
    ...[1, 2, 3, 4, 5, 6].map((id) => eventAt(id)),
  ]);
  refreshSnapshot(db, T0);
  keys = db
    .prepare<{ startMs: number; id: number }>("SELECT start_ms AS startMs, id FROM snapshot ORDER BY start_ms, id")
    .all();
});

afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

it("serializes each event exactly as JSON.stringify of the shaped Event, with and without a distance", () => {
  // A circle's live re-check as db/geo.ts hands it over: every venue admitted, miles by latitude.
  const circle: LiveGeo = { admits: () => true, miles: (lat) => (lat === VENUE_2_LAT ? 12.3456 : 0.004) };
  for (const geo of [null, circle]) {
    const hd = { ...h, geo };
    // Three times: the second read keeps the events, the third comes from the cache.
    for (let round = 0; round < 3; round++) {
      const fragments = kept(db, hd);
      expect(fragments).toEqual(hydratePage(db, keys, filter, hd).map((e) => JSON.stringify(e)));
      expect(fragments).toHaveLength(6);
    }
  }
});

it("sees a write made on the serving connection itself", () => {
  expect(titles(db)[0]).toBe("Event 1");
  apply(db, [eventAt(1, { title: "Renamed here" })]);
  expect(titles(db)[0]).toBe("Renamed here");
  apply(db, [eventAt(2, { status: "cancelled" })]);
  expect(kept(db).map((j) => (JSON.parse(j) as { id: number }).id)).toEqual([1, 3, 4, 5, 6]);
});

it("sees a commit made by another connection", async () => {
  expect(titles(db)).toContain("Event 4");
  const other = await openDb(db.path);
  try {
    apply(other, [eventAt(4, { title: "Renamed elsewhere" })]);
  } finally {
    other.close();
  }
  expect(titles(db)).toContain("Renamed elsewhere");
});

it("keeps events from their second reading while the state holds, and forgets them on request", () => {
  events.clear();
  titles(db);
  // Read once: only the venues are kept.
  expect(events.size).toBe(0);
  titles(db);
  expect(events.bytes).toBeGreaterThan(0);
  // One entry per selected event, the cancelled one kept as "not servable".
  expect(events.size).toBe(keys.length);
  events.clear();
  expect(events.bytes).toBe(0);
  expect(titles(db)).toHaveLength(5);
  // Clearing forgot the readings too.
  expect(events.size).toBe(0);
});

it("admits an event read before, or one whose id shares its bit", () => {
  const fresh = new HydratedEvents(h.baseUrl, { eventBytes: 1 << 20, venueBytes: 1 << 18 });
  expect(fresh.admit(5)).toBe(false);
  expect(fresh.admit(5)).toBe(true);
  expect(fresh.admit(6)).toBe(false);
  expect(fresh.admit(5 + 2 ** 22)).toBe(true);
});

it("bounds the kept rows by bytes", () => {
  const small = new HydratedEvents(h.baseUrl, { eventBytes: 1_500, venueBytes: 500 });
  // Twice: events are kept from their second reading.
  for (let round = 0; round < 2; round++) hydratePageJson(db, small, readReplicaState(db), keys, filter, h);
  expect(small.size).toBeGreaterThan(0);
  expect(small.bytes).toBeGreaterThan(0);
  expect(small.bytes).toBeLessThanOrEqual(2_000);
});

it("writes the JSON of odd fields as JSON.stringify does: encoded slugs, control characters, every isFree, categories, no links", async () => {
  const other = await openReplica(join(dir, "odd.db"));
  try {
    const odd = [
      { slug: "café & co/1 ?x=y", title: 'tab\there \u0001 del\u007f \\ "q" \u2028', isFree: null, categories: [] },
      {
        slug: "plain-slug",
        title: "emoji 🎷 and ünïcode",
        isFree: true,
        costText: "free",
        categories: ["Comedy", "Music"],
        ticketLinks: [],
      },
      {
        slug: "x",
        title: "</script><!--",
        isFree: false,
        costText: "  $5 – $10  ",
        age: "21+",
        ticketed: false,
        imageUrl: "https://img.example/a b.png",
      },
    ];
    const records = [
      venueRecord(1),
      ...odd.map((f, i) => eventRecord(100 + i, 1, new Date(T0 + (i + 1) * HOUR).toISOString(), f)),
    ];
    applyBatch(
      other,
      records.map((r, i) => parseRecordLine(JSON.stringify(r), i + 1)),
    );
    refreshSnapshot(other, T0);
    const oddKeys = other
      .prepare<{ startMs: number; id: number }>("SELECT start_ms AS startMs, id FROM snapshot ORDER BY start_ms, id")
      .all();
    expect(oddKeys).toHaveLength(3);
    const kept = new HydratedEvents(h.baseUrl, { eventBytes: 1 << 20, venueBytes: 1 << 18 });
    const json = hydratePageJson(other, kept, readReplicaState(other), oddKeys, filter, h);
    expect(json).toEqual(hydratePage(other, oddKeys, filter, h).map((e) => JSON.stringify(e)));
  } finally {
    other.close();
  }
});
