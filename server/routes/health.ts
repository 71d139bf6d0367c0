import type { AppContext } from "../context.ts";
import { handle, json } from "../handle.ts";
import { readinessBody } from "../health.ts";
import type { RouteTable } from "../route-table.ts";
import { type BuildInfo, readBuildInfo } from "../version.ts";

const NO_STORE = { "cache-control": "no-store" };

/**
 * GET /healthz: replica watermark, event count, snapshot age, the build and, while streaming
 * from PostgreSQL, the upstream's state; `status` is `ok`, or `degraded` when a readiness check
 * fails (server/health.ts). GET /livez: 200 while the process answers. GET /readyz: 200 when
 * every readiness check passes, else 503 naming the failing ones (docs/operations.md, Health).
 */
export function healthRoutes(app: RouteTable, ctx: AppContext): void {
  const build: BuildInfo = readBuildInfo();
  // A fast route (Bun's router, no h3 in between): checked often, and the first request a new
  // instance usually gets.
  app.fast(
    "GET",
    "/healthz",
    handle(async () => {
      const readiness = await ctx.health.readiness();
      const { stats } = readiness;
      const now = ctx.clock.now();
      return json(
        {
          status: readiness.ready ? "ok" : "degraded",
          watermark: stats.watermark,
          events: stats.events,
          venues: stats.venues,
          snapshotEvents: stats.snapshotEvents,
          snapshotAgeSeconds:
            stats.snapshotAt == null ? null : Math.max(0, Math.round((now - stats.snapshotAt) / 1000)),
          // Source, slot, lag, last applied position and time, rejected rows (docs/postgres.md, "Follow your PostgreSQL").
          upstream: ctx.upstream?.status() ?? null,
          now: new Date(now).toISOString(),
          version: build.version,
          commit: build.commit,
          runtime: build.runtime,
          checks: readiness.checks,
          // Which process answered, under `serve --workers N` only (docs/operations.md, Health).
          ...(ctx.config.workerIndex === undefined ? {} : { worker: ctx.config.workerIndex, pid: process.pid }),
        },
        200,
        NO_STORE,
      );
    }),
  );
  app.get(
    "/livez",
    handle(() => json({ status: "ok" }, 200, NO_STORE)),
  );
  app.get(
    "/readyz",
    handle(async () => {
      const readiness = await ctx.health.readiness();
      return json(readinessBody(readiness), readiness.ready ? 200 : 503, NO_STORE);
    }),
  );
}
