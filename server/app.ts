/**
 * App wiring: one H3 app, one route module per route family.
 */
import { H3 } from "h3";
import type { AppContext } from "./context.ts";
import { ApiError, renderError } from "./errors.ts";
import { newRequestId } from "./handle.ts";
import { developerRoutes } from "./routes/developers.ts";
import { healthRoutes } from "./routes/health.ts";
import { eventsRoutes } from "./routes/events.ts";
import { handoffRoutes } from "./routes/handoffs.ts";
import { mcpRoutes } from "./routes/mcp.ts";
import { openapiRoutes } from "./routes/openapi.ts";
import { pageRoutes } from "./routes/pages.ts";
import { testModeRoutes } from "./routes/test-mode.ts";

export function createApp(ctx: AppContext): H3 {
  const app = new H3({
    silent: true,
    // Reached only for what no route handler caught: unmatched paths or methods and malformed
    // URLs (route handlers render their own errors through `handle`). Both are "no such resource".
    onError: (error) => {
      const status = (error as { status?: number }).status ?? 500;
      return renderError(status < 500 ? new ApiError("not_found") : error, newRequestId());
    },
  });
  healthRoutes(app, ctx);
  eventsRoutes(app, ctx);
  handoffRoutes(app, ctx);
  pageRoutes(app, ctx);
  developerRoutes(app, ctx);
  openapiRoutes(app, ctx);
  mcpRoutes(app, ctx);
  if (ctx.config.testMode) testModeRoutes(app, ctx);
  return app;
}
