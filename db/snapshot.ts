/**
 * Serving snapshot refresh (docs/api.md, Serving snapshot). Page selection reads `snapshot`; hydration reads live
 * rows. A refresh runs in one transaction, so readers (WAL) keep seeing the previous snapshot
 * until it commits.
 *
 * The snapshot is `snapshot` (events, for page selection) and `snapshot_venues` (the venues a geo
 * search chooses candidates from, db/geo.ts; replica v10), rewritten in the same transaction so a
 * geo page's candidates and rows come from one refresh.
 *
 * Two ways to the same rows: an incremental refresh replaces only the rows of the events and
 * venues that apply recorded as changed (snapshot_dirty_*, replica migrations v4, v10); a full rebuild
 * recomputes everything, with the snapshot's indexes dropped and recreated around the insert
 * (building an index from sorted rows is much cheaper than a million random index inserts). The
 * full rebuild runs when changes were not tracked (a fresh replica, an import that outgrew the
 * tracking limit, a replica from before v4) or when they touch a large part of the snapshot.
 */
import { AGGREGATOR_VENDOR_VALUES, LONG_EVENT_MS } from "./contract.ts";
import type { Db } from "./driver.ts";

const aggregatorList = AGGREGATOR_VENDOR_VALUES.map((v) => `'${v}'`).join(",");

/** Servable = active, not a duplicate, venue exists and is visible (docs/upstream-records.md). */
/** What makes an event row servable by itself; its venue must also exist and be visible. */
export const EVENT_SERVABLE_SQL = "e.status = 'active' AND e.duplicate_of IS NULL";
export const SERVABLE_SQL = `${EVENT_SERVABLE_SQL} AND v.visible = 1`;

/**
 * Changed events beyond this share of the snapshot make a full rebuild cheaper than replacing
 * rows one by one (each replaced row touches every snapshot index). Apply stops tracking there.
 */
export const SNAPSHOT_TRACKING = { maxShare: 0.25, minEvents: 10_000 } as const;

/**
 * Page cache (KiB) while the full rebuild sorts, which also sizes SQLite's sorter. A sort bigger
 * than that is cut into sorted runs that SQLite's worker threads (PRAGMA threads, sync/writer.ts)
 * sort and merge beside the connection's own thread, where one sort in one big buffer ran on one
 * core and missed the CPU caches. The insert joins venues, so its cache still holds their pages.
 * Measured on the million-event snapshot (bulk cache 256 MiB before): the insert ~2.0-2.6 s
 * instead of ~3.0-4.4 s, the four index builds ~2.4-3.3 s instead of ~4.5-6.0 s. The runs go to
 * temporary files: SQLite gives a sort no worker threads under temp_store=MEMORY.
 */
const SORTER_KIB = { insert: 8192, index: 2048 } as const;

const SNAPSHOT_COLUMNS = "long, start_ms, id, end_ms, venue_id, state, city, source, sold_out, aggregator";
const SNAPSHOT_SELECT = `
  SELECT (coalesce(e.end_ms, e.start_ms) - e.start_ms) > $longMs, e.start_ms, e.id,
         max(coalesce(e.end_ms, e.start_ms), e.start_ms), e.venue_id, v.state, v.city, e.source,
         e.is_sold_out, e.vendor IN (${aggregatorList})
  FROM events e JOIN venues v ON v.id = e.venue_id`;

/**
 * The venues a geo search may choose: visible, with both coordinates (docs/api.md, Geo search).
 * Replica v10 fills `snapshot_venues` with this same query at first (test/geo-snapshot.test.ts).
 */
const SNAPSHOT_VENUES_SELECT = `
  SELECT id, latitude, longitude, geocode_precision, state FROM venues
  WHERE visible = 1 AND latitude IS NOT NULL AND longitude IS NOT NULL`;

/** Most changed events apply tracks before it gives up and leaves a full rebuild to the refresh. */
export function trackingLimit(db: Db): number {
  const row = db.prepare<{ events: number }>("SELECT events FROM snapshot_stats WHERE id = 1").get();
  return Math.max(SNAPSHOT_TRACKING.minEvents, Math.floor(Number(row?.events ?? 0) * SNAPSHOT_TRACKING.maxShare));
}

/** Whether apply is recording changes for an incremental refresh. */
export function snapshotTracked(db: Db): boolean {
  const row = db.prepare<{ value: number | null }>("SELECT value FROM sync_state WHERE key = 'snapshot_tracked'").get();
  return Number(row?.value ?? 0) === 1;
}

/** Stops tracking (too many changes): the next refresh is a full rebuild. */
export function stopTracking(db: Db): void {
  db.exec("UPDATE sync_state SET value = 0 WHERE key = 'snapshot_tracked'");
  clearDirty(db);
}

function clearDirty(db: Db): void {
  db.exec("DELETE FROM snapshot_dirty_events");
  db.exec("DELETE FROM snapshot_dirty_venues");
  db.exec("DELETE FROM snapshot_dirty_places");
}

export interface RefreshOptions {
  /** Rebuild everything even when changes were tracked. */
  full?: boolean;
}

/** Brings the snapshot up to date with the live rows; returns the number of snapshot events. */
export function refreshSnapshot(db: Db, nowMs: number, options: RefreshOptions = {}): number {
  return db.transaction(() => {
    const incremental = !options.full && snapshotTracked(db) && dirtyEvents(db) <= trackingLimit(db);
    const events = incremental ? refreshChanged(db) : rebuild(db);
    if (incremental) refreshChangedVenues(db);
    else rebuildVenues(db);
    clearDirty(db);
    db.exec("UPDATE sync_state SET value = 1 WHERE key = 'snapshot_tracked'");
    // Last: the snapshot_stats and snapshot_venue_events triggers (replica v2, v3) fire here.
    db.prepare("UPDATE sync_state SET value = $now WHERE key = 'snapshot_at'").run({ now: nowMs });
    return events;
  });
}

function dirtyEvents(db: Db): number {
  return Number(db.prepare<{ n: number }>("SELECT count(*) AS n FROM snapshot_dirty_events").get()?.n ?? 0);
}

function countSources(db: Db): void {
  db.exec("DELETE FROM snapshot_sources");
  // In snapshot_source's order (replica v7: source leads it), so the count needs no sort.
  db.exec(
    "INSERT INTO snapshot_sources(source, events) SELECT source, count(*) FROM snapshot INDEXED BY snapshot_source GROUP BY source",
  );
}

/** Full rebuild with the snapshot's indexes recreated afterwards under the same names and definitions. */
function rebuild(db: Db): number {
  const indexes = db
    .prepare<{ name: string; sql: string }>(
      "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'snapshot' AND sql IS NOT NULL ORDER BY name",
    )
    .all();
  for (const { name } of indexes) db.exec(`DROP INDEX "${name.replaceAll('"', '""')}"`);
  db.exec("DELETE FROM snapshot");
  const changes = withSorterMemory(
    db,
    SORTER_KIB.insert,
    () =>
      db
        .prepare(`INSERT INTO snapshot(${SNAPSHOT_COLUMNS}) ${SNAPSHOT_SELECT} WHERE ${SERVABLE_SQL} ORDER BY 1, 2, 3`)
        .run({ longMs: LONG_EVENT_MS }).changes,
  );
  withSorterMemory(db, SORTER_KIB.index, () => {
    for (const { sql } of indexes) db.exec(sql);
  });
  countSources(db);
  return changes;
}

function rebuildVenues(db: Db): void {
  db.exec("DELETE FROM snapshot_venues");
  db.exec(`INSERT INTO snapshot_venues(id, latitude, longitude, geocode_precision, state) ${SNAPSHOT_VENUES_SELECT}`);
}

/**
 * Replaces the snapshot_venues rows of the venues apply marked: those whose snapshot rows changed
 * (city, state, visibility; gone) and those whose coordinates or precision alone did.
 */
function refreshChangedVenues(db: Db): void {
  const marked = "SELECT id FROM snapshot_dirty_venues UNION SELECT id FROM snapshot_dirty_places";
  db.exec(`DELETE FROM snapshot_venues WHERE id IN (${marked})`);
  db.exec(
    `INSERT INTO snapshot_venues(id, latitude, longitude, geocode_precision, state) ${SNAPSHOT_VENUES_SELECT} AND id IN (${marked})`,
  );
}

/** Runs `sort` with a page cache of `kib` (see SORTER_KIB), then gives the connection its own back. */
function withSorterMemory<T>(db: Db, kib: number, sort: () => T): T {
  const saved = Number(db.pragma("cache_size"));
  db.exec(`PRAGMA cache_size = -${kib}`);
  try {
    return sort();
  } finally {
    db.exec(`PRAGMA cache_size = ${saved}`);
  }
}

/** Columns compared to tell an unchanged snapshot row from a changed one. */
const SAME_ROW = SNAPSHOT_COLUMNS.split(", ")
  .map((c) => `n.${c} = snapshot.${c}`)
  .join(" AND ");

/**
 * Replaces the rows of changed events and of every event at a changed venue (its visibility,
 * city or state feed the snapshot). The new rows are computed into a temporary table first, and
 * only rows that differ are deleted and inserted: a record that changed a title or a price leaves
 * its snapshot row, and the index entries that come with it, alone. The old rows are found
 * by one pass over the snapshot rather than through an extra index every query would carry.
 */
function refreshChanged(db: Db): number {
  const venuesChanged = db.prepare("SELECT 1 FROM snapshot_dirty_venues LIMIT 1").get() !== undefined;
  const eventsChanged = db.prepare("SELECT 1 FROM snapshot_dirty_events LIMIT 1").get() !== undefined;
  if (venuesChanged || eventsChanged) {
    db.exec(`CREATE TEMP TABLE IF NOT EXISTS snapshot_next(long INTEGER, start_ms INTEGER, id INTEGER PRIMARY KEY,
      end_ms INTEGER, venue_id INTEGER, state TEXT, city TEXT, source TEXT, sold_out INTEGER, aggregator INTEGER)`);
    db.exec("DELETE FROM temp.snapshot_next");
    const fill = (where: string) =>
      db
        .prepare(
          `INSERT OR IGNORE INTO temp.snapshot_next(${SNAPSHOT_COLUMNS}) ${SNAPSHOT_SELECT} WHERE ${where} AND ${SERVABLE_SQL}`,
        )
        .run({ longMs: LONG_EVENT_MS });
    if (eventsChanged) fill("e.id IN (SELECT id FROM snapshot_dirty_events)");
    if (venuesChanged) fill("e.venue_id IN (SELECT id FROM snapshot_dirty_venues)");
    const byVenue = venuesChanged ? " OR venue_id IN (SELECT id FROM snapshot_dirty_venues)" : "";
    db.exec(
      `DELETE FROM snapshot WHERE (id IN (SELECT id FROM snapshot_dirty_events)${byVenue})
         AND NOT EXISTS (SELECT 1 FROM temp.snapshot_next n WHERE n.id = snapshot.id AND ${SAME_ROW})`,
    );
    // Unchanged rows are still there and conflict on the key: IGNORE skips exactly those.
    db.exec(
      `INSERT OR IGNORE INTO snapshot(${SNAPSHOT_COLUMNS}) SELECT ${SNAPSHOT_COLUMNS} FROM temp.snapshot_next ORDER BY 1, 2, 3`,
    );
    db.exec("DELETE FROM temp.snapshot_next");
    countSources(db);
  }
  return Number(db.prepare<{ n: number }>("SELECT count(*) AS n FROM snapshot").get()?.n ?? 0);
}
