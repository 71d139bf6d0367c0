/**
 * The serving snapshot as a sync run sees it (docs/api.md, Serving snapshot): refreshed after a run applied
 * records, stamped with the watermark it reflects, so an unchanged replica is not rebuilt.
 */
import type { Db } from "../db/driver.ts";
import { readWatermark } from "../db/replica.ts";
import { refreshSnapshot } from "../db/snapshot.ts";

const SNAPSHOT_WATERMARK = "snapshot_watermark";

/** The snapshot lags the live rows when the watermark moved since the last refresh by a sync. */
export function snapshotLags(db: Db): boolean {
  const row = db
    .prepare<{ value: number | null }>("SELECT value FROM sync_state WHERE key = $key")
    .get({ key: SNAPSHOT_WATERMARK });
  return row?.value == null || Number(row.value) !== readWatermark(db);
}

/** Refreshes the snapshot and records the watermark it reflects. */
export function refreshServingSnapshot(db: Db, nowMs: number): number {
  const events = refreshSnapshot(db, nowMs);
  db.prepare("INSERT OR REPLACE INTO sync_state(key, value) VALUES ($key, $value)").run({
    key: SNAPSHOT_WATERMARK,
    value: readWatermark(db),
  });
  return events;
}

/**
 * The periodic refresh of a serving process: skipped while the replica has not changed since
 * the last refresh (the snapshot depends on live rows only, not on the time), so an idle
 * million-event replica is not rebuilt every minute. Returns the snapshot size, or null if skipped.
 */
export function refreshSnapshotIfStale(db: Db, nowMs: number): number | null {
  return snapshotLags(db) ? refreshServingSnapshot(db, nowMs) : null;
}
