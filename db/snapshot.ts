/**
 * Serving snapshot refresh (CONTRACT §4). Page selection reads `snapshot`; hydration reads live
 * rows. The refresh rebuilds the table in one transaction, so readers (WAL) keep seeing the
 * previous snapshot until it commits.
 */
import { AGGREGATOR_VENDORS, LONG_EVENT_MS } from "./contract.ts";
import type { Db } from "./driver.ts";

const aggregatorList = AGGREGATOR_VENDORS.map((v) => `'${v}'`).join(",");

/** Servable = active, not a duplicate, venue exists and is visible (CONTRACT §3). */
export const SERVABLE_SQL = "e.status = 'active' AND e.duplicate_of IS NULL AND v.visible = 1";

export function refreshSnapshot(db: Db, nowMs: number): number {
  return db.transaction(() => {
    db.exec("DELETE FROM snapshot");
    db.exec("DELETE FROM snapshot_sources");
    const { changes } = db
      .prepare(
        `INSERT INTO snapshot(long, start_ms, id, end_ms, venue_id, state, city, source, sold_out, aggregator)
         SELECT (coalesce(e.end_ms, e.start_ms) - e.start_ms) > $longMs, e.start_ms, e.id,
                max(coalesce(e.end_ms, e.start_ms), e.start_ms), e.venue_id, v.state, v.city, e.source,
                e.is_sold_out, e.vendor IN (${aggregatorList})
         FROM events e JOIN venues v ON v.id = e.venue_id
         WHERE ${SERVABLE_SQL}
         ORDER BY 1, 2, 3`,
      )
      .run({ longMs: LONG_EVENT_MS });
    db.exec("INSERT INTO snapshot_sources(source, events) SELECT source, count(*) FROM snapshot GROUP BY source");
    db.prepare("UPDATE sync_state SET value = $now WHERE key = 'snapshot_at'").run({ now: nowMs });
    return changes;
  });
}
