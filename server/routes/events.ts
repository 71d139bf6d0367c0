/**
 * GET /v1/events: the list pipeline (server/list/service.ts), served by h3 and, on Bun, by
 * `Bun.serve`'s own router as well (a fast route of the route table).
 * HEAD /v1/events is the same pipeline's checks without a page (ListService.answerHead).
 */
import type { AppContext } from "../context.ts";
import { handle, type RequestScope } from "../handle.ts";
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
    handle((scope: RequestScope) => list.answerHead(scope), "list", { setsRequestId: true }),
  );
}
