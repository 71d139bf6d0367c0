/**
 * Applies validated upstream records to the replica. A batch is one transaction that also
 * advances the `seq` watermark, so a crash leaves either the whole batch or none of it, and a
 * re-run skips what is already applied (records with seq <= watermark are no-ops).
 */
import type { Db } from "../db/driver.ts";
import { readWatermark } from "../db/replica.ts";
import { snapshotTracked, stopTracking, trackingLimit } from "../db/snapshot.ts";
import { deriveCategories, deriveCost, deriveInstant, deriveTicketing, deriveWebsite, vendorOf } from "./derive.ts";
import type { UpstreamRecord } from "./records.ts";
import { RowDecoder, type RowBatch } from "./rows.ts";

export interface ApplyResult {
  applied: number;
  skipped: number;
  watermark: number;
}

const b = (x: boolean | null | undefined) => (x == null ? null : x ? 1 : 0);

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
    upsertEvent: db.prepare(
      `INSERT OR REPLACE INTO events(id, venue_id, title, slug, start_date, start_ms, end_date, end_ms, cost_text,
         is_free, is_sold_out, is_low_tickets, age, website_raw, website_broken, image_url, categories, source,
         vendor, status, duplicate_of, ticketed, cost, website, ticket_link_status, ticket_destination, seq)
       VALUES ($id, $venueId, $title, $slug, $startDate, $startMs, $endDate, $endMs, $costText, $isFree, $soldOut,
         $lowTickets, $age, $websiteRaw, $websiteBroken, $imageUrl, $categories, $source, $vendor, $status,
         $duplicateOf, $ticketed, $cost, $website, $ticketStatus, $ticketDestination, $seq)`,
    ),
    deleteLinks: db.prepare("DELETE FROM ticket_links WHERE event_id = $id"),
    maxEventId: db.prepare<{ id: number | null }>("SELECT max(id) AS id FROM events"),
    insertLink: db.prepare(
      "INSERT INTO ticket_links(event_id, position, url, seller, broken) VALUES ($id, $position, $url, $seller, $broken)",
    ),
    deleteEvent: db.prepare("DELETE FROM events WHERE id = $id"),
    setWatermark: db.prepare("UPDATE sync_state SET value = $seq WHERE key = 'watermark'"),
    markEvent: db.prepare("INSERT OR IGNORE INTO snapshot_dirty_events(id) VALUES ($id)"),
    markVenue: db.prepare("INSERT OR IGNORE INTO snapshot_dirty_venues(id) VALUES ($id)"),
    venueRow: db.prepare<{ city: string; state: string; visible: number }>("SELECT city, state, visible FROM venues WHERE id = $id"),
    countMarked: db.prepare<{ n: number }>("SELECT count(*) AS n FROM snapshot_dirty_events"),
  };
}

type Statements = ReturnType<typeof statements>;
const prepared = new WeakMap<Db, Statements>();

/**
 * Records what a record is about to change, for the next incremental snapshot refresh
 * (db/snapshot.ts). Called before the record is applied: a venue counts only when a field the
 * snapshot copies (city, state) or its visibility changes, since every event at a marked venue
 * is recomputed.
 */
function mark(s: Statements, r: UpstreamRecord): void {
  if (r.type === "event") s.markEvent.run({ id: r.event.id });
  else if (r.type === "delete") (r.entity === "event" ? s.markEvent : s.markVenue).run({ id: r.id });
  else {
    const v = r.venue;
    const old = s.venueRow.get({ id: v.id });
    if (!old || old.city !== v.city || old.state !== v.state || old.visible !== b(v.visible)) s.markVenue.run({ id: v.id });
  }
}

/**
 * Ticket links exist only for events in the table (every path that removes an event removes its
 * links), so an event id above the largest stored one has none to delete: a bulk import of new
 * events skips a million lookups. Tracked per batch.
 */
interface BatchState {
  maxEventId: number;
}

function applyOne(s: Statements, r: UpstreamRecord, batch: BatchState): void {
  switch (r.type) {
    case "venue": {
      const x = r.venue;
      s.upsertVenue.run({
        id: x.id, name: x.name, city: x.city, state: x.state, timezone: x.timezone, latitude: x.latitude,
        longitude: x.longitude, precision: x.geocodePrecision, visible: b(x.visible), seq: r.seq,
      });
      s.deleteRtree.run({ id: x.id });
      if (x.latitude != null && x.longitude != null) s.insertRtree.run({ id: x.id, lat: x.latitude, lng: x.longitude });
      return;
    }
    case "event": {
      const e = r.event;
      const start = deriveInstant(e.startDate);
      const end = e.endDate == null ? null : deriveInstant(e.endDate);
      const website = deriveWebsite(e.website, e.websiteBroken);
      const ticketing = deriveTicketing(e, website);
      s.upsertEvent.run({
        id: e.id, venueId: e.venueId, title: e.title, slug: e.slug,
        startDate: start.iso, startMs: start.ms, endDate: end?.iso ?? null, endMs: end?.ms ?? null,
        costText: e.costText, isFree: b(e.isFree), soldOut: b(e.isSoldOut), lowTickets: b(e.isLowTickets),
        age: e.age, websiteRaw: e.website, websiteBroken: b(e.websiteBroken), imageUrl: e.imageUrl,
        categories: JSON.stringify(deriveCategories(e.categories)), source: e.source, vendor: vendorOf(e.source),
        status: e.status, duplicateOf: e.duplicateOf, ticketed: b(e.ticketed),
        cost: deriveCost(e.costText, e.isFree), website, ticketStatus: ticketing.status,
        ticketDestination: ticketing.destination, seq: r.seq,
      });
      if (e.id > batch.maxEventId) batch.maxEventId = e.id;
      else s.deleteLinks.run({ id: e.id });
      e.ticketLinks.forEach((l, position) =>
        s.insertLink.run({ id: e.id, position, url: l.url, seller: l.seller, broken: b(l.broken) }),
      );
      return;
    }
    case "delete":
      if (r.entity === "event") {
        s.deleteLinks.run({ id: r.id });
        s.deleteEvent.run({ id: r.id });
      } else {
        // A deleted venue makes its events unservable (no venue); the events stay until deleted.
        s.deleteRtree.run({ id: r.id });
        s.deleteVenue.run({ id: r.id });
      }
      return;
  }
}

/**
 * Applies one batch in one transaction. Records at or below the watermark are skipped (the
 * reader rejects a line whose seq does not increase, so nothing out of order reaches here).
 */
export function applyBatch(db: Db, records: readonly UpstreamRecord[]): ApplyResult {
  let i = 0;
  return applyEach(db, () => records[i++]);
}

/** applyBatch for a batch encoded by sync/rows.ts (what a sync run's writer receives). */
export function applyRows(db: Db, batch: RowBatch): ApplyResult {
  const rows = new RowDecoder(batch);
  return applyEach(db, () => rows.record());
}

function applyEach(db: Db, next: () => UpstreamRecord | undefined): ApplyResult {
  let s = prepared.get(db);
  if (!s) prepared.set(db, (s = statements(db)));
  const stmts = s;
  return db.transaction(() => {
    let watermark = readWatermark(db);
    let applied = 0;
    let skipped = 0;
    // Changes are tracked only while the snapshot has a tracked baseline; an import into a
    // fresh replica skips this, its first refresh is a full rebuild anyway.
    const track = snapshotTracked(db);
    const state: BatchState = { maxEventId: Number(stmts.maxEventId.get()?.id ?? 0) };
    for (let r = next(); r !== undefined; r = next()) {
      if (r.seq <= watermark) {
        skipped++;
        continue;
      }
      if (track) mark(stmts, r);
      applyOne(stmts, r, state);
      watermark = r.seq;
      applied++;
    }
    if (applied > 0) stmts.setWatermark.run({ seq: watermark });
    if (track && applied > 0 && Number(stmts.countMarked.get()?.n ?? 0) > trackingLimit(db)) stopTracking(db);
    return { applied, skipped, watermark };
  });
}
