/**
 * A PostgreSQL upstream (docs/upstream-records.md, "PostgreSQL tables"), the sync logic on Node against
 * a real server with wal_level=logical: the initial copy serves what an NDJSON import of the same
 * records serves; every kind of change streams through; an upstream transaction lands whole; a
 * bad row is quarantined without blocking the next change; every refusal is one line and leaves
 * the replica as it was.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../db/driver.ts";
import { countUpstreamRejects, openReplica, readUpstreamState } from "../db/replica.ts";
import { writeDemoData } from "../sync/demo/generate.ts";
import { writeDemoToPostgres } from "../sync/postgres/demo.ts";
import { parsePostgresUrl, upstreamDdl } from "../sync/postgres/schema.ts";
import { type PostgresSyncOptions, syncFromPostgres } from "../sync/postgres/sync.ts";
import { refreshServingSnapshot } from "../sync/serving-snapshot.ts";
import { streamSource } from "../sync/source.ts";
import { syncFrom } from "../sync/sync-from.ts";
import { dumpReplica } from "./fixtures/replica-dump.ts";
import { liveRows, servedPages } from "./pg-served.ts";
import { type PgServer, startPgServer } from "./pg-server.ts";

let server: PgServer;
let dir: string;
let databases = 0;
const open: Db[] = [];

beforeAll(async () => {
  server = await startPgServer();
  dir = mkdtempSync(join(tmpdir(), "marquee-pg-sync-"));
}, 30_000);
afterAll(() => {
  for (const db of open) db.close();
  server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A new database with the upstream tables; returns its URL. */
function freshDatabase(): string {
  const name = `t${++databases}`;
  server.psql(`CREATE DATABASE ${name}`);
  server.psql(upstreamDdl(), name);
  return server.url(name);
}

async function replica(name: string): Promise<Db> {
  const db = await openReplica(join(dir, `${name}.db`));
  open.push(db);
  return db;
}

async function upstream<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** A one-off sync (copy if needed, then every change committed so far), then a snapshot refresh. */
async function sync(db: Db, url: string, options: PostgresSyncOptions = {}) {
  const summary = await syncFromPostgres(db, url, options);
  refreshServingSnapshot(db, Date.parse("2026-12-01T00:00:00Z"));
  return summary;
}

const VENUE = `INSERT INTO marquee.venues (id, name, city, state, timezone, latitude, longitude, geocode_precision, visible)
  VALUES ($1, $2, 'Austin', 'TX', 'America/Chicago', 30.27, -97.74, 'street', true)`;
const EVENT = `INSERT INTO marquee.events (id, venue_id, title, slug, start_date, source, categories, ticket_links)
  VALUES ($1, $2, $3, $3, $4, 'scraper:test', $5, $6)`;

const event = (db: Db, id: number) =>
  db
    .prepare<Record<string, unknown>>(
      "SELECT title, categories, ticket_link_status, ticket_destination, venue_id FROM events WHERE id = $id",
    )
    .get({ id });
const servable = (db: Db) =>
  db
    .prepare<{ id: number }>("SELECT id FROM snapshot ORDER BY id")
    .all()
    .map((r) => Number(r.id));

describe("initial copy", () => {
  it("serves exactly what an NDJSON import of the same records serves", async () => {
    const options = { events: 3000, seed: "pg-copy", anchor: "2026-12-01" };
    const url = freshDatabase();
    await upstream(url, (c) => writeDemoToPostgres(c, parsePostgresUrl(url), options));

    const chunks: string[] = [];
    await writeDemoData(options, (c) => void chunks.push(c));
    const fromNdjson = await replica("copy-ndjson");
    await syncFrom(fromNdjson, streamSource("demo", chunks), { now: () => Date.parse("2026-12-01T00:00:00Z") });
    const fromPg = await replica("copy-pg");
    const summary = await sync(fromPg, url);

    const rows = liveRows(fromPg);
    expect(summary.copied).toBe(rows.venues.length + rows.events.length);
    expect(summary.rejects).toBe(0);
    expect(summary.position).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
    expect(rows).toEqual(liveRows(fromNdjson));
    expect(dumpReplica(fromPg).snapshot).toEqual(dumpReplica(fromNdjson).snapshot);
    const pages = await servedPages(join(dir, "copy-pg.db"));
    expect(pages.flat().length).toBeGreaterThan(1000);
    expect(pages).toEqual(await servedPages(join(dir, "copy-ndjson.db")));
  }, 60_000);

  it("copies the characters COPY's text form escapes, wide ones, and a text that reads \\N, as they are", async () => {
    const url = freshDatabase();
    const titles = [
      "tab\there",
      "two\nlines",
      "cr\rlf",
      "back\\slash \\N \\t",
      "\\N",
      "Dvořák 🎷",
      "a\\u00e9b",
      "\b\f\v",
    ];
    const categories = ["Music", 'say "hi", then', "NULL", "Zoë"];
    const links = JSON.stringify([{ url: "https://example.com/a\tb", seller: "Zoë 🎷", broken: false }]);
    await upstream(url, async (c) => {
      await c.query(VENUE, [1, "Café\tZoë \\ 🎷"]);
      for (const [i, title] of titles.entries())
        await c.query(EVENT, [10 + i, 1, title, "2026-12-05T20:00:00Z", categories, links]);
    });
    const db = await replica("copy-escapes");
    const summary = await sync(db, url);
    expect(summary.rejects).toBe(0);
    expect(db.prepare("SELECT name FROM venues WHERE id = 1").get()).toEqual({ name: "Café\tZoë \\ 🎷" });
    const copied = titles.map((_, i) => event(db, 10 + i));
    expect(copied.map((e) => e?.title)).toEqual(titles);
    // Only the taxonomy's categories are kept (docs/upstream-records.md), from the copy as from the stream.
    expect(copied.map((e) => e?.categories)).toEqual(titles.map(() => '["Music"]'));

    // The same rows from the stream: stored alike.
    const streamed = await replica("copy-escapes-stream");
    const other = freshDatabase();
    await sync(streamed, other);
    await upstream(other, async (c) => {
      await c.query(VENUE, [1, "Café\tZoë \\ 🎷"]);
      for (const [i, title] of titles.entries())
        await c.query(EVENT, [10 + i, 1, title, "2026-12-05T20:00:00Z", categories, links]);
    });
    await sync(streamed, other);
    expect(liveRows(streamed)).toEqual(liveRows(db));
  }, 30_000);
});

describe("changes after the copy", () => {
  it("inserts, updates, deletes, venue hide/unhide, ticket links and categories stream through", async () => {
    const url = freshDatabase();
    await upstream(url, async (c) => {
      await c.query(VENUE, [1, "One"]);
      await c.query(EVENT, [10, 1, "First", "2026-12-05T20:00:00Z", ["Music"], JSON.stringify([])]);
    });
    const db = await replica("changes");
    await sync(db, url);
    expect(servable(db)).toEqual([10]);

    await upstream(url, async (c) => {
      await c.query(EVENT, [11, 1, "Second", "2026-12-06T20:00:00Z", ["Comedy"], JSON.stringify([])]);
      await c.query(
        "UPDATE marquee.events SET title = 'First, renamed', categories = '{Theater,Nope,Music}' WHERE id = 10",
      );
      await c.query(
        `UPDATE marquee.events SET ticket_links = '[{"url":"https://www.ticketmaster.com/event/1","seller":"ticketmaster","broken":false}]' WHERE id = 11`,
      );
    });
    const changed = await sync(db, url);
    expect(changed.copied).toBe(0);
    expect(changed.changes).toBe(3);
    expect(servable(db)).toEqual([10, 11]);
    expect(event(db, 10)).toMatchObject({
      title: "First, renamed",
      categories: '["Theater","Music"]',
      ticket_link_status: "missing",
    });
    expect(event(db, 11)).toMatchObject({
      ticket_link_status: "available",
      ticket_destination: "https://www.ticketmaster.com/event/1",
    });

    await upstream(url, (c) => c.query("UPDATE marquee.venues SET visible = false WHERE id = 1"));
    await sync(db, url);
    expect(servable(db)).toEqual([]);
    await upstream(url, (c) => c.query("UPDATE marquee.venues SET visible = true WHERE id = 1"));
    await sync(db, url);
    expect(servable(db)).toEqual([10, 11]);

    await upstream(url, async (c) => {
      await c.query(
        `UPDATE marquee.events SET ticket_links = '[{"url":"https://www.ticketmaster.com/event/1","seller":"ticketmaster","broken":true}]' WHERE id = 11`,
      );
      await c.query("DELETE FROM marquee.events WHERE id = 10");
    });
    await sync(db, url);
    expect(event(db, 10)).toBeUndefined();
    expect(event(db, 11)).toMatchObject({ ticket_link_status: "unavailable", ticket_destination: null });
    expect(servable(db)).toEqual([11]);

    // Nothing new: a rerun applies nothing and keeps the position.
    const before = readUpstreamState(db).position;
    const again = await sync(db, url);
    expect(again.changes).toBe(0);
    expect(readUpstreamState(db).position).toBe(before);
  }, 60_000);

  it("an upstream transaction that changes a venue and its events lands in one replica transaction", async () => {
    const url = freshDatabase();
    await upstream(url, async (c) => {
      await c.query(VENUE, [1, "Hall"]);
      for (let id = 1; id <= 20; id++) await c.query(EVENT, [id, 1, "Old", "2026-12-05T20:00:00Z", ["Music"], "[]"]);
    });
    const db = await replica("atomic");
    await sync(db, url);
    // Every state the replica commits while following: the venue's city and all titles agree.
    const seen: string[] = [];
    const controller = new AbortController();
    const following = syncFromPostgres(db, url, {
      follow: true,
      signal: controller.signal,
      onApplied: () => {
        const city = db.prepare<{ city: string }>("SELECT city FROM venues WHERE id = 1").get()!.city;
        const titles = new Set(
          db
            .prepare<{ title: string }>("SELECT title FROM events")
            .all()
            .map((r) => r.title),
        );
        seen.push(`${city}:${[...titles].join(",")}`);
      },
    });
    await upstream(url, async (c) => {
      await c.query("BEGIN");
      await c.query("UPDATE marquee.venues SET city = 'Dallas' WHERE id = 1");
      await c.query("UPDATE marquee.events SET title = 'New'");
      await c.query("COMMIT");
    });
    const deadline = Date.now() + 10_000;
    while (seen.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    const summary = await following;
    expect(summary.changes).toBe(21);
    expect(seen).toEqual(["Dallas:New"]);
  }, 30_000);

  it("an update that leaves a large (TOASTed) value unchanged keeps it", async () => {
    const url = freshDatabase();
    // Random URLs do not compress: about 6 kB of ticket links, stored out of line.
    const links = Array.from({ length: 60 }, (_, i) => ({
      url: `https://www.etix.com/e/${i}-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`,
      seller: "etix",
      broken: i < 59,
    }));
    await upstream(url, async (c) => {
      await c.query(VENUE, [1, "Hall"]);
      await c.query(EVENT, [10, 1, "Big", "2026-12-05T20:00:00Z", ["Music", "Comedy"], JSON.stringify(links)]);
    });
    const db = await replica("toast");
    await sync(db, url);
    await upstream(url, (c) => c.query("UPDATE marquee.events SET title = 'Big, renamed' WHERE id = 10"));
    const summary = await sync(db, url);
    expect(summary.rejects).toBe(0);
    expect(event(db, 10)).toMatchObject({
      title: "Big, renamed",
      categories: '["Music","Comedy"]',
      ticket_destination: links[59].url,
    });
    expect(
      JSON.parse(String(db.prepare<{ l: string }>("SELECT ticket_links AS l FROM events WHERE id = 10").get()!.l)),
    ).toHaveLength(60);
  }, 30_000);

  it("a row that breaks the record rules is quarantined, the next change still lands, a valid version replaces it", async () => {
    const url = freshDatabase();
    await upstream(url, async (c) => {
      await c.query(VENUE, [1, "Hall"]);
      await c.query(EVENT, [10, 1, "Good", "2026-12-05T20:00:00Z", ["Music"], "[]"]);
    });
    const db = await replica("rejects");
    await sync(db, url);
    const rejects: string[] = [];
    await upstream(url, async (c) => {
      await c.query("UPDATE marquee.events SET source = 'Not A Source' WHERE id = 10");
      await c.query(VENUE, [2, "Second"]);
      await c.query("UPDATE marquee.venues SET geocode_precision = 'rooftop' WHERE id = 2");
      await c.query(EVENT, [11, 1, "After", "2026-12-06T20:00:00Z", ["Music"], "[]"]);
    });
    const summary = await sync(db, url, { onReject: (r) => void rejects.push(`${r.table} ${r.id}: ${r.reason}`) });
    expect(summary.rejects).toBe(2);
    expect(rejects).toEqual([
      expect.stringMatching(/^events 10: source: /),
      expect.stringMatching(/^venues 2: geocodePrecision: /),
    ]);
    expect(countUpstreamRejects(db)).toBe(2);
    expect(event(db, 10)).toBeUndefined(); // never served, not even its older version
    expect(servable(db)).toEqual([11]);

    await upstream(url, (c) => c.query("UPDATE marquee.events SET source = 'scraper:fixed' WHERE id = 10"));
    await sync(db, url);
    expect(servable(db)).toEqual([10, 11]);
    expect(countUpstreamRejects(db)).toBe(1);
  }, 30_000);
});

describe("refusals: one line, the replica unchanged", () => {
  async function refused(db: Db, url: string, options: PostgresSyncOptions = {}): Promise<string> {
    const before = { dump: dumpReplica(db), state: readUpstreamState(db) };
    const err = await syncFromPostgres(db, url, options).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(err!.message).not.toContain("\n");
    expect(err!.message).not.toContain("secret");
    expect({ dump: dumpReplica(db), state: readUpstreamState(db) }).toEqual(before);
    return err!.message;
  }

  it("unreachable host, wrong password, missing database", async () => {
    const db = await replica("refused-connect");
    const closed = `postgres://postgres:secret@127.0.0.1:1/postgres`;
    expect(await refused(db, closed)).toMatch(
      /^cannot reach PostgreSQL at 127\.0\.0\.1:1\/postgres \(ECONNREFUSED\); check the host and port/,
    );
    expect(await refused(db, server.url("postgres", "postgres", "wrong"))).toMatch(
      /refused the login of role "postgres".*check the user and password/,
    );
    expect(await refused(db, server.url("nope"))).toMatch(/database "nope" does not exist.*check the database name/);
  }, 30_000);

  it("missing tables, missing columns", async () => {
    const db = await replica("refused-tables");
    server.psql("CREATE DATABASE empty_db");
    expect(await refused(db, server.url("empty_db"))).toBe(
      `table marquee.venues is missing at 127.0.0.1:${server.port}/empty_db; create it with: marquee upstream-schema --schema marquee | psql URL`,
    );
    const url = freshDatabase();
    await upstream(url, (c) => c.query("ALTER TABLE marquee.events DROP COLUMN ticket_links, DROP COLUMN age"));
    expect(await refused(db, url)).toMatch(
      /^table marquee\.events lacks columns age, ticket_links .*marquee upstream-schema/,
    );
  }, 30_000);

  it("a role without the right to replicate or to read the tables", async () => {
    const url = freshDatabase();
    const name = url.split("/").pop()!;
    server.psql("CREATE ROLE reader LOGIN PASSWORD 'pw'");
    server.psql("CREATE ROLE replicator LOGIN REPLICATION PASSWORD 'pw'");
    server.psql("GRANT USAGE ON SCHEMA marquee TO replicator", name);
    const db = await replica("refused-privileges");
    expect(await refused(db, server.url(name, "reader", "pw"))).toMatch(
      /^role "reader" may not replicate .*ALTER ROLE reader REPLICATION$/,
    );
    expect(await refused(db, server.url(name, "replicator", "pw"))).toMatch(
      /^role "replicator" lacks a privilege \(permission denied for table venues\).*GRANT SELECT ON marquee\.venues, marquee\.events TO replicator/,
    );
  }, 30_000);

  it("a publication that leaves a table out, a slot that is gone", async () => {
    const url = freshDatabase();
    const name = url.split("/").pop()!;
    server.psql("CREATE PUBLICATION marquee_marquee FOR TABLE marquee.venues", name);
    const db = await replica("refused-publication");
    expect(await refused(db, url)).toBe(
      "publication marquee_marquee does not cover marquee.events; as the tables' owner run: ALTER PUBLICATION marquee_marquee ADD TABLE marquee.events",
    );
    server.psql("ALTER PUBLICATION marquee_marquee ADD TABLE marquee.events", name);
    await sync(db, url, { slot: "gone" });
    server.psql("SELECT pg_drop_replication_slot('gone')", name);
    expect(await refused(db, url)).toMatch(
      /^replication slot gone is gone from .*; run marquee sync with --resync: the replica copies the tables anew$/,
    );

    // Another replica's slot is never taken over (or dropped) by a new replica.
    server.psql("SELECT pg_create_logical_replication_slot('theirs', 'pgoutput')", name);
    const other = await replica("refused-foreign-slot");
    expect(await refused(other, url, { slot: "theirs" })).toMatch(
      /^replication slot theirs already exists at .* and is not this replica's; choose another --slot/,
    );
    expect(server.psql("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'theirs'", name)).toBe("1");
  }, 30_000);

  it("wal_level not logical", async () => {
    const plain = await startPgServer({ walLevel: "replica" });
    try {
      plain.psql(upstreamDdl());
      const db = await replica("refused-wal");
      expect(await refused(db, plain.url())).toMatch(
        /^wal_level is "replica" at .*ALTER SYSTEM SET wal_level = logical and restart PostgreSQL$/,
      );
    } finally {
      plain.stop();
    }
  }, 30_000);

  it("a replica that follows NDJSON records", async () => {
    const db = await replica("refused-kind");
    await syncFrom(
      db,
      streamSource("x", [
        '{"type":"venue","seq":1,"venue":{"id":1,"name":"A","city":"B","state":"TX","timezone":null,"latitude":null,"longitude":null,"geocodePrecision":null,"visible":true}}\n',
      ]),
    );
    expect(await refused(db, freshDatabase())).toMatch(
      /follows NDJSON records, not a PostgreSQL database; sync PostgreSQL into a new replica \(--db PATH\)$/,
    );
  }, 30_000);
});
