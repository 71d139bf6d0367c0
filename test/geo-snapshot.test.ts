/**
 * Geo pages choose their venues from the serving snapshot (docs/api.md, Serving snapshot; db/geo.ts):
 * between a sync's commit and the next refresh, a circle, a polygon and a circle over the 2,000 cap
 * behave as a city page over the same events does. A row of a venue hidden live is dropped at
 * hydration (`data: []` with `hasMore: true`, the cursor continuing from the last snapshot row),
 * and no venue beyond the snapshot's candidates is served before the refresh.
 *
 * In-process, live changes are applied straight to the server's replica (/_test/records refreshes
 * the snapshot). Against the Bun server, as an operator would: `marquee sync --from -` with its
 * input held open, so the live rows change and the snapshot waits for the sync to end.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDb } from "../db/driver.ts";
import { greatCircleMiles } from "../db/geo.ts";
import { migrate } from "../db/migrate.ts";
import { migrateReplica, REPLICA_MIGRATIONS, readWatermark } from "../db/replica.ts";
import { refreshSnapshot } from "../db/snapshot.ts";
import type { AppContext } from "../server/context.ts";
import { applyBatch } from "../sync/apply.ts";
import { parseRecordLine } from "../sync/records.ts";
import { applyToOlderReplica } from "./fixtures/older-replica.ts";
import { BUN, Client, ROOT, startBunServer, startInProcess, type Target } from "./harness.ts";
import { eventRecord, venueRecord } from "./records.ts";

const NOW = "2030-01-01T00:00:00Z";
const day = (d: number) => new Date(Date.parse(NOW) + d * 86_400_000).toISOString().replace(".000Z", "Z");
/** Degrees of latitude in a mile (on @turf's earth radius, which the API measures with). */
const LAT_PER_MILE = 1 / 69.09;
const UNLIMITED = { plan: "business", rateSustained: 1_000_000_000, rateBurst: 1_000_000_000 };

interface Page {
  data: Array<{
    id: number;
    venue: { id: number; latitude: number | null; longitude: number | null; distanceMiles: number | null };
  }>;
  page: { nextCursor: string | null; hasMore: boolean; count: number };
}

/** What a traversal shows page by page: the ids delivered and whether more follow. */
type Walk = Array<{ ids: number[]; hasMore: boolean }>;

async function getPage(c: Client, key: string, qs: string): Promise<Page> {
  const res = await c.get(`/v1/events?${qs}`, key);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Page;
}

/** Every page of `qs` by its cursors, with the events of each. */
async function walk(c: Client, key: string, qs: string): Promise<{ pages: Walk; events: Page["data"] }> {
  const pages: Walk = [];
  const events: Page["data"] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 20; i++) {
    const body = await getPage(c, key, cursor ? `${qs}&cursor=${cursor}` : qs);
    pages.push({ ids: body.data.map((e) => e.id), hasMore: body.page.hasMore });
    events.push(...body.data);
    if (!body.page.hasMore) return { pages, events };
    cursor = body.page.nextCursor;
  }
  throw new Error(`${qs}: more than 20 pages`);
}

const circleQs = (lat: number, lng: number, miles: number) => `lat=${lat}&lng=${lng}&radius_miles=${miles}`;
const polygonQs = (ring: Array<[number, number]>) =>
  `polygon=${encodeURIComponent(ring.map(([lat, lng]) => `${lat},${lng}`).join(";"))}`;

/** Two street-level venues 0.7 mi apart in one city, two events each on successive days. */
function pair(firstVenue: number, firstEvent: number, city: string, lat: number, lng: number) {
  const [a, b] = [firstVenue, firstVenue + 1];
  const place = { city, state: "KS", latitude: lat, longitude: lng, geocodePrecision: "street" };
  const venues = { a: { ...place }, b: { ...place, latitude: lat + 0.7 * LAT_PER_MILE } };
  const events = [firstEvent, firstEvent + 1, firstEvent + 2, firstEvent + 3];
  return {
    a,
    b,
    venues,
    events,
    records: [
      venueRecord(a, venues.a),
      venueRecord(b, venues.b),
      eventRecord(events[0], a, day(1)),
      eventRecord(events[1], a, day(2)),
      eventRecord(events[2], b, day(3)),
      eventRecord(events[3], b, day(4)),
    ],
  };
}

describe("in-process: live changes between a sync's commit and the refresh", () => {
  let target: Target & { ctx: AppContext };
  let c: Client;
  let key: string;

  beforeAll(async () => {
    target = await startInProcess();
    c = new Client(target);
    await c.setClock(NOW);
    key = await c.keyFor(UNLIMITED);
  });
  afterAll(() => target.close());

  /** Applies records to live rows only; the snapshot stays as it was. */
  const applyLive = (records: object[]) =>
    applyBatch(
      target.ctx.replica,
      records.map((r, i) => parseRecordLine(JSON.stringify(r), i + 1)),
    );

  for (const shape of ["circle", "polygon"] as const) {
    it(`a ${shape} over a venue hidden live pages as its city page does, until the refresh`, async () => {
      const [lat, lng] = shape === "circle" ? [38.5, -98.5] : [38.9, -97.9];
      const p = pair(shape === "circle" ? 1001 : 1101, shape === "circle" ? 2001 : 2101, `${shape}ville`, lat, lng);
      await c.records(p.records);
      const city = `city=${shape}ville&limit=2`;
      const geo = `${
        shape === "circle"
          ? circleQs(lat, lng, 5)
          : polygonQs([
              [lat - 0.05, lng - 0.05],
              [lat - 0.05, lng + 0.05],
              [lat + 0.05, lng + 0.05],
              [lat + 0.05, lng - 0.05],
            ])
      }&limit=2`;
      const [e1, e2, e3, e4] = p.events;
      const before = [
        { ids: [e1, e2], hasMore: true },
        { ids: [e3, e4], hasMore: false },
      ];
      expect((await walk(c, key, city)).pages).toEqual(before);
      expect((await walk(c, key, geo)).pages).toEqual(before);

      applyLive([venueRecord(p.a, { ...p.venues.a, visible: false })]);
      const hidden = [
        { ids: [], hasMore: true },
        { ids: [e3, e4], hasMore: false },
      ];
      expect((await walk(c, key, city)).pages).toEqual(hidden);
      const during = await walk(c, key, geo);
      expect(during.pages).toEqual(hidden);
      if (shape === "circle") {
        const miles = Math.round(greatCircleMiles(lat, lng, p.venues.b.latitude, lng) * 100) / 100;
        expect(during.events.map((e) => e.venue.distanceMiles)).toEqual([miles, miles]);
      }

      await c.snapshot();
      const after = [{ ids: [e3, e4], hasMore: false }];
      expect((await walk(c, key, city)).pages).toEqual(after);
      expect((await walk(c, key, geo)).pages).toEqual(after);
    });
  }

  it("a venue moved live is served at its live coordinate, or dropped once outside the circle, as a city drops it", async () => {
    const [lat, lng] = [37.6, -99.4];
    const p = pair(1201, 2201, "Movedville", lat, lng);
    await c.records(p.records);
    const [e1, e2, e3, e4] = p.events;
    const geo = `${circleQs(lat, lng, 5)}&limit=2`;

    // Within the circle: distanceMiles is measured to the coordinate the page serves.
    const near = { ...p.venues.a, latitude: lat + 2 * LAT_PER_MILE };
    applyLive([venueRecord(p.a, near)]);
    const moved = await walk(c, key, geo);
    expect(moved.pages.map((pg) => pg.ids)).toEqual([
      [e1, e2],
      [e3, e4],
    ]);
    for (const e of moved.events) {
      const { latitude, longitude } = e.venue;
      expect(e.venue.distanceMiles).toBe(Math.round(greatCircleMiles(lat, lng, latitude!, longitude!) * 100) / 100);
    }
    expect(moved.events[0].venue.latitude).toBe(near.latitude);

    // Out of the circle and into another city: both pages drop its rows, both say more follow.
    applyLive([venueRecord(p.a, { ...near, city: "Faraway", latitude: lat + 30 * LAT_PER_MILE })]);
    const gone = [
      { ids: [], hasMore: true },
      { ids: [e3, e4], hasMore: false },
    ];
    expect((await walk(c, key, "city=Movedville&limit=2")).pages).toEqual(gone);
    expect((await walk(c, key, geo)).pages).toEqual(gone);

    // A centroid geocode live: dropped without include_centroids, served with it.
    applyLive([venueRecord(p.a, { ...p.venues.a, geocodePrecision: "city" })]);
    expect((await walk(c, key, geo)).pages).toEqual(gone);
    expect((await walk(c, key, `${geo}&include_centroids=true`)).pages).toEqual([
      { ids: [e1, e2], hasMore: true },
      { ids: [e3, e4], hasMore: false },
    ]);
    await c.snapshot();
    expect((await walk(c, key, geo)).pages).toEqual([{ ids: [e3, e4], hasMore: false }]);
  });

  it("over the 2,000 cap, the 2,001st venue is not served while the nearest is hidden live, and is after the refresh", async () => {
    const [lat, lng] = [41.0, -100.0];
    const ids = Array.from({ length: 2001 }, (_, k) => 50_000 + k);
    // In a line north of the centre, ~0.007 mi apart: all 2,001 within 14 miles, no two tied.
    const venues = ids.map((id, k) =>
      venueRecord(id, { city: "Capville", state: "NE", latitude: lat + k / 10_000, longitude: lng }),
    );
    const [nearest, second, last] = [ids[0], ids[1], ids[2000]];
    await c.records([
      ...venues,
      eventRecord(60_001, nearest, day(1)),
      eventRecord(60_002, nearest, day(2)),
      eventRecord(60_003, last, day(3)),
      eventRecord(60_004, second, day(4)),
    ]);
    const city = "city=Capville&limit=2";
    const geo = `${circleQs(lat, lng, 25)}&limit=2`;
    expect((await walk(c, key, geo)).pages).toEqual([
      { ids: [60_001, 60_002], hasMore: true },
      { ids: [60_004], hasMore: false },
    ]);

    applyLive([venueRecord(nearest, { ...venues[0].venue, visible: false })]);
    const cityWalk = (await walk(c, key, city)).pages;
    const geoWalk = (await walk(c, key, geo)).pages;
    expect(cityWalk).toEqual([
      { ids: [], hasMore: true },
      { ids: [60_003, 60_004], hasMore: false },
    ]);
    // The same first page as the city's; the 2,001st venue is not a candidate until the refresh.
    expect(geoWalk[0]).toEqual(cityWalk[0]);
    expect(geoWalk).toEqual([
      { ids: [], hasMore: true },
      { ids: [60_004], hasMore: false },
    ]);

    await c.snapshot();
    const after = [{ ids: [60_003, 60_004], hasMore: false }];
    expect((await walk(c, key, city)).pages).toEqual(after);
    expect((await walk(c, key, geo)).pages).toEqual(after);
  });
});

describe("replica v10", () => {
  it("fills snapshot_venues as a refresh writes it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "marquee-geo-v9-"));
    const old = await openDb(join(dir, "v9.db"));
    try {
      migrate(
        old,
        REPLICA_MIGRATIONS.filter((m) => m.version <= 9),
      );
      const records = [
        venueRecord(1),
        venueRecord(2, { visible: false }),
        venueRecord(3, { latitude: null }),
        venueRecord(4, { longitude: null, geocodePrecision: null }),
        venueRecord(5, { geocodePrecision: "zip", state: "NV", latitude: 39.5, longitude: -119.8 }),
        venueRecord(6, { geocodePrecision: null }),
      ];
      applyToOlderReplica(old, records);
      const generation = () => old.prepare("SELECT generation FROM snapshot_stats").get();
      const before = generation();
      migrateReplica(old);
      expect(generation()).not.toEqual(before);
      const rows = () => old.prepare("SELECT * FROM snapshot_venues ORDER BY id").all();
      const migrated = rows();
      expect(migrated.map((r) => (r as { id: number }).id)).toEqual([1, 5, 6]);
      refreshSnapshot(old, Date.parse(NOW), { full: true });
      expect(rows()).toEqual(migrated);
      expect(readWatermark(old)).toBe(records.length);
    } finally {
      old.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("Bun server: `marquee sync --from -` held open", () => {
  let server: Target & { child: ChildProcess };
  let c: Client;
  let key: string;

  beforeAll(async () => {
    // No periodic refresh during the test: the snapshot moves only when the sync ends.
    server = await startBunServer(["--snapshot-interval", "3600"]);
    c = new Client(server);
    await c.setClock(NOW);
    key = await c.keyFor(UNLIMITED);
  });
  afterAll(() => server.close());

  /** Reads until the answer differs from `previous` (another process's commit), within a deadline. */
  async function changed(read: () => Promise<Walk>, previous: Walk): Promise<Walk> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const now = await read();
      if (JSON.stringify(now) !== JSON.stringify(previous) || Date.now() > deadline) return now;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it("a circle over a venue hidden by the sync pages as its city page does, until the sync's refresh", async () => {
    const [lat, lng] = [38.5, -98.5];
    const p = pair(1001, 2001, "Streamville", lat, lng);
    await c.records(p.records);
    const [e1, e2, e3, e4] = p.events;
    const city = async () => (await walk(c, key, "city=Streamville&limit=2")).pages;
    const geo = async () => (await walk(c, key, `${circleQs(lat, lng, 5)}&limit=2`)).pages;
    const before = [
      { ids: [e1, e2], hasMore: true },
      { ids: [e3, e4], hasMore: false },
    ];
    expect(await city()).toEqual(before);
    expect(await geo()).toEqual(before);

    const db = join(server.dir, "marquee.db");
    const sync = spawn(BUN, ["server/main.ts", "sync", "--from", "-", "--db", db, "--batch-size", "1", "--json"], {
      cwd: ROOT,
      env: { ...process.env, MARQUEE_DB: "" },
    });
    let stderr = "";
    sync.stderr.on("data", (d) => (stderr += d));
    sync.stdout.resume();
    const exited = new Promise<number | null>((r) => sync.on("exit", (code) => r(code)));
    try {
      const hide = venueRecord(p.a, { ...p.venues.a, visible: false });
      sync.stdin.write(`${JSON.stringify(hide)}\n`);
      // Committed by the sync (a batch of one), the snapshot not refreshed: its input is still open.
      const hidden = [
        { ids: [], hasMore: true },
        { ids: [e3, e4], hasMore: false },
      ];
      expect(await changed(city, before), stderr).toEqual(hidden);
      expect(await changed(geo, before)).toEqual(hidden);
      expect(sync.exitCode).toBeNull();

      sync.stdin.end();
      expect(await exited, stderr).toBe(0);
      const after = [{ ids: [e3, e4], hasMore: false }];
      expect(await changed(city, hidden)).toEqual(after);
      expect(await changed(geo, hidden)).toEqual(after);
    } finally {
      if (sync.exitCode === null && sync.signalCode === null) sync.kill("SIGTERM");
    }
  });
});
