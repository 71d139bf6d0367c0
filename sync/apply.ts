/**
 * Applies validated upstream records (encoded as rows by sync/rows.ts) to the replica. A batch is
 * one transaction that also advances the `seq` watermark, so a crash leaves either the whole batch or none of it, and a
 * re-run skips what is already applied (records with seq <= watermark are no-ops).
 */
import type { Db } from "../db/driver.ts";
import { readWatermark } from "../db/replica.ts";
import { snapshotTracked, stopTracking, trackingLimit } from "../db/snapshot.ts";
import type { UpstreamRecord } from "./records.ts";
import {
  columnIndex,
  EVENT_COLUMNS,
  encodeRecords,
  type RowBatch,
  RowDecoder,
  RowKind,
  VENUE_COLUMNS,
} from "./rows.ts";

export interface ApplyResult {
  applied: number;
  skipped: number;
  watermark: number;
}

function statements(db: Db) {
  return {
    upsertVenue: db.prepare(
      `INSERT INTO venues(id, name, city, state, timezone, latitude, longitude, geocode_precision, visible, seq)
       VALUES ($id, $name, $city, $state, $timezone, $latitude, $longitude, $precision, $visible, $seq)
       ON CONFLICT(id) DO UPDATE SET name=excluded.name, city=excluded.city, state=excluded.state,
         timezone=excluded.timezone, latitude=excluded.latitude, longitude=excluded.longitude,
         geocode_precision=excluded.geocode_precision, visible=excluded.visible, seq=excluded.seq`,
    ),
    deleteRtree: db.prepare("DELETE FROM venue_rtree WHERE id = $id"),
    insertRtree: db.prepare(
      "INSERT INTO venue_rtree(id, min_lat, max_lat, min_lng, max_lng) VALUES ($id, $lat, $lat, $lng, $lng)",
    ),
    deleteVenue: db.prepare("DELETE FROM venues WHERE id = $id"),
    // Positional: a bulk import binds 28 values a row, and named binding cost ~10% more per insert.
    upsertEvent: db.prepare(
      `INSERT OR REPLACE INTO events(id, seq, ${EVENT_COLUMNS.map((c) => c.name).join(", ")})
       VALUES (${Array.from({ length: 2 + EVENT_COLUMNS.length }, () => "?").join(", ")})`,
    ),
    deleteEvent: db.prepare("DELETE FROM events WHERE id = $id"),
    setWatermark: db.prepare("UPDATE sync_state SET value = $seq WHERE key = 'watermark'"),
    markEvent: db.prepare("INSERT OR IGNORE INTO snapshot_dirty_events(id) VALUES ($id)"),
    markVenue: db.prepare("INSERT OR IGNORE INTO snapshot_dirty_venues(id) VALUES ($id)"),
    // Prepared when first run (the driver keeps it by its SQL): only a tracked replica marks, and
    // one is tracked only after a refresh, which needs replica v10; a test may apply to an older one.
    markPlace: (id: number) => db.prepare("INSERT OR IGNORE INTO snapshot_dirty_places(id) VALUES ($id)").run({ id }),
    // The venue fields the snapshot copies: into its event rows, and into snapshot_venues.
    venueRow: db.prepare<VenueSnapshotFields>(
      "SELECT city, state, visible, latitude, longitude, geocode_precision AS precision FROM venues WHERE id = $id",
    ),
    // The event fields a snapshot row is made of (db/snapshot.ts SNAPSHOT_SELECT, SERVABLE_SQL).
    eventRow: db.prepare<EventSnapshotFields>(
      "SELECT venue_id, start_ms, end_ms, is_sold_out, duplicate_of, source, vendor, status FROM events WHERE id = $id",
    ),
    countMarked: db.prepare<{ n: number }>("SELECT count(*) AS n FROM snapshot_dirty_events"),
  };
}

type Statements = ReturnType<typeof statements>;

interface VenueSnapshotFields {
  city: string;
  state: string;
  visible: number;
  latitude: number | null;
  longitude: number | null;
  precision: string | null;
}

/** One decoded record: its seq, and what the snapshot's change tracking needs to know. */
interface Row {
  kind: RowKind;
  seq: number;
  id: number;
  /** Venues only: the fields the snapshot copies. */
  venue?: VenueSnapshotFields;
}

/**
 * Records what a record is about to change, for the next incremental snapshot refresh
 * (db/snapshot.ts). Called before the record is applied. A venue is marked in
 * snapshot_dirty_venues only when a field its events' snapshot rows copy (city, state) or its
 * visibility changes, since every event at such a venue is recomputed; when only its coordinates
 * or precision change, in snapshot_dirty_places, which replaces just its snapshot_venues row
 * (geo candidates, db/geo.ts).
 */
function mark(s: Statements, r: Row): void {
  if (r.kind === RowKind.Event || r.kind === RowKind.DeleteEvent) s.markEvent.run({ id: r.id });
  else if (r.kind === RowKind.DeleteVenue) s.markVenue.run({ id: r.id });
  else {
    const old = s.venueRow.get({ id: r.id });
    const v = r.venue!;
    if (!old || old.city !== v.city || old.state !== v.state || old.visible !== v.visible)
      s.markVenue.run({ id: r.id });
    else if (old.latitude !== v.latitude || old.longitude !== v.longitude || old.precision !== v.precision)
      s.markPlace(r.id);
  }
}

/** Per batch: whether changes are tracked for the next incremental snapshot refresh. */
interface BatchState {
  track: boolean;
}

const VENUE = columnIndex(VENUE_COLUMNS);
const EVENT = columnIndex(EVENT_COLUMNS);

/** Reads the rest of a venue row (after seq and id) and writes it. */
function applyVenue(s: Statements, d: RowDecoder, r: Row, state: BatchState): void {
  const v = d.readColumns(VENUE_COLUMNS);
  const latitude = v[VENUE.latitude] as number | null;
  const longitude = v[VENUE.longitude] as number | null;
  const visible = v[VENUE.visible] as number;
  const city = v[VENUE.city] as string;
  const st = v[VENUE.state] as string;
  const precision = v[VENUE.geocode_precision] as string | null;
  if (state.track) mark(s, { ...r, venue: { city, state: st, visible, latitude, longitude, precision } });
  s.upsertVenue.run({
    id: r.id,
    name: v[VENUE.name],
    city,
    state: st,
    timezone: v[VENUE.timezone],
    latitude,
    longitude,
    precision,
    visible,
    seq: r.seq,
  });
  s.deleteRtree.run({ id: r.id });
  if (latitude != null && longitude != null) s.insertRtree.run({ id: r.id, lat: latitude, lng: longitude });
}

interface EventSnapshotFields {
  venue_id: number;
  start_ms: number;
  end_ms: number | null;
  is_sold_out: number;
  duplicate_of: number | null;
  source: string;
  /** Decides the snapshot's aggregator flag; usually follows `source`, not for resolved records. */
  vendor: string;
  status: string;
}

/**
 * Reads the rest of an event row (after seq and id) and writes it, ticket links included: the
 * numbers, then the strings, in the order sync/rows.ts encodes them and upsertEvent lists them.
 * Like a venue, an existing event counts as changed for the snapshot only when a field its
 * snapshot row is made of changes: a new title, price or ticket link leaves that row as it is
 * (hydration reads them from the live row), and a serving process that streams such changes
 * then has no snapshot to refresh.
 */
function applyEvent(s: Statements, d: RowDecoder, r: Row, state: BatchState): void {
  const v = d.readColumns(EVENT_COLUMNS);
  if (state.track) {
    const old = s.eventRow.get({ id: r.id });
    const same =
      old !== undefined &&
      old.venue_id === v[EVENT.venue_id] &&
      old.start_ms === v[EVENT.start_ms] &&
      (old.end_ms ?? null) === (v[EVENT.end_ms] ?? null) &&
      old.is_sold_out === v[EVENT.is_sold_out] &&
      (old.duplicate_of ?? null) === (v[EVENT.duplicate_of] ?? null) &&
      old.source === v[EVENT.source] &&
      old.vendor === v[EVENT.vendor] &&
      old.status === v[EVENT.status];
    if (!same) mark(s, r);
  }
  s.upsertEvent.run(r.id, r.seq, ...v);
}

/** Skips the rest of a record at or below the watermark, so the decoder stays in step. */
function skipRest(d: RowDecoder, kind: RowKind): void {
  if (kind === RowKind.Venue) d.readColumns(VENUE_COLUMNS);
  else if (kind === RowKind.Event) d.readColumns(EVENT_COLUMNS);
}

/**
 * Applies one batch in one transaction. Records at or below the watermark are skipped (the
 * reader rejects a line whose seq does not increase, so nothing out of order reaches here).
 * `within` runs last inside the same transaction.
 */
export function applyRows(db: Db, batch: RowBatch, within?: () => void): ApplyResult {
  return db.transaction(() => applyRowsInTransaction(db, batch, within));
}

/**
 * applyRows inside the caller's transaction: for a source that numbers its records from the
 * watermark it reads in the same transaction (sync/api/writer.ts).
 */
export function applyRowsInTransaction(db: Db, batch: RowBatch, within?: () => void): ApplyResult {
  // Once per batch; the driver keeps each prepared statement by its SQL.
  const stmts = statements(db);
  let watermark = readWatermark(db);
  let applied = 0;
  let skipped = 0;
  // Changes are tracked only while the snapshot has a tracked baseline; an import into a
  // fresh replica skips this, its first refresh is a full rebuild anyway.
  const track = snapshotTracked(db);
  const state: BatchState = { track };
  const d = new RowDecoder(batch);
  for (let kind = d.next(); kind !== undefined; kind = d.next()) {
    const r: Row = { kind, seq: d.int(), id: d.int() };
    if (r.seq <= watermark) {
      skipRest(d, kind);
      skipped++;
      continue;
    }
    if (kind === RowKind.Venue) applyVenue(stmts, d, r, state);
    else if (kind === RowKind.Event) applyEvent(stmts, d, r, state);
    else {
      if (track) mark(stmts, r);
      if (kind === RowKind.DeleteEvent) {
        stmts.deleteEvent.run({ id: r.id });
      } else {
        // A deleted venue makes its events unservable (no venue); the events stay until deleted.
        stmts.deleteRtree.run({ id: r.id });
        stmts.deleteVenue.run({ id: r.id });
      }
    }
    watermark = r.seq;
    applied++;
  }
  if (applied > 0) stmts.setWatermark.run({ seq: watermark });
  if (track && applied > 0 && Number(stmts.countMarked.get()?.n ?? 0) > trackingLimit(db)) stopTracking(db);
  // What the caller commits with the batch (a PostgreSQL source's log position).
  within?.();
  return { applied, skipped, watermark };
}

/** Applies validated records as one batch (test mode, tests, and the in-thread writer's callers). */
export function applyBatch(db: Db, records: readonly UpstreamRecord[]): ApplyResult {
  return applyRows(db, encodeRecords(records));
}
