import type { H3 } from "h3";
import { readReplicaStats } from "../../db/replica.ts";
import type { AppContext } from "../context.ts";
import { handle, json } from "../handle.ts";

/** GET /healthz: replica watermark, event count and snapshot age. */
export function healthRoutes(app: H3, ctx: AppContext): void {
  app.get(
    "/healthz",
    handle(() => {
      const stats = readReplicaStats(ctx.replica);
      const now = ctx.clock.now();
      return json(
        {
          status: "ok",
          watermark: stats.watermark,
          events: stats.events,
          venues: stats.venues,
          snapshotEvents: stats.snapshotEvents,
          snapshotAgeSeconds: stats.snapshotAt == null ? null : Math.max(0, Math.round((now - stats.snapshotAt) / 1000)),
          now: new Date(now).toISOString(),
        },
        200,
        { "cache-control": "no-store" },
      );
    }),
  );
}
