/**
 * App wiring: the route table (server/route-table.ts), filled by one module per route family,
 * served by one H3 app.
 */
import { H3 } from "h3";
import type { AppContext } from "./context.ts";
import { ApiError, renderError } from "./errors.ts";
import { followClock, injectFaults, rejectResetsInProcess } from "./fault-injection.ts";
import { type H3Scope, h3Handler, type RequestScope, type RouteHandler, WebScope } from "./handle.ts";
import { headTooLarge, isHeadTooLarge } from "./request-head.ts";
import { RouteTable } from "./route-table.ts";
import { developerRoutes } from "./routes/developers.ts";
import { eventsRoutes } from "./routes/events.ts";
import { handoffRoutes } from "./routes/handoffs.ts";
import { healthRoutes } from "./routes/health.ts";
import { mcpRoutes } from "./routes/mcp.ts";
import { openapiRoutes } from "./routes/openapi.ts";
import { pageRoutes } from "./routes/pages.ts";
import { testModeRoutes } from "./routes/test-mode.ts";

/** Every route of the app, in one table. */
export function createRouteTable(ctx: AppContext): RouteTable {
  const routes = new RouteTable(ctx.requests);
  healthRoutes(routes, ctx);
  eventsRoutes(routes, ctx);
  handoffRoutes(routes, ctx);
  pageRoutes(routes, ctx);
  developerRoutes(routes, ctx);
  openapiRoutes(routes, ctx);
  mcpRoutes(routes, ctx);
  if (ctx.config.testMode) testModeRoutes(routes, ctx);
  // Faults are taken before a route runs, with the shared clock read in the same step; the
  // test-mode routes follow the shared clock on their own.
  if (ctx.config.testMode) injectFaults(routes, ctx);
  if (ctx.config.testMode && ctx.ledger.kind !== "sqlite") followSharedTestClock(routes, ctx);
  return routes;
}

/**
 * Test mode on a shared ledger: the test clock is the ledger's (docs/api.md, Test mode), so a
 * clock set through one server is every server's now. Each request reads it first, one round
 * trip paid only in test mode: the test-mode routes here, every other route together with its
 * faults (server/fault-injection.ts).
 */
function followSharedTestClock(routes: RouteTable, ctx: AppContext): void {
  for (const entry of routes.entries) {
    if (!entry.path.startsWith("/_test/")) continue;
    const run = entry.handler.run as (scope: RequestScope) => Response | Promise<Response>;
    // A ledger that cannot answer leaves this process's clock as it was; the route's own ledger
    // step then answers its 503.
    const proceed = (scope: RequestScope) => run(scope);
    entry.handler = {
      ...entry.handler,
      run: (scope: RequestScope) =>
        ctx.ledger.test.readClock().then(
          (ms) => {
            followClock(ctx, ms);
            return proceed(scope);
          },
          () => proceed(scope),
        ),
    };
  }
}

export function createApp(ctx: AppContext, routes: RouteTable = createRouteTable(ctx)): H3 {
  const app = new H3({
    silent: true,
    // Reached only for what no route handler caught: unmatched paths or methods and malformed
    // URLs (route handlers render their own errors through `handle`). Both are "no such resource".
    onError: (error, event) => {
      const status = (error as { status?: number }).status ?? 500;
      const scope = new WebScope(event.req);
      const refusal = isHeadTooLarge(event.req)
        ? headTooLarge("list")
        : status < 500
          ? new ApiError("not_found")
          : new ApiError("internal_error");
      if (refusal.code === "internal_error") ctx.requests.unexpected(scope, error);
      const res = renderError(refusal, scope.requestId);
      ctx.requests.record(scope, res.status, refusal.code, "unmatched");
      return res;
    },
  });
  for (const { method, path, handler } of routes.entries) {
    // A fast route's handler needs no h3 event, so it runs as well with one.
    const h = h3Handler(handler as RouteHandler<H3Scope>, routes.recording(path));
    if (method === "ALL") app.all(path, h);
    else app.on(method, path, h);
  }
  routes.bindDispatch(async (req) => app.fetch(req));
  if (ctx.config.testMode) rejectResetsInProcess(app);
  return app;
}
