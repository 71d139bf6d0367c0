/**
 * Incremental snapshot refresh (db/snapshot.ts, replica v4): after any sequence of applied
 * batches, the rows an incremental refresh leaves (snapshot, snapshot_sources, and the
 * snapshot_stats and snapshot_venue_events the refresh triggers maintain) equal those of a full
 * rebuild of the same live rows, and so does snapshot_venues (the geo candidates' venues, replica
 * v10), which apply keeps up with coordinate and precision changes too. Also: the full rebuild keeps the snapshot's index names and
 * definitions, and apply stops tracking (so the next refresh is full) past the tracking limit.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Db } from "../db/driver.ts";
import { openReplica } from "../db/replica.ts";
import { refreshSnapshot, SNAPSHOT_TRACKING, snapshotTracked } from "../db/snapshot.ts";
import { applyBatch } from "../sync/apply.ts";
import { parseRecordLine, type UpstreamRecord } from "../sync/records.ts";
import { deleteRecord, eventRecord, venueRecord } from "./records.ts";

let dir: string;
let db: Db;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "marquee-sync-snapshot-"));
  db = await openReplica(join(dir, "replica.db"));
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const NOW = Date.UTC(2030, 0, 1);
const parse = (records: object[]): UpstreamRecord[] => records.map((r, i) => parseRecordLine(JSON.stringify(r), i + 1));
const apply = (records: object[]) => applyBatch(db, parse(records));

/** Everything a page query reads from the snapshot side. */
function snapshotState() {
  return {
    snapshot: db.prepare("SELECT * FROM snapshot ORDER BY long, start_ms, id").all(),
    sources: db.prepare("SELECT * FROM snapshot_sources ORDER BY source").all(),
    stats: db.prepare("SELECT events, venues FROM snapshot_stats").all(),
    venueEvents: db.prepare("SELECT * FROM snapshot_venue_events ORDER BY venue_id").all(),
    venues: db.prepare("SELECT * FROM snapshot_venues ORDER BY id").all(),
  };
}
const dirty = () =>
  Number(
    db
      .prepare<{ n: number }>(
        "SELECT (SELECT count(*) FROM snapshot_dirty_events) + (SELECT count(*) FROM snapshot_dirty_venues) AS n",
      )
      .get()!.n,
  );
/** Venues marked for their snapshot_venues row alone (coordinates, precision). */
const places = () => Number(db.prepare<{ n: number }>("SELECT count(*) AS n FROM snapshot_dirty_places").get()!.n);

const day = (d: number) => new Date(NOW + d * 86_400_000).toISOString().replace(".000Z", "Z");
const venueChange = fc.record({
  id: fc.integer({ min: 1, max: 4 }),
  visible: fc.boolean(),
  city: fc.constantFrom("San Francisco", "Oakland"),
  state: fc.constantFrom("CA", "NV"),
  name: fc.constantFrom("A", "B"),
  latitude: fc.constantFrom(37.78, 37.79, null),
  longitude: fc.constantFrom(-122.43, -122.44),
  geocodePrecision: fc.constantFrom("street", "city", null),
});
/** A venue's place alone, the rest as venueRecord's defaults: often a change to nothing else. */
const placeChange = fc.record({
  id: fc.integer({ min: 1, max: 4 }),
  latitude: fc.constantFrom(37.78, 37.79, null),
  longitude: fc.constantFrom(-122.43, -122.44),
  geocodePrecision: fc.constantFrom("street", "city", null),
});
const eventChange = fc.record({
  id: fc.integer({ min: 1, max: 25 }),
  venueId: fc.integer({ min: 1, max: 5 }), // venue 5 never exists: unservable
  start: fc.integer({ min: -5, max: 30 }),
  days: fc.option(fc.integer({ min: 0, max: 60 }), { nil: null }),
  status: fc.constantFrom("active", "active", "cancelled"),
  duplicateOf: fc.option(fc.integer({ min: 1, max: 25 }), { nil: null, freq: 4 }),
  source: fc.constantFrom("scraper:fillmore", "scraper:warfield", "ticketmaster"),
  isSoldOut: fc.boolean(),
  title: fc.constantFrom("One", "Two"),
});
const change = fc.oneof(
  { weight: 1, arbitrary: venueChange.map((v) => venueRecord(v.id, v)) },
  { weight: 1, arbitrary: placeChange.map((v) => venueRecord(v.id, v)) },
  {
    weight: 6,
    arbitrary: eventChange.map((e) =>
      eventRecord(e.id, e.venueId, day(e.start), {
        endDate: e.days == null ? null : day(e.start + e.days),
        status: e.status,
        duplicateOf: e.duplicateOf,
        source: e.source,
        isSoldOut: e.isSoldOut,
        title: e.title,
      }),
    ),
  },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 25 }).map((id) => deleteRecord("event", id)) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 4 }).map((id) => deleteRecord("venue", id)) },
);

it("an incremental refresh leaves exactly what a full rebuild of the same live rows does", () => {
  fc.assert(
    fc.property(
      fc.array(fc.array(change, { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 6 }),
      (rounds) => {
        db.exec("DELETE FROM events; DELETE FROM venues");
        refreshSnapshot(db, NOW, { full: true });
        for (const round of rounds) {
          // Records carry rising seqs from the builders; the watermark must not skip them.
          db.exec("UPDATE sync_state SET value = 0 WHERE key = 'watermark'");
          apply(round);
          expect(snapshotTracked(db)).toBe(true);
          // Deletes always mark; an event or venue record marks only when a field its snapshot rows
          // are made of changed, so a round of such records may rightly mark nothing.
          if (round.some((r) => r.type === "delete")) expect(dirty()).toBeGreaterThan(0);
          refreshSnapshot(db, NOW);
          const incremental = snapshotState();
          refreshSnapshot(db, NOW, { full: true });
          expect(incremental).toEqual(snapshotState());
          // And both equal the counts taken the plain way (the refresh reads them in index order).
          const counted = (column: string) =>
            db
              .prepare(`SELECT ${column}, count(*) AS events FROM snapshot GROUP BY ${column} ORDER BY ${column}`)
              .all();
          expect(incremental.sources).toEqual(counted("source"));
          expect(incremental.venueEvents).toEqual(counted("venue_id"));
        }
      },
    ),
    { numRuns: 40 },
  );
});

it("changes a venue record makes to no snapshot field leave the venue's events alone", () => {
  apply([venueRecord(1), eventRecord(1, 1, day(1)), eventRecord(2, 1, day(2))]);
  refreshSnapshot(db, NOW);
  apply([venueRecord(1, { name: "Renamed" })]);
  expect([dirty(), places()]).toEqual([0, 0]);
  // New coordinates or precision replace the venue's snapshot_venues row, not its events' rows.
  apply([venueRecord(1, { name: "Renamed", latitude: 1, longitude: 2 })]);
  expect([dirty(), places()]).toEqual([0, 1]);
  apply([venueRecord(1, { name: "Renamed", latitude: 1, longitude: 2, geocodePrecision: "zip" })]);
  expect([dirty(), places()]).toEqual([0, 1]);
  expect(refreshSnapshot(db, NOW)).toBe(2);
  expect(snapshotState().venues).toEqual([{ id: 1, latitude: 1, longitude: 2, geocode_precision: "zip", state: "CA" }]);
  expect(places()).toBe(0);
  apply([venueRecord(1, { visible: false })]);
  expect(dirty()).toBe(1);
  expect(refreshSnapshot(db, NOW)).toBe(0);
  expect(snapshotState().venues).toEqual([]);
});

it("an event record that changes no snapshot field marks nothing; one that does marks its event", () => {
  apply([venueRecord(1), eventRecord(1, 1, day(1)), eventRecord(2, 1, day(2))]);
  refreshSnapshot(db, NOW);
  apply([
    eventRecord(1, 1, day(1), {
      title: "Renamed",
      costText: "$5",
      ticketLinks: [{ url: "https://www.axs.com/e/1", seller: "axs" }],
    }),
  ]);
  expect(dirty()).toBe(0);
  apply([eventRecord(2, 1, day(3))]);
  expect(dirty()).toBe(1);
  apply([eventRecord(1, 1, day(1), { isSoldOut: true })]);
  expect(dirty()).toBe(2);
  refreshSnapshot(db, NOW);
  const incremental = snapshotState();
  refreshSnapshot(db, NOW, { full: true });
  expect(incremental).toEqual(snapshotState());
});

it("a full rebuild recreates the snapshot's indexes under the same names and definitions", () => {
  const indexes = () =>
    db.prepare("SELECT name, sql FROM sqlite_master WHERE tbl_name = 'snapshot' ORDER BY name").all();
  const before = indexes();
  expect(before.length).toBeGreaterThan(4);
  apply([venueRecord(1), eventRecord(1, 1, day(1))]);
  expect(refreshSnapshot(db, NOW, { full: true })).toBe(1);
  expect(indexes()).toEqual(before);
});

it("past the tracking limit apply stops tracking and the next refresh rebuilds in full", () => {
  apply([venueRecord(1)]);
  refreshSnapshot(db, NOW);
  const n = SNAPSHOT_TRACKING.minEvents + 1;
  const events = Array.from({ length: n }, (_, i) => eventRecord(i + 1, 1, day(i % 20)));
  apply(events);
  expect(snapshotTracked(db)).toBe(false);
  expect(dirty()).toBe(0);
  expect(refreshSnapshot(db, NOW)).toBe(n);
  expect(snapshotTracked(db)).toBe(true);
});
