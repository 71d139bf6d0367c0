/**
 * Puts the app on a port. On Bun, `Bun.serve` hands each request straight to the app: h3's
 * portable `serve` (srvx) wraps every request and response, which cost the list endpoint about
 * a sixth of its throughput (test/bench/RESULTS.md). Bun's router also takes the route table's
 * fast routes (server/route-table.ts), the same handlers without h3 in between; every other path
 * and method still goes to the app. Elsewhere (Node), h3's `serve`.
 *
 * `answersLate`: most responses complete after an await (a Redis ledger). On Bun those go through
 * `node:http` instead, which sends a late response in one piece (server/node-http.ts).
 *
 * `reusePort`: the worker of a `--workers` supervisor shares the port with its siblings
 * (SO_REUSEPORT, server/workers.ts); a lone server keeps the port to itself, so a second one
 * started by mistake fails to listen instead of splitting the traffic.
 */
import { type H3, serve } from "h3";
import { onBun } from "../db/runtime.ts";
import { direct, scoped } from "./handle.ts";
import { type Fetch, listenNodeHttp, type ScopedRoute } from "./node-http.ts";
import type { RouteTable } from "./route-table.ts";

export interface Listener {
  close(): Promise<void>;
}

type BunRoutes = Record<string, Record<string, Fetch>>;

/** The table's fast routes by `METHOD path`, for the node:http listener. */
export function fastRouteMap(routes: RouteTable): Map<string, ScopedRoute> {
  const out = new Map<string, ScopedRoute>();
  for (const { method, path, handler, fast } of routes.entries)
    if (fast) out.set(`${method} ${path}`, scoped(handler, routes.recording(path)));
  return out;
}

/** The table's fast routes in the shape of `Bun.serve`'s `routes`. */
export function bunRoutes(routes: RouteTable): BunRoutes {
  const out: BunRoutes = {};
  for (const { method, path, handler, fast } of routes.entries) {
    if (fast) (out[path] ??= {})[method] = direct(handler, routes.recording(path));
  }
  return out;
}

export async function listen(
  app: H3,
  routes: RouteTable,
  options: { port: number; hostname: string; reusePort?: boolean; answersLate?: boolean },
): Promise<Listener> {
  if (onBun && options.answersLate) {
    // SO_REUSEPORT comes from the worker's environment there (server/node-http.ts).
    return listenNodeHttp((req) => app.fetch(req), fastRouteMap(routes), options);
  }
  if (onBun) {
    // development: false — whatever NODE_ENV says, never Bun's error page with a stack trace.
    const server = Bun.serve({
      port: options.port,
      hostname: options.hostname,
      reusePort: options.reusePort ?? false,
      development: false,
      routes: bunRoutes(routes),
      fetch: (req) => app.fetch(req),
    });
    return { close: () => server.stop(true) };
  }
  const server = serve(app, {
    port: options.port,
    hostname: options.hostname,
    reusePort: options.reusePort ?? false,
    silent: true,
  });
  await server.ready();
  return { close: () => server.close(true) };
}
