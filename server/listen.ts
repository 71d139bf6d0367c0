/**
 * Puts the app on a port, with one of two listeners; both hand the route table's fast routes
 * (the list endpoint) to the same handler without h3 in between, and the rest to the app:
 * `Bun.serve` when responses complete at once (the SQLite ledger: srvx's wrapping cost a sixth of
 * the list's throughput, test/bench/RESULTS.md), else `node:http` (server/node-http.ts: a Redis
 * ledger's late answers go out in one piece; and on Node).
 *
 * `reusePort`: a `--workers` worker shares the port (server/workers.ts); a lone server keeps it,
 * so a second one started by mistake fails to listen. The port is bound before anything else
 * opens, so `--port 0` is real when the base URL is made (docs/operations.md, The program);
 * requests that arrive before `serve` wait for the app.
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

/** Binds the port and starts serving `app` at once. */
export async function listen(app: H3, routes: RouteTable, options: ListenOptions): Promise<Listener> {
  const listener = await bind(options);
  listener.serve(app, routes);
  return listener;
}

/** Binds the port; requests wait for the app until `serve` gives it. */
export async function bind(options: ListenOptions): Promise<BoundListener> {
  let serveApp!: (fetch: Fetch) => void;
  const served = new Promise<Fetch>((resolve) => (serveApp = resolve));
  const waiting: Fetch = (req) => served.then((fetch) => fetch(req));
  if (onBun && !options.answersLate) return bindBun(options, waiting, serveApp);
  // SO_REUSEPORT comes from the worker's environment there (server/node-http.ts).
  const { listenNodeHttp } = await import("./node-http.ts");
  const fast = new Map<string, ScopedRoute>();
  const server = await listenNodeHttp(waiting, fast, options);
  return {
    port: server.port,
    serve(app, routes) {
      for (const { method, path, handler, fast: isFast } of routes.entries)
        if (isFast) fast.set(`${method} ${path}`, scoped(handler, routes.recording(path)));
      serveApp((req) => app.fetch(req));
    },
    close: (graceMs) => server.close(graceMs),
  };
}

function bindBun(options: ListenOptions, waiting: Fetch, serveApp: (fetch: Fetch) => void): BoundListener {
  // development: false — whatever NODE_ENV says, never Bun's error page with a stack trace.
  const { port, hostname, reusePort = false } = options;
  const server = Bun.serve({ port, hostname, reusePort, development: false, fetch: waiting });
  return {
    port: server.port ?? port,
    serve(app, routes) {
      const fetch = (req: Request) => app.fetch(req);
      const fast: Record<string, Record<string, Fetch>> = {};
      for (const { method, path, handler, fast: isFast } of routes.entries) {
        if (!isFast) continue;
        fast[path] ??= {};
        fast[path][method] = direct(handler, routes.recording(path));
      }
      server.reload({ development: false, routes: fast, fetch });
      serveApp(fetch);
    },
    async close(graceMs = 0) {
      if (graceMs > 0 && (await settlesWithin(server.stop(false), graceMs))) return 0;
      const cut = server.pendingRequests;
      await server.stop(true);
      return cut;
    },
  };
}
