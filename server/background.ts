/**
 * Work a serving process does besides answering requests: demo data on first start, periodic
 * snapshot refresh and (with --sync-from) periodic sync.
 */
import { refreshSnapshot } from "../db/snapshot.ts";
import { notifyReplicaChange, type AppContext } from "./context.ts";

export async function startBackgroundWork(ctx: AppContext): Promise<void> {
  const timer = setInterval(() => {
    try {
      refreshSnapshot(ctx.replica, ctx.clock.now());
      notifyReplicaChange(ctx);
    } catch (err) {
      console.error("snapshot refresh failed:", (err as Error).message);
    }
  }, ctx.config.snapshotIntervalS * 1000);
  timer.unref?.();
}
