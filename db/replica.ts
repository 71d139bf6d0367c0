/**
 * The replica: venues, events (with their ticket links), the serving snapshot, an R-tree over venue
 * coordinates and the sync watermark. Everything here can be rebuilt from upstream records,
 * so it runs with synchronous=NORMAL.
 */
import { type Db, openDb } from "./driver.ts";
import { assertSchemaKnown, type Migration, migrate, type SchemaLog } from "./migrate.ts";
import { SERVED_COLUMN_NAMES, type ServedColumns, servedJson } from "./served-json.ts";

export const REPLICA_MIGRATIONS: Migration[] = [
  {
    version: 1,
    sql: `
CREATE TABLE venues (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  city TEXT NOT NULL,
  state TEXT NOT NULL,
  timezone TEXT,
  latitude REAL,
  longitude REAL,
  geocode_precision TEXT,
  visible INTEGER NOT NULL,
  seq INTEGER NOT NULL
);
-- Venue coordinates for geo candidate search; only venues with both coordinates have a row.
CREATE VIRTUAL TABLE venue_rtree USING rtree(id, min_lat, max_lat, min_lng, max_lng);

CREATE TABLE events (
  id INTEGER PRIMARY KEY,
  venue_id INTEGER NOT NULL,
  title TEXT NOT NULL,
  slug TEXT NOT NULL,
  start_date TEXT NOT NULL,          -- normalized 'YYYY-MM-DDTHH:MM:SSZ' (millis kept when given)
  start_ms INTEGER NOT NULL,
  end_date TEXT,
  end_ms INTEGER,
  cost_text TEXT,
  is_free INTEGER,                   -- 1, 0 or NULL
  is_sold_out INTEGER NOT NULL,
  is_low_tickets INTEGER NOT NULL,
  age TEXT,
  website_raw TEXT,                  -- upstream's website where it differs from website, else NULL:
                                     -- coalesce(website_raw, website) is upstream's value (older
                                     -- rows may hold it always, which reads the same)
  website_broken INTEGER NOT NULL,
  image_url TEXT,
  categories TEXT NOT NULL,          -- JSON array, already filtered to the taxonomy
  source TEXT NOT NULL,
  vendor TEXT NOT NULL,
  status TEXT NOT NULL,
  duplicate_of INTEGER,
  ticketed INTEGER NOT NULL,
  -- Served fields derived at apply time (docs/upstream-records.md), so hydration only reads.
  cost TEXT,
  website TEXT,
  ticket_link_status TEXT NOT NULL,
  ticket_destination TEXT,           -- first usable destination; ticketUrl redirects here
  seq INTEGER NOT NULL
);
CREATE INDEX events_venue ON events(venue_id);

CREATE TABLE ticket_links (
  event_id INTEGER NOT NULL,
  position INTEGER NOT NULL,
  url TEXT NOT NULL,
  seller TEXT,
  broken INTEGER NOT NULL,
  PRIMARY KEY (event_id, position)
) WITHOUT ROWID;

-- Serving snapshot (docs/api.md, Serving snapshot): servable events at refresh time, for page selection only.
-- Rows are split into short and long events so that a window [after, before] reads short
-- events from start_ms >= after - LONG_EVENT_MS and long ones (few) from the start, each in
-- (start_ms, id) order; a merge of the two keeps keyset paging exact. Every index has "long"
-- before start_ms (v7 puts the filter column first) so both halves of a page query are ordered
-- index range scans.
CREATE TABLE snapshot (
  long INTEGER NOT NULL,
  start_ms INTEGER NOT NULL,
  id INTEGER NOT NULL,
  end_ms INTEGER NOT NULL,           -- endDate, or startDate when endDate is null
  venue_id INTEGER NOT NULL,
  state TEXT NOT NULL,
  city TEXT NOT NULL,
  source TEXT NOT NULL,
  sold_out INTEGER NOT NULL,
  aggregator INTEGER NOT NULL,
  PRIMARY KEY (long, start_ms, id)
) WITHOUT ROWID;
CREATE INDEX snapshot_state_city ON snapshot(long, state, city, start_ms, id);
CREATE INDEX snapshot_city ON snapshot(long, city, start_ms, id);
CREATE INDEX snapshot_venue ON snapshot(long, venue_id, start_ms, id);
CREATE INDEX snapshot_source ON snapshot(long, source, start_ms, id);

-- Distinct sources with their snapshot counts: lets the list query estimate how selective
-- a source prefix is before it picks an index.
CREATE TABLE snapshot_sources (
  source TEXT PRIMARY KEY,
  events INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE sync_state (
  key TEXT PRIMARY KEY,
  value
) WITHOUT ROWID;
INSERT INTO sync_state(key, value) VALUES ('watermark', 0), ('snapshot_at', NULL);
`,
  },
  {
    // Page selection (db/events-query.ts). A state-only filter needs its own time-ordered index
    // (snapshot_state_city is ordered by city first). The partial span index answers "longest
    // long event" in O(log n), which bounds how far back the long half of a page query reads.
    // snapshot_stats holds size estimates for plan choice; the trigger refreshes them once per
    // snapshot refresh (db/snapshot.ts stamps snapshot_at last, inside its transaction).
    version: 2,
    sql: `
CREATE INDEX snapshot_state ON snapshot(long, state, start_ms, id);
CREATE INDEX snapshot_span ON snapshot(end_ms - start_ms) WHERE long = 1;

CREATE TABLE snapshot_stats (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  generation INTEGER NOT NULL,        -- bumped on every refresh; keys per-snapshot caches
  events INTEGER NOT NULL,
  venues INTEGER NOT NULL             -- visible venues at refresh time
);
INSERT INTO snapshot_stats(id, generation, events, venues)
  VALUES (1, 0, (SELECT count(*) FROM snapshot), (SELECT count(*) FROM venues WHERE visible = 1));
CREATE TRIGGER snapshot_stats_refresh AFTER UPDATE OF value ON sync_state WHEN new.key = 'snapshot_at'
BEGIN
  UPDATE snapshot_stats SET generation = generation + 1,
    events = (SELECT count(*) FROM snapshot),
    venues = (SELECT count(*) FROM venues WHERE visible = 1)
  WHERE id = 1;
END;
`,
  },
  {
    // Snapshot events per venue, so a geo page query knows how selective its candidate venues
    // are (db/events-query.ts) instead of assuming every venue is equally busy. Rebuilt once
    // per snapshot refresh, each half in index order.
    version: 3,
    sql: `
CREATE TABLE snapshot_venue_events (
  venue_id INTEGER PRIMARY KEY,
  events INTEGER NOT NULL
);
INSERT INTO snapshot_venue_events(venue_id, events) SELECT venue_id, count(*) FROM snapshot GROUP BY venue_id;
CREATE TRIGGER snapshot_venue_events_refresh AFTER UPDATE OF value ON sync_state WHEN new.key = 'snapshot_at'
BEGIN
  DELETE FROM snapshot_venue_events;
  INSERT INTO snapshot_venue_events(venue_id, events)
    SELECT venue_id, count(*) FROM snapshot WHERE long = 0 GROUP BY venue_id;
  INSERT INTO snapshot_venue_events(venue_id, events)
    SELECT venue_id, count(*) FROM snapshot WHERE long = 1 GROUP BY venue_id
    ON CONFLICT(venue_id) DO UPDATE SET events = events + excluded.events;
END;
`,
  },
  {
    // Incremental snapshot refresh (db/snapshot.ts). Apply records the events and venues it
    // touched while 'snapshot_tracked' is 1; the next refresh replaces only their snapshot rows.
    // A full rebuild sets the flag; it starts at 0, so the first refresh after this migration
    // is full. events_venue goes: no query reads events by venue (the refresh scans events once
    // when venues changed), and keeping it up cost the million-event import several seconds.
    version: 4,
    sql: `
CREATE TABLE snapshot_dirty_events (id INTEGER PRIMARY KEY);
CREATE TABLE snapshot_dirty_venues (id INTEGER PRIMARY KEY);
INSERT OR REPLACE INTO sync_state(key, value) VALUES ('snapshot_tracked', 0);
DROP INDEX events_venue;
`,
  },
  {
    // A city filter with a state reads snapshot_city and checks the state per row
    // (db/events-query.ts): same-named cities in other states cost a few index rows per page,
    // while building snapshot_state_city took ~1.3 s of every full refresh of a million events.
    version: 5,
    sql: `
DROP INDEX snapshot_state_city;
`,
  },
  {
    // Ticket links move into a JSON column of their event: [{url, seller, broken}] in upstream
    // order, NULL when there are none. They are only ever read whole, with their event (a
    // handoff, db/handoffs.ts), and a table of their own cost a million-event import a b-tree
    // insert per link plus a delete per updated event.
    version: 6,
    sql: `
ALTER TABLE events ADD COLUMN ticket_links TEXT;
UPDATE events SET ticket_links = (
  SELECT json_group_array(json_object('url', l.url, 'seller', l.seller, 'broken', json(CASE l.broken WHEN 1 THEN 'true' ELSE 'false' END)))
  FROM (SELECT * FROM ticket_links WHERE event_id = events.id ORDER BY position) l
) WHERE id IN (SELECT event_id FROM ticket_links);
DROP TABLE ticket_links;
`,
  },
  {
    // The filter column leads each snapshot index, `long` second. A page query binds both as
    // equalities before its (start_ms, id) range, so it reads the same ordered range either way
    // (db/events-query.ts). But building an index sorts its keys, and SQLite's sorter settles a
    // comparison on the first column alone only when the first columns differ: with `long`
    // first (0 or 1) nearly every comparison decoded the whole key. Measured on the
    // million-event snapshot, three alternated full rebuilds: the four index builds 2.6-2.9 s
    // instead of 4.0 s. Per-source and per-venue counts now read their index in order instead
    // of sorting (snapshot_sources 0.12-0.15 s instead of 0.32-0.40 s).
    version: 7,
    sql: `
DROP INDEX snapshot_city;
DROP INDEX snapshot_venue;
DROP INDEX snapshot_source;
DROP INDEX snapshot_state;
CREATE INDEX snapshot_city ON snapshot(city, long, start_ms, id);
CREATE INDEX snapshot_venue ON snapshot(venue_id, long, start_ms, id);
CREATE INDEX snapshot_source ON snapshot(source, long, start_ms, id);
CREATE INDEX snapshot_state ON snapshot(state, long, start_ms, id);
DROP TRIGGER snapshot_venue_events_refresh;
CREATE TRIGGER snapshot_venue_events_refresh AFTER UPDATE OF value ON sync_state WHEN new.key = 'snapshot_at'
BEGIN
  DELETE FROM snapshot_venue_events;
  INSERT INTO snapshot_venue_events(venue_id, events)
    SELECT venue_id, count(*) FROM snapshot INDEXED BY snapshot_venue GROUP BY venue_id;
END;
`,
  },
  {
    // Each snapshot index also carries the columns a page query tests after its range: end_ms
    // (the window's opening), the other filter columns (state, city, venue_id for geo
    // candidates) and sold_out and aggregator; only a source pattern tested on another plan's
    // index still reads the table. A page query then reads its index alone; before, each index row
    // skipped on the way to a page (a short event that ended before the window opened, a long one
    // that started months before) cost a lookup in the table. Measured on the million-event
    // replica, 2,000 state queries each with its own window opening: both halves of a page
    // 195 µs before, 38 µs after (test/bench/RESULTS.md, "Unique traffic").
    version: 8,
    sql: `
DROP INDEX snapshot_city;
DROP INDEX snapshot_venue;
DROP INDEX snapshot_source;
DROP INDEX snapshot_state;
CREATE INDEX snapshot_city ON snapshot(city, long, start_ms, id, end_ms, state, venue_id, sold_out, aggregator);
CREATE INDEX snapshot_venue ON snapshot(venue_id, long, start_ms, id, end_ms, state, city, sold_out, aggregator);
CREATE INDEX snapshot_source ON snapshot(source, long, start_ms, id, end_ms, state, city, venue_id, sold_out, aggregator);
CREATE INDEX snapshot_state ON snapshot(state, long, start_ms, id, end_ms, venue_id, sold_out, aggregator);
`,
  },
  {
    // Rows of a PostgreSQL upstream that break the record rules (docs/upstream-records.md,
    // "PostgreSQL tables"): kept out of the replica, listed here until a valid version arrives.
    version: 9,
    sql: `
CREATE TABLE upstream_rejects (
  entity TEXT NOT NULL,              -- venue | event
  id INTEGER NOT NULL,
  reason TEXT NOT NULL,
  position TEXT NOT NULL,            -- the upstream log position of the rejected version
  at_ms INTEGER NOT NULL,
  PRIMARY KEY (entity, id)
) WITHOUT ROWID;
`,
  },
  {
    // Geo candidates follow the serving snapshot like every other page selection (docs/api.md,
    // Serving snapshot): snapshot_venues holds the venues a geo search may choose from (visible,
    // both coordinates) as of the last refresh, which rewrites it in its transaction
    // (db/snapshot.ts). Apply marks a venue whose coordinates or precision alone changed in
    // snapshot_dirty_places: its snapshot_venues row is replaced, its events' snapshot rows are
    // not (marking it in snapshot_dirty_venues would recompute them, one scan of all events).
    // The first fill is what a refresh writes (db/snapshot.ts SNAPSHOT_VENUES_SELECT, tested);
    // the generation moves so caches keyed by it (db/geo.ts GeoIndex) read the new table.
    version: 10,
    sql: `
CREATE TABLE snapshot_venues (
  id INTEGER PRIMARY KEY,
  latitude REAL NOT NULL,
  longitude REAL NOT NULL,
  geocode_precision TEXT,
  state TEXT NOT NULL
);
INSERT INTO snapshot_venues(id, latitude, longitude, geocode_precision, state)
  SELECT id, latitude, longitude, geocode_precision, state FROM venues
  WHERE visible = 1 AND latitude IS NOT NULL AND longitude IS NOT NULL;
CREATE TABLE snapshot_dirty_places (id INTEGER PRIMARY KEY);
UPDATE snapshot_stats SET generation = generation + 1 WHERE id = 1;
`,
  },
  {
    // An event of another deployment keeps the page and the ticket redirect its upstream
    // delivered (docs/upstream-records.md, Already-resolved fields): served as they are when
    // set; NULL for every other event, which gets this service's own.
    version: 11,
    sql: `
ALTER TABLE events ADD COLUMN event_url TEXT;
ALTER TABLE events ADD COLUMN ticket_url TEXT;
`,
  },
  {
    // Each event's served JSON (db/served-json.ts), derived at apply time like the other served
    // fields, so a page reads one column of an event it has not served before instead of building
    // its JSON from sixteen (docs/perf-history.md, "Round 28"). Written here for the events already
    // applied, from their stored columns, a block of ids at a time.
    version: 12,
    sql: "ALTER TABLE events ADD COLUMN served_json TEXT;",
    fill: fillServedJson,
  },
];

/** Writes `served_json` of every event, from the columns it is made of. */
function fillServedJson(db: Db): void {
  const read = db.prepare<ServedColumns>(
    `SELECT ${SERVED_COLUMN_NAMES.join(", ")} FROM events WHERE id > $after ORDER BY id LIMIT 10000`,
  );
  const write = db.prepare("UPDATE events SET served_json = $json WHERE id = $id");
  for (let rows = read.all({ after: 0 }); rows.length > 0; rows = read.all({ after: rows[rows.length - 1].id }))
    for (const r of rows) write.run({ id: r.id, json: servedJson(r) });
}

/**
 * Page size of a new replica: SQLite's default, 4 KiB, on purpose. With 16 KiB pages the
 * million-event import took ~2 s less (fewer b-tree pages and WAL frames for ~650-byte rows), but
 * an incremental sync of 50,000 updates spread over the replica, which dirties nearly every page
 * either way, took 22.5-26.1 s instead of 18.3 s beside a loaded server, and the page's p99 rose
 * with it (8 KiB: 24.4-24.5 s). A served replica syncs changes far more often than it is imported.
 */
export const REPLICA_PAGE_BYTES = 4096;

/**
 * Opens the replica and brings its schema up to date (one log line per migration); a replica
 * written by a newer Marquee is closed again and refused (docs/operations.md, Upgrades and schema versions).
 */
export async function openReplica(
  path: string,
  options: { readonly?: boolean; log?: SchemaLog; mmapBytes?: number } = {},
): Promise<Db> {
  const db = await openDb(path, { synchronous: "NORMAL", readonly: options.readonly, pageBytes: REPLICA_PAGE_BYTES });
  // The serving process reads through a memory map (db/tuning.ts HOT_PATH.replicaMmapBytes).
  if (options.mmapBytes) db.exec(`PRAGMA mmap_size = ${Math.floor(options.mmapBytes)}`);
  try {
    if (options.readonly) assertSchemaKnown(db, REPLICA_MIGRATIONS, `replica ${path}`);
    else migrate(db, REPLICA_MIGRATIONS, { name: `replica ${path}`, log: options.log });
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

/** Prepares the replica schema on an already-open handle (used by the sync path and tests). */
export function migrateReplica(db: Db, log?: SchemaLog): void {
  migrate(db, REPLICA_MIGRATIONS, { name: `replica ${db.path}`, log });
}

export function readWatermark(db: Db): number {
  const row = db.prepare<{ value: number }>("SELECT value FROM sync_state WHERE key = 'watermark'").get();
  return Number(row?.value ?? 0);
}

/**
 * Empties the replica (test mode's `POST /_test/reset {"replica": true}`, docs/api.md, Test
 * mode): venues, events, the snapshot and what describes it, rejected upstream rows, and the
 * watermark, in one transaction; the source a replica follows is kept. The caller refreshes the
 * snapshot afterwards (db/snapshot.ts), which recounts its statistics.
 */
export function emptyReplica(db: Db): void {
  db.transaction(() => {
    for (const table of [
      "venues",
      "venue_rtree",
      "events",
      "snapshot",
      "snapshot_sources",
      "snapshot_venue_events",
      "snapshot_dirty_events",
      "snapshot_dirty_venues",
      "snapshot_dirty_places",
      "snapshot_venues",
      "upstream_rejects",
    ]) {
      db.exec(`DELETE FROM ${table}`);
    }
    db.exec("UPDATE sync_state SET value = 0 WHERE key = 'watermark'");
  });
}

export interface ReplicaStats {
  watermark: number;
  events: number;
  venues: number;
  snapshotEvents: number;
  snapshotAt: number | null;
}

export function readReplicaStats(db: Db): ReplicaStats {
  const one = (sql: string) => Number((db.prepare<{ n: number }>(sql).get() ?? { n: 0 }).n);
  const at = db.prepare<{ value: number | null }>("SELECT value FROM sync_state WHERE key = 'snapshot_at'").get();
  return {
    watermark: readWatermark(db),
    events: one("SELECT count(*) AS n FROM events"),
    venues: one("SELECT count(*) AS n FROM venues"),
    snapshotEvents: one("SELECT count(*) AS n FROM snapshot"),
    snapshotAt: at?.value == null ? null : Number(at.value),
  };
}

/** The kinds of upstream a replica can follow: one per replica (docs/upstream-records.md). */
export type SourceKind = "ndjson" | "postgres" | "api";

/** Where a replica's records come from and how far it has read them. */
export interface UpstreamState {
  /** null for a replica that has never synced, or that synced NDJSON before the kind was kept. */
  kind: SourceKind | null;
  /** PostgreSQL: the log position committed with the last applied changes; null before the copy ended. */
  position: string | null;
  slot: string | null;
  /** When changes were last applied (ms), for /healthz. */
  appliedAt: number | null;
  /** Another deployment: what its last complete pass walked and found (JSON, sync/api/state.ts). */
  scope: string | null;
  lastPass: string | null;
}

const UPSTREAM_KEYS = {
  kind: "source_kind",
  position: "source_position",
  slot: "source_slot",
  appliedAt: "source_applied_at",
  scope: "source_scope",
  lastPass: "source_last_pass",
} as const;

export function readUpstreamState(db: Db): UpstreamState {
  const rows = db
    .prepare<{ key: string; value: unknown }>("SELECT key, value FROM sync_state WHERE key LIKE 'source_%'")
    .all();
  const get = (key: string) => rows.find((r) => r.key === key)?.value ?? null;
  const appliedAt = get(UPSTREAM_KEYS.appliedAt);
  return {
    kind: get(UPSTREAM_KEYS.kind) as SourceKind | null,
    position: get(UPSTREAM_KEYS.position) as string | null,
    slot: get(UPSTREAM_KEYS.slot) as string | null,
    appliedAt: appliedAt == null ? null : Number(appliedAt),
    scope: get(UPSTREAM_KEYS.scope) as string | null,
    lastPass: get(UPSTREAM_KEYS.lastPass) as string | null,
  };
}

/** Writes the given fields (inside the caller's transaction when there is one). */
export function writeUpstreamState(db: Db, state: Partial<UpstreamState>): void {
  const put = db.prepare("INSERT OR REPLACE INTO sync_state(key, value) VALUES ($key, $value)");
  for (const [field, key] of Object.entries(UPSTREAM_KEYS)) {
    const value = state[field as keyof UpstreamState];
    if (value !== undefined) put.run({ key, value });
  }
}

/**
 * The kind of upstream this replica follows: the one recorded, else "ndjson" when it already
 * holds records (replicas synced before the kind was recorded only ever read NDJSON), else null.
 */
export function readSourceKind(db: Db): SourceKind | null {
  return readUpstreamState(db).kind ?? (readWatermark(db) > 0 ? "ndjson" : null);
}

/** Refuses a source of another kind than the one the replica follows; records the kind of a new replica. */
export function assertSourceKind(db: Db, kind: SourceKind): void {
  const current = readSourceKind(db);
  if (current !== null && current !== kind) {
    const named = (k: SourceKind) =>
      k === "postgres" ? "a PostgreSQL database" : k === "api" ? "another deployment's API" : "NDJSON records";
    throw new SourceKindError(
      `this replica (${db.path}) follows ${named(current)}, not ${named(kind)}; sync ${named(kind)} into a new replica (--db PATH)`,
    );
  }
  if (current === null) writeUpstreamState(db, { kind });
}

export class SourceKindError extends Error {}

export function countUpstreamRejects(db: Db): number {
  return Number(db.prepare<{ n: number }>("SELECT count(*) AS n FROM upstream_rejects").get()?.n ?? 0);
}
