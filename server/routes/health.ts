import { readReplicaState } from "../../db/hydrate.ts";
import { type ReplicaStats, readReplicaStats } from "../../db/replica.ts";
import type { AppContext } from "../context.ts";
import { handle, json } from "../handle.ts";
import type { RouteTable } from "../route-table.ts";

/**
 * GET /healthz: replica watermark, event count, snapshot age and, while streaming from
 * PostgreSQL, the upstream's state. Counting a million events takes
 * a few hundred milliseconds, so the counts are kept until the replica changes (its state is
 * read first: a commit in between only makes the kept counts newer than their key).
 */
export function healthRoutes(app: RouteTable, ctx: AppContext): void {
  let kept: { state: string; stats: ReplicaStats } | undefined;
  // A fast route (Bun's router, no h3 in between): checked often, and the first request a new
  // instance usually gets.
  app.fast(
    "GET",
    "/healthz",
    handle(() => {
      const state = readReplicaState(ctx.replica);
      if (kept?.state !== state) kept = { state, stats: readReplicaStats(ctx.replica) };
      const { stats } = kept;
      const now = ctx.clock.now();
      return json(
        {
          status: "ok",
          watermark: stats.watermark,
          events: stats.events,
          venues: stats.venues,
          snapshotEvents: stats.snapshotEvents,
          snapshotAgeSeconds:
            stats.snapshotAt == null ? null : Math.max(0, Math.round((now - stats.snapshotAt) / 1000)),
          // Source, slot, lag, last applied position and time, rejected rows (README, "Follow your PostgreSQL").
          upstream: ctx.upstream?.status() ?? null,
          now: new Date(now).toISOString(),
          // Which process answered, under `serve --workers N` only (docs/operations.md, Health).
          ...(ctx.config.workerIndex === undefined ? {} : { worker: ctx.config.workerIndex, pid: process.pid }),
        },
        200,
        { "cache-control": "no-store" },
      );
    }),
  );
}
