/**
 * Snapshot refreshes while changes stream in: one soon after applied changes, at most one per
 * `gapMs`, and always one after the last change of a burst, so a change waits at most `gapMs`
 * (plus the refresh) to be served. A refresh still reads the whole snapshot in places (source
 * and venue counts), so it is skipped when the changes touched no snapshot row: apply marks
 * only events and venues whose snapshot fields changed (sync/apply.ts; a venue's coordinates and
 * precision count, geo candidates follow the snapshot), and new titles, prices
 * or ticket links are served from the live rows once the caches are dropped (`after`).
 */
import type { Db } from "../../db/driver.ts";
import { snapshotTracked } from "../../db/snapshot.ts";
import { refreshServingSnapshot } from "../serving-snapshot.ts";

/** Whether the snapshot misses a change: rows marked since the last refresh, or tracking off. */
function snapshotMissesChanges(db: Db): boolean {
  if (!snapshotTracked(db)) return true;
  return (
    db
      .prepare(
        `SELECT 1 FROM snapshot_dirty_events UNION ALL SELECT 1 FROM snapshot_dirty_venues
         UNION ALL SELECT 1 FROM snapshot_dirty_places LIMIT 1`,
      )
      .get() !== undefined
  );
}

export interface Refresher {
  /** Changes were applied: a refresh is due. */
  changed(): void;
  /** No refresh pending any more (the caller refreshes itself at the end, if it needs to). */
  cancel(): void;
}

export function createRefresher(
  db: Db,
  options: { gapMs: number; now: () => number; after?: () => void; onError?: (err: Error) => void },
): Refresher {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let last = -Infinity;
  const refresh = () => {
    timer = undefined;
    last = performance.now();
    try {
      if (snapshotMissesChanges(db)) refreshServingSnapshot(db, options.now());
    } catch (err) {
      options.onError?.(err as Error);
    }
    options.after?.();
  };
  return {
    changed() {
      if (timer) return;
      timer = setTimeout(refresh, Math.max(0, options.gapMs - (performance.now() - last)));
    },
    cancel() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
