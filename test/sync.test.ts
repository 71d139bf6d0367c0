/**
 * The sync worker (sync/sync-from.ts) on a real replica file: batches and the watermark, idempotent
 * re-runs, bad lines (line numbers, nothing half-applied, resume after the fix), delete and hide
 * semantics through live rows and the serving snapshot, and the sources (file, stream, follow).
 */
import { appendFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Db, openDb } from "../db/driver.ts";
import { migrate } from "../db/migrate.ts";
import { openReplica, REPLICA_MIGRATIONS, REPLICA_PAGE_BYTES, readWatermark } from "../db/replica.ts";
import { refreshSnapshot } from "../db/snapshot.ts";
import { applyBatch } from "../sync/apply.ts";
import { parseRecordLine } from "../sync/records.ts";
import { fileSource, streamSource } from "../sync/source.ts";
import { refreshSnapshotIfStale, SyncError, syncFrom } from "../sync/sync-from.ts";
import { applyToOlderReplica } from "./fixtures/older-replica.ts";
import { dumpReplica } from "./fixtures/replica-dump.ts";
import { deleteRecord, eventRecord, venueRecord } from "./records.ts";

let dir: string;
let db: Db;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "marquee-sync-"));
  db = await openReplica(join(dir, "replica.db"));
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const ndjson = (records: object[]) => `${records.map((r) => JSON.stringify(r)).join("\n")}\n`;
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}
const sync = (path: string, batchSize?: number) => syncFrom(db, fileSource(path), { batchSize });
const ids = (sql: string) =>
  db
    .prepare<{ id: number }>(sql)
    .all()
    .map((r) => r.id);
const snapshotIds = () => ids("SELECT id FROM snapshot ORDER BY id");
const eventIds = () => ids("SELECT id FROM events ORDER BY id");
/** An event's stored ticket links (replica v6: a JSON column), [] for none, undefined without the event. */
function linksOf(id: number): unknown[] | undefined {
  const row = db
    .prepare<{ links: string | null }>("SELECT ticket_links AS links FROM events WHERE id = $id")
    .get({ id });
  return row && (JSON.parse(row.links ?? "[]") as unknown[]);
}

/** Two venues and five events, one of each unservable kind. */
function basicStream() {
  return [
    venueRecord(1),
    venueRecord(2, { city: "Oakland", latitude: null, longitude: null, geocodePrecision: null }),
    eventRecord(101, 1, "2030-01-01T20:00:00Z"),
    eventRecord(102, 1, "2030-01-02T20:00:00Z", { status: "cancelled" }),
    eventRecord(103, 2, "2030-01-03T20:00:00Z", { status: "spam" }),
    eventRecord(104, 2, "2030-01-04T20:00:00Z", { duplicateOf: 101 }),
    eventRecord(105, 2, "2030-01-05T20:00:00-08:00", { endDate: "2030-01-07T01:00:00.250Z" }),
  ];
}

describe("replica pages", () => {
  it("are 4 KiB in a new replica, while an existing replica keeps its own size and syncs as before", async () => {
    expect(REPLICA_PAGE_BYTES).toBe(4096);
    expect(Number(db.pragma("page_size"))).toBe(REPLICA_PAGE_BYTES);
    const otherPath = join(dir, "other.db");
    const other = await openDb(otherPath, { pageBytes: 16384 }); // e.g. made while new replicas had 16 KiB pages
    migrate(other, REPLICA_MIGRATIONS);
    other.close();
    const reopened = await openReplica(otherPath);
    try {
      expect(Number(reopened.pragma("page_size"))).toBe(16384);
      const summary = await syncFrom(
        reopened,
        streamSource("t", [ndjson([venueRecord(1), eventRecord(1, 1, "2027-01-01T20:00:00Z")])]),
      );
      expect(summary.snapshotEvents).toBe(1);
      expect(Number(reopened.pragma("page_size"))).toBe(16384);
    } finally {
      reopened.close();
    }
  });
});

describe("sync worker", () => {
  it("applies a stream in batches, advances the watermark and refreshes the snapshot", async () => {
    const records = basicStream();
    const summary = await sync(file("a.ndjson", ndjson(records)), 3);
    expect(summary).toMatchObject({ records: 7, applied: 7, skipped: 0, batches: 3, snapshotEvents: 2 });
    expect(summary.watermark).toBe(records.at(-1)!.seq);
    expect(readWatermark(db)).toBe(summary.watermark);
    expect(eventIds()).toEqual([101, 102, 103, 104, 105]);
    expect(snapshotIds()).toEqual([101, 105]);
    // Dates are stored normalized to UTC.
    expect(db.prepare("SELECT start_date, end_date FROM events WHERE id = 105").get()).toEqual({
      start_date: "2030-01-06T04:00:00Z",
      end_date: "2030-01-07T01:00:00.250Z",
    });
    expect(ids("SELECT id FROM venue_rtree ORDER BY id")).toEqual([1]);
  });

  it("is idempotent: a second run over the same stream changes nothing", async () => {
    const path = file("a.ndjson", ndjson(basicStream()));
    await sync(path);
    const before = dumpReplica(db);
    const again = await sync(path);
    expect(again).toMatchObject({ records: 7, applied: 0, skipped: 7, snapshotEvents: null });
    expect(dumpReplica(db)).toEqual(before);
  });

  it("skips blank lines, accepts CRLF and a last line without newline, and counts lines as the file does", async () => {
    const [v, e1, e2] = [
      venueRecord(1),
      eventRecord(201, 1, "2030-02-01T20:00:00Z"),
      eventRecord(202, 1, "2030-02-02T20:00:00Z"),
    ];
    const text = `${JSON.stringify(v)}\r\n\n   \n${JSON.stringify(e1)}\r\n${JSON.stringify(e2)}`;
    const summary = await sync(file("crlf.ndjson", text));
    expect(summary).toMatchObject({ lines: 5, records: 3, applied: 3 });
    expect(eventIds()).toEqual([201, 202]);
  });

  describe("a bad line", () => {
    const badLines: Array<[string, (seq: number) => string, string]> = [
      ["invalid JSON", () => "{not json", "not valid JSON"],
      ["an unknown type", (seq) => JSON.stringify({ type: "artist", seq }), "type"],
      [
        "a missing field",
        (seq) => JSON.stringify({ ...eventRecord(9, 1, "2030-01-01T20:00:00Z"), seq, event: { id: 9 } }),
        "event.venueId",
      ],
      [
        "an impossible date",
        (seq) => JSON.stringify({ ...eventRecord(9, 1, "2030-02-30T20:00:00Z"), seq }),
        "event.startDate",
      ],
      [
        "an uppercase source",
        (seq) => JSON.stringify({ ...eventRecord(9, 1, "2030-01-01T20:00:00Z", { source: "TM" }), seq }),
        "event.source",
      ],
      ["a lowercase state", (seq) => JSON.stringify({ ...venueRecord(9, { state: "ca" }), seq }), "venue.state"],
    ];
    for (const [what, line, detail] of badLines) {
      it(`fails the run naming its line (${what}), applying no part of its batch`, async () => {
        const good = [
          venueRecord(1),
          eventRecord(301, 1, "2030-03-01T20:00:00Z"),
          eventRecord(302, 1, "2030-03-02T20:00:00Z"),
        ];
        const bad = line(good[2].seq + 1);
        const path = file("bad.ndjson", `${ndjson(good) + bad}\n`);
        const err = await sync(path, 2).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(SyncError);
        expect((err as SyncError).line).toBe(4);
        expect((err as SyncError).message).toMatch(/^line 4: /);
        expect((err as SyncError).message).toContain(detail);
        // Batch 1 (lines 1-2) was committed before; batch 2 (line 3 + the bad line 4) was not.
        expect(readWatermark(db)).toBe(good[1].seq);
        expect(eventIds()).toEqual([301]);
        expect((err as SyncError).summary).toMatchObject({ applied: 2, watermark: good[1].seq });
      });
    }

    it("a seq that does not increase is a bad line too", async () => {
      const [v, e] = [venueRecord(1), eventRecord(401, 1, "2030-04-01T20:00:00Z")];
      const path = file("order.ndjson", ndjson([v, e, { ...eventRecord(402, 1, "2030-04-02T20:00:00Z"), seq: e.seq }]));
      const err = (await sync(path).catch((x: unknown) => x)) as SyncError;
      expect(err.message).toBe(`line 3: seq ${e.seq} does not increase (previous ${e.seq})`);
      expect(readWatermark(db)).toBe(0);
    });

    it("after the line is fixed, a rerun resumes at the watermark and ends as a clean run would", async () => {
      const records = basicStream();
      const lines = records.map((r) => JSON.stringify(r));
      const broken = [...lines.slice(0, 5), "{oops", ...lines.slice(5)];
      const path = file("fixme.ndjson", `${broken.join("\n")}\n`);
      await expect(sync(path, 2)).rejects.toThrow(/^line 6: not valid JSON/);
      expect(readWatermark(db)).toBe(records[3].seq);
      writeFileSync(path, `${lines.join("\n")}\n`);
      const resumed = await sync(path, 2);
      expect(resumed).toMatchObject({ skipped: 4, applied: 3 });

      const fresh = await openReplica(join(dir, "fresh.db"));
      try {
        await syncFrom(fresh, fileSource(path), { batchSize: 2 });
        expect(dumpReplica(db)).toEqual(dumpReplica(fresh));
      } finally {
        fresh.close();
      }
    });
  });

  describe("deletes and hidden venues", () => {
    it("deleting an event removes its row, with its ticket links, and (after the refresh) its snapshot row", async () => {
      await sync(file("a.ndjson", ndjson(basicStream())));
      expect(linksOf(101)).toHaveLength(1);
      await sync(file("b.ndjson", ndjson([deleteRecord("event", 101)])));
      expect(eventIds()).toEqual([102, 103, 104, 105]);
      expect(linksOf(101)).toBeUndefined();
      expect(snapshotIds()).toEqual([105]);
    });

    it("hiding a venue keeps live rows but drops its events from the snapshot; showing it brings them back", async () => {
      await sync(file("a.ndjson", ndjson(basicStream())));
      await sync(file("hide.ndjson", ndjson([venueRecord(1, { visible: false })])));
      expect(eventIds()).toContain(101);
      expect(db.prepare("SELECT visible FROM venues WHERE id = 1").get()).toEqual({ visible: 0 });
      expect(snapshotIds()).toEqual([105]);
      await sync(file("show.ndjson", ndjson([venueRecord(1)])));
      expect(snapshotIds()).toEqual([101, 105]);
    });

    it("deleting a venue removes it and its R-tree entry; its events stay but are no longer servable", async () => {
      await sync(file("a.ndjson", ndjson(basicStream())));
      await sync(file("b.ndjson", ndjson([deleteRecord("venue", 1)])));
      expect(ids("SELECT id FROM venues ORDER BY id")).toEqual([2]);
      expect(ids("SELECT id FROM venue_rtree")).toEqual([]);
      expect(eventIds()).toContain(101);
      expect(snapshotIds()).toEqual([105]);
    });

    it("a venue update moves or removes its coordinates in the R-tree", async () => {
      await sync(file("a.ndjson", ndjson(basicStream())));
      await sync(
        file(
          "b.ndjson",
          ndjson([
            venueRecord(1, { latitude: null, longitude: null }),
            venueRecord(2, { latitude: 37.8, longitude: -122.27 }),
          ]),
        ),
      );
      expect(db.prepare("SELECT id, min_lat, min_lng FROM venue_rtree").all()).toEqual([
        { id: 2, min_lat: expect.closeTo(37.8, 4), min_lng: expect.closeTo(-122.27, 4) },
      ]);
    });

    it("keeps upstream's website apart only where the served one differs from it", async () => {
      const sites = {
        201: "https://fillmore.example.com/shows/201", // served as is
        202: "HTTPS://Fillmore.example.com/shows/202", // normalized
        203: "https://user:pw@fillmore.example.com/203", // credentials: not served
        204: "https://fillmore.example.com/shows/204", // broken: not served
        205: null,
      };
      await sync(
        file(
          "w.ndjson",
          ndjson([
            venueRecord(1),
            ...Object.entries(sites).map(([id, website]) =>
              eventRecord(Number(id), 1, "2030-01-01T20:00:00Z", { website, websiteBroken: id === "204" }),
            ),
          ]),
        ),
      );
      const rows = db
        .prepare<{ id: number; website: string | null; raw: string | null; upstream: string | null }>(
          "SELECT id, website, website_raw AS raw, coalesce(website_raw, website) AS upstream FROM events ORDER BY id",
        )
        .all();
      expect(rows).toEqual([
        { id: 201, website: sites[201], raw: null, upstream: sites[201] },
        { id: 202, website: "https://fillmore.example.com/shows/202", raw: sites[202], upstream: sites[202] },
        { id: 203, website: null, raw: sites[203], upstream: sites[203] },
        { id: 204, website: null, raw: sites[204], upstream: sites[204] },
        { id: 205, website: null, raw: null, upstream: null },
      ]);
    });

    it("an event update replaces the row and its ticket links", async () => {
      await sync(file("a.ndjson", ndjson(basicStream())));
      const links = [
        { url: "https://dice.fm/event/x", seller: "dice", broken: true },
        { url: "https://www.axs.com/events/1", seller: "axs" },
      ];
      await sync(
        file("b.ndjson", ndjson([eventRecord(101, 1, "2030-01-01T21:00:00Z", { title: "Moved", ticketLinks: links })])),
      );
      expect(db.prepare("SELECT title, start_date, ticket_destination FROM events WHERE id = 101").get()).toEqual({
        title: "Moved",
        start_date: "2030-01-01T21:00:00Z",
        ticket_destination: "https://www.axs.com/events/1",
      });
      expect(linksOf(101)).toEqual([
        { url: "https://dice.fm/event/x", seller: "dice", broken: true },
        { url: "https://www.axs.com/events/1", seller: "axs", broken: false },
      ]);
      await sync(file("c.ndjson", ndjson([eventRecord(101, 1, "2030-01-01T21:00:00Z", { ticketLinks: [] })])));
      expect(db.prepare("SELECT ticket_links FROM events WHERE id = 101").get()).toEqual({ ticket_links: null });
    });
  });

  it("replica v12 writes the served JSON of the events already applied, as apply writes it", async () => {
    const db = await openReplica(join(dir, "v11.db"));
    try {
      const resolved = {
        eventUrl: "https://events.example.com/events/3/x",
        ticketUrl: "https://events.example.com/t/3",
        cost: "$5",
        ticketLinkStatus: "available",
        aggregator: null,
      };
      const records = [
        venueRecord(1),
        eventRecord(1, 1, "2030-01-01T20:00:00Z", { title: 'Ñoño "q" \u0001 ,"eventUrl":"\u0001 ✓' }),
        eventRecord(2, 1, "2030-01-02T20:00:00Z", { ticketLinks: [], website: null, isFree: null, costText: null }),
        eventRecord(3, 1, "2030-01-03T20:00:00Z", { resolved }),
      ];
      applyBatch(
        db,
        records.map((r, i) => parseRecordLine(JSON.stringify({ ...r, seq: i + 1 }), i + 1)),
      );
      const served = () =>
        db.prepare<{ id: number; json: string }>("SELECT id, served_json AS json FROM events ORDER BY id").all();
      const applied = served();
      // The base URL's places: the page and the redirect; none without a destination; none for another deployment's.
      expect(applied.map((r) => r.json.split("\u0001").length - 1)).toEqual([2, 1, 0]);
      // The replica as v11 left it: no column, then the migration.
      db.exec("ALTER TABLE events DROP COLUMN served_json; PRAGMA user_version = 11");
      migrate(db, REPLICA_MIGRATIONS, { log: () => {} });
      expect(served()).toEqual(applied);
    } finally {
      db.close();
    }
  });

  it("replica v6 moves the ticket links of an older replica into their events, in order", async () => {
    const old = await openDb(join(dir, "v5.db"));
    try {
      migrate(
        old,
        REPLICA_MIGRATIONS.filter((m) => m.version <= 5),
      );
      const event = (id: number) =>
        `INSERT INTO events(id, venue_id, title, slug, start_date, start_ms, is_sold_out, is_low_tickets, website_broken,
           categories, source, vendor, status, ticketed, ticket_link_status, seq) VALUES (${id}, 1, 't', 's', 'x', 0, 0, 0, 0, '[]', 'a', 'a', 'active', 1, 'missing', 1)`;
      old.exec(`${event(1)}; ${event(2)};
        INSERT INTO ticket_links(event_id, position, url, seller, broken) VALUES (1, 1, 'https://b.example/2', NULL, 1), (1, 0, 'https://a.example/é', 'dice', 0)`);
      migrate(old, REPLICA_MIGRATIONS);
      const rows = old
        .prepare<{ id: number; links: string | null }>("SELECT id, ticket_links AS links FROM events ORDER BY id")
        .all();
      expect(rows.map((r) => ({ id: r.id, links: r.links && JSON.parse(r.links) }))).toEqual([
        {
          id: 1,
          links: [
            { url: "https://a.example/é", seller: "dice", broken: false },
            { url: "https://b.example/2", seller: null, broken: true },
          ],
        },
        { id: 2, links: null },
      ]);
      // The same text a sync writes for the same links.
      expect(rows[0].links).toBe(
        JSON.stringify([
          { url: "https://a.example/é", seller: "dice", broken: false },
          { url: "https://b.example/2", seller: null, broken: true },
        ]),
      );
    } finally {
      old.close();
    }
  });

  it("replicas v7 and v8 put each snapshot index's filter column first, cover what a page tests, and keep the per-venue counts", async () => {
    const old = await openDb(join(dir, "v6.db"));
    try {
      migrate(
        old,
        REPLICA_MIGRATIONS.filter((m) => m.version <= 6),
      );
      const records = [
        venueRecord(1),
        venueRecord(2, { city: "Oakland" }),
        ...basicStream().filter((r) => r.type === "event"),
        eventRecord(201, 2, "2030-02-01T20:00:00Z", { endDate: "2030-06-01T20:00:00Z" }),
      ];
      applyToOlderReplica(old, records);
      // Today's refresh also writes the geo candidates' venues (replica v10): temporary tables
      // stand in for them on this v6 replica, and go before it migrates.
      old.exec(`CREATE TEMP TABLE snapshot_venues(id INTEGER PRIMARY KEY, latitude, longitude, geocode_precision, state);
        CREATE TEMP TABLE snapshot_dirty_places(id INTEGER PRIMARY KEY)`);
      refreshSnapshot(old, Date.UTC(2030, 0, 1));
      old.exec("DROP TABLE temp.snapshot_venues; DROP TABLE temp.snapshot_dirty_places");
      const counts = () => old.prepare("SELECT * FROM snapshot_venue_events ORDER BY venue_id").all();
      const before = counts();
      expect(before).toEqual([
        { venue_id: 1, events: 1 },
        { venue_id: 2, events: 2 },
      ]); // venue 2: one short, one long
      migrate(old, REPLICA_MIGRATIONS);
      const definitions = old
        .prepare<{ sql: string }>(
          "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'snapshot' AND name <> 'snapshot_span' ORDER BY name",
        )
        .all()
        .map((r) => r.sql.slice(r.sql.indexOf("(")));
      expect(definitions).toEqual([
        "(city, long, start_ms, id, end_ms, state, venue_id, sold_out, aggregator)",
        "(source, long, start_ms, id, end_ms, state, city, venue_id, sold_out, aggregator)",
        "(state, long, start_ms, id, end_ms, venue_id, sold_out, aggregator)",
        "(venue_id, long, start_ms, id, end_ms, state, city, sold_out, aggregator)",
      ]);
      refreshSnapshot(old, Date.UTC(2030, 0, 1), { full: true });
      expect(counts()).toEqual(before);
    } finally {
      old.close();
    }
  });

  describe("encoded batches (sync/rows.ts)", () => {
    it("a batch mixing records at or below the watermark with new ones skips exactly the old ones, in step", async () => {
      const stream = basicStream();
      await sync(file("a.ndjson", ndjson(stream)));
      const w = readWatermark(db);
      const [venue1, , , event102] = stream as Array<
        (typeof stream)[number] & { venue: object; event: { title: string } }
      >;
      const venuesBefore = db.prepare("SELECT * FROM venues ORDER BY id").all();
      const links = [{ url: "https://dice.fm/event/y", seller: null, broken: false }];
      // Every kind of record, old ones (seq <= watermark) interleaved with new ones.
      const mixed = [
        { ...venue1, venue: { ...venue1.venue, name: "Ignored" } },
        { ...venueRecord(3, { name: "Zoë's ✨", timezone: null }), seq: w + 1 },
        { ...event102, event: { ...event102.event, title: "Ignored", ticketLinks: links } },
        {
          ...eventRecord(301, 3, "2030-03-01T20:00:00Z", {
            ticketLinks: [...links, { url: "x", seller: "s", broken: true }],
          }),
          seq: w + 2,
        },
        { ...deleteRecord("event", 105), seq: stream[1].seq },
        { ...deleteRecord("event", 104), seq: w + 3 },
      ];
      const result = applyBatch(
        db,
        mixed.map((r, i) => parseRecordLine(JSON.stringify(r), i + 1)),
      );
      expect(result).toEqual({ applied: 3, skipped: 3, watermark: w + 3 });
      expect(db.prepare("SELECT * FROM venues WHERE id < 3 ORDER BY id").all()).toEqual(venuesBefore);
      expect(db.prepare("SELECT name, timezone FROM venues WHERE id = 3").get()).toEqual({
        name: "Zoë's ✨",
        timezone: null,
      });
      expect(eventIds()).toEqual([101, 102, 103, 105, 301]);
      expect(db.prepare("SELECT title FROM events WHERE id = 102").get()).toEqual({ title: event102.event.title });
      expect(linksOf(301)).toEqual([
        { url: "https://dice.fm/event/y", seller: null, broken: false },
        { url: "x", seller: "s", broken: true },
      ]);
    });
  });

  describe("sources", () => {
    it("a stream split anywhere (even inside a UTF-8 character) reads as the same lines", async () => {
      const records = [
        venueRecord(1, { name: "Café Zoë 🎷" }),
        eventRecord(501, 1, "2030-05-01T20:00:00Z", { title: "Dvořák ✨" }),
      ];
      const bytes = new TextEncoder().encode(ndjson(records));
      const chunks = Array.from({ length: Math.ceil(bytes.length / 7) }, (_, i) => bytes.subarray(i * 7, i * 7 + 7));
      const summary = await syncFrom(db, streamSource("stdin", chunks));
      expect(summary).toMatchObject({ records: 2, applied: 2 });
      expect(db.prepare("SELECT name FROM venues").get()).toEqual({ name: "Café Zoë 🎷" });
      expect(db.prepare("SELECT title FROM events").get()).toEqual({ title: "Dvořák ✨" });
    });

    it("a later run can start where the last one stopped, keeping the file's line numbers", async () => {
      const path = file("grow.ndjson", ndjson([venueRecord(1), eventRecord(601, 1, "2030-06-01T20:00:00Z")]));
      const first = await sync(path);
      expect(first.position).toEqual({ offset: statSync(path).size, line: 2 });
      appendFileSync(path, `${JSON.stringify(eventRecord(602, 1, "2030-06-02T20:00:00Z"))}\n{bad\n`);
      const err = (await syncFrom(db, fileSource(path, { start: first.position })).catch(
        (e: unknown) => e,
      )) as SyncError;
      expect(err.line).toBe(4);
      expect(err.summary.skipped).toBe(0); // nothing before the start position was read again
    });

    it("follows a file: lines appended later are applied, and stopping commits and refreshes", async () => {
      const path = file("follow.ndjson", ndjson([venueRecord(1), eventRecord(701, 1, "2030-07-01T20:00:00Z")]));
      const controller = new AbortController();
      const run = syncFrom(db, fileSource(path, { follow: true, signal: controller.signal }), { snapshotEveryMs: 0 });
      const until = async (check: () => boolean) => {
        for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
        expect(check()).toBe(true);
      };
      await until(() => snapshotIds().length === 1);
      const late = eventRecord(702, 1, "2030-07-02T20:00:00Z");
      appendFileSync(path, JSON.stringify(late).slice(0, 20)); // a writer mid-line: not read yet
      await new Promise((r) => setTimeout(r, 400));
      expect(eventIds()).toEqual([701]);
      appendFileSync(path, `${JSON.stringify(late).slice(20)}\n`);
      await until(() => snapshotIds().length === 2);
      controller.abort();
      const summary = await run;
      expect(summary).toMatchObject({ records: 3, applied: 3, watermark: late.seq });
    });
  });

  it("the periodic refresh skips a replica that has not changed since the last refresh", async () => {
    await sync(file("a.ndjson", ndjson(basicStream())));
    expect(refreshSnapshotIfStale(db, Date.now())).toBe(null);
    db.prepare("UPDATE sync_state SET value = value + 1 WHERE key = 'watermark'").run();
    expect(refreshSnapshotIfStale(db, Date.now())).toBe(2);
    expect(refreshSnapshotIfStale(db, Date.now())).toBe(null);
  });
});
