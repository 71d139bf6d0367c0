/**
 * GET /v1/events: the list pipeline (server/list/service.ts), served by h3 and, on Bun, by
 * `Bun.serve`'s own router as well (a fast route of the route table).
 *
 * HEAD /v1/events runs GET's checks and answers GET's status and headers without a body, but
 * charges only the request-rate units (docs/api.md, Listing events): it starts no trial, reserves
 * and counts no rows and reads no page, since it delivers none.
 */
import type { AppContext } from "../context.ts";
import { handle, type RequestScope } from "../handle.ts";
import type { ListService } from "../list/service.ts";
import type { RouteTable } from "../route-table.ts";

export function eventsRoutes(routes: RouteTable, ctx: AppContext): void {
  const list = ctx.list;
  routes.fast(
    "GET",
    "/v1/events",
    handle((scope: RequestScope) => list.answer(scope), "list", { setsRequestId: true }),
  );
  routes.fast(
    "HEAD",
    "/v1/events",
    handle((scope: RequestScope) => answerHead(list, ctx.clock.now(), scope), "list", { setsRequestId: true }),
  );
}

function answerHead(list: ListService, nowMs: number, scope: RequestScope): Response {
  const request = list.request(scope);
  const access = list.authorize(scope, request);
  const parsed = list.parse(request, access);
  list.window(parsed, access, nowMs);
  access.describe();
  return new Response(null, { status: 200, headers: list.caches.headers.for(scope) });
}
