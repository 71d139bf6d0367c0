/**
 * Puts the app on a port. On Bun, `Bun.serve` hands each request straight to the app: h3's
 * portable `serve` (srvx) wraps every request and response, which cost the list endpoint about
 * a sixth of its throughput (issue 8, test/bench/RESULTS.md). Bun's router also takes the
 * app's direct routes (server/handle.ts `direct`), the same handlers without h3 in between;
 * every other path and method still goes to the app. Elsewhere (Node), h3's `serve`.
 */
import { serve, type H3 } from "h3";
import { directRoutesOf } from "./handle.ts";

export interface Listener {
  close(): Promise<void>;
}

export async function listen(app: H3, options: { port: number; hostname: string }): Promise<Listener> {
  if (typeof Bun !== "undefined") {
    // development: false — whatever NODE_ENV says, never Bun's error page with a stack trace.
    const server = Bun.serve({
      port: options.port,
      hostname: options.hostname,
      development: false,
      routes: directRoutesOf(app),
      fetch: (req) => app.fetch(req),
    });
    return { close: () => server.stop(true) };
  }
  const server = serve(app, { port: options.port, hostname: options.hostname, silent: true });
  await server.ready();
  return { close: () => server.close(true) };
}
