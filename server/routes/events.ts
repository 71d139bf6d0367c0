/**
 * GET and HEAD /v1/events: the list's one stage list (server/list/service.ts), served by h3 and, on
 * Bun, by `Bun.serve`'s own router as well (a fast route of the route table).
 */
import type { AppContext } from "../context.ts";
import { handle, type RequestScope } from "../handle.ts";
import type { RouteTable } from "../route-table.ts";

export function eventsRoutes(routes: RouteTable, ctx: AppContext): void {
  const list = (head: boolean) =>
    handle((scope: RequestScope) => ctx.list.answer(scope, head), "list", { setsRequestId: true });
  routes.fast("GET", "/v1/events", list(false));
  routes.fast("HEAD", "/v1/events", list(true));
}
