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
 *
 * Binding and serving are two steps (`bind`, then `serve`): a server binds its port before it
 * opens anything else, so `--port 0` is a real port by the time the base URL, the links and the
 * start-up line are made from it (docs/operations.md, The program). A request that arrives in
 * between waits for the app.
 */
import type { H3 } from "h3";
import { onBun } from "../db/runtime.ts";
import { direct, scoped } from "./handle.ts";
import type { Fetch, ScopedRoute } from "./node-http.ts";
import type { RouteTable } from "./route-table.ts";
import { settlesWithin } from "./settles-within.ts";

export interface Listener {
  /** The port bound: the one asked for, or the kernel's pick for port 0. */
  readonly port: number;
  /**
   * Stops accepting connections; requests in flight get `graceMs` to finish (none by default),
   * then every connection is closed. Resolves with the number of requests cut off.
   */
  close(graceMs?: number): Promise<number>;
}

/** A bound port that does not answer yet: requests wait until `serve` hands it the app. */
export interface BoundListener extends Listener {
  serve(app: H3, routes: RouteTable): void;
}

export interface ListenOptions {
  port: number;
  hostname: string;
  reusePort?: boolean;
  answersLate?: boolean;
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

/** Binds the port and starts serving `app` at once. */
export async function listen(app: H3, routes: RouteTable, options: ListenOptions): Promise<Listener> {
  const listener = await bind(options);
  listener.serve(app, routes);
  return listener;
}

/** A promise of the app's fetch, and the function that fulfils it. */
function appLater() {
  let fulfil!: (fetch: Fetch) => void;
  const later = new Promise<Fetch>((resolve) => (fulfil = resolve));
  return { later, fulfil };
}

export async function bind(options: ListenOptions): Promise<BoundListener> {
  if (onBun && options.answersLate) {
    // SO_REUSEPORT comes from the worker's environment there (server/node-http.ts).
    const { listenNodeHttp } = await import("./node-http.ts");
    const { later, fulfil } = appLater();
    let fetch: Fetch = (req) => later.then((f) => f(req));
    let fast: ReadonlyMap<string, ScopedRoute> = new Map();
    const server = await listenNodeHttp((req) => fetch(req), { get: (key) => fast.get(key) }, options);
    return {
      port: server.port,
      serve(app, routes) {
        fast = fastRouteMap(routes);
        fetch = (req) => app.fetch(req);
        fulfil(fetch);
      },
      close: (graceMs) => server.close(graceMs),
    };
  }
  if (onBun) return bindBun(options);
  return bindNode(options);
}

function bindBun(options: ListenOptions): BoundListener {
  const { later, fulfil } = appLater();
  // development: false — whatever NODE_ENV says, never Bun's error page with a stack trace.
  const server = Bun.serve({
    port: options.port,
    hostname: options.hostname,
    reusePort: options.reusePort ?? false,
    development: false,
    fetch: (req) => later.then((f) => f(req)),
  });
  return {
    port: server.port ?? options.port,
    serve(app, routes) {
      const fetch = (req: Request) => app.fetch(req);
      server.reload({ development: false, routes: bunRoutes(routes), fetch });
      fulfil(fetch);
    },
    async close(graceMs = 0) {
      if (graceMs > 0 && (await settlesWithin(server.stop(false), graceMs))) return 0;
      const cut = server.pendingRequests;
      await server.stop(true);
      return cut;
    },
  };
}

/** Node: h3's `serve` (srvx) over a front app whose fetch is the real app once there is one. */
async function bindNode(options: ListenOptions): Promise<BoundListener> {
  const { H3, serve } = await import("h3");
  const { later, fulfil } = appLater();
  let fetch: Fetch = (req) => later.then((f) => f(req));
  let inFlight = 0;
  const front = new H3();
  front.fetch = async (req: Request) => {
    inFlight++;
    try {
      return await fetch(req);
    } finally {
      inFlight--;
    }
  };
  // gracefulShutdown: false — the server's own signal handling stops it (server/serving.ts).
  const server = serve(front, {
    port: options.port,
    hostname: options.hostname,
    reusePort: options.reusePort ?? false,
    silent: true,
    gracefulShutdown: false,
  });
  await server.ready();
  // Plain HTTP/1.1 (no TLS, no http2 option): node's http.Server.
  const node = server.node?.server as import("node:http").Server | undefined;
  const address = node?.address();
  return {
    port: typeof address === "object" && address ? address.port : options.port,
    serve(app) {
      fetch = (req) => app.fetch(req);
      fulfil(fetch);
    },
    async close(graceMs = 0) {
      const closed = server.close(false);
      // Connections kept alive between requests are closed as they fall idle; the rest get the grace period.
      const idle = setInterval(() => node?.closeIdleConnections(), 100);
      try {
        if (graceMs > 0 && (await settlesWithin(closed, graceMs))) return 0;
        const cut = inFlight;
        node?.closeAllConnections();
        await closed;
        return cut;
      } finally {
        clearInterval(idle);
      }
    },
  };
}
