/**
 * Snapshot refreshes while changes stream in: one soon after applied changes, at most one per
 * `gapMs`, and always one after the last change of a burst, so a change waits at most `gapMs`
 * (plus the refresh) to be served.
 */
import type { Db } from "../../db/driver.ts";
import { refreshServingSnapshot } from "../serving-snapshot.ts";

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
      refreshServingSnapshot(db, options.now());
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
