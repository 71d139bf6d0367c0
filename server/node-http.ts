/**
 * The app on `node:http`: under Bun for a server whose responses mostly complete after an await
 * (a Redis ledger), and on Node. Bun's `Bun.serve` sends a response finished outside the request's
 * callback in a `send()` per header fragment; Bun's `node:http` writes it in one `sendmsg` (an
 * 18 kB answer: 290 against 23 µs of CPU, docs/perf-history.md, "Round 12").
 *
 * The route table's fast routes (found by exact method and path) get a scope over node's own
 * request (`NodeScope`: the Web Request built only if the route asks) and may reply in parts
 * (handle.ts `ReplyParts`), written as they are (docs/perf-history.md, "Round 15"). Every other
 * request becomes a Web `Request` for the h3 app, its `Response` written back whole.
 *
 * SO_REUSEPORT: Bun's `node:http` binds with it in a process it takes for a cluster worker
 * (`NODE_UNIQUE_ID` set), and offers no option for it otherwise; the `--workers` supervisor sets
 * that variable for its workers (server/workers.ts).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { listeningHost } from "./announce.ts";
import { type Reply, ReplyParts, type RequestScope, requestIdFrom, searchOf } from "./handle.ts";
import { isParsedHeadTooLarge } from "./request-head.ts";
import { pathOf } from "./request-record.ts";
import { settlesWithin } from "./settles-within.ts";

export type Fetch = (req: Request) => Response | Promise<Response>;
export type ScopedRoute = (scope: RequestScope) => Reply | Promise<Reply>;

export interface NodeHttpListener {
  /** The port bound: the one asked for, or the kernel's pick for port 0. */
  readonly port: number;
  /**
   * Stops accepting connections; requests in flight get `graceMs` to finish (none by default),
   * then every connection is closed. Resolves with the number of requests cut off.
   */
  close(graceMs?: number): Promise<number>;
}

/** The Web Request for a node:http request: the URL from its Host, its header fields, the body as a stream. */
function webRequest(req: IncomingMessage, fallbackHost: string): Request {
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  // node:http's object (repeated fields joined with ", ", as Headers.get joins them) makes the
  // Headers in one call, where an append per raw field cost several microseconds a request.
  return new Request(`http://${req.headers.host || fallbackHost}${req.url ?? "/"}`, {
    method,
    headers: req.headers as Record<string, string>,
    body: hasBody ? (Readable.toWeb(req) as unknown as ReadableStream<Uint8Array>) : undefined,
    duplex: "half", // a streamed request body needs it (the Fetch standard)
  } as RequestInit);
}

/**
 * A fast route's scope over node's request. Its URL is resolved against the listening address
 * (a fast route reads only its path and query); its Web Request, with the client's Host, is built
 * only when asked for.
 */
class NodeScope implements RequestScope {
  readonly startedMs = performance.now();
  readonly event = null;
  readonly search: string;
  readonly requestId: string;
  readonly headers: Record<string, string> = {};
  readonly takesParts = true;
  accountId: number | null = null;
  keyId: number | null = null;
  rows = 0;
  #url: URL | undefined;
  #req: Request | undefined;

  constructor(
    private readonly incoming: IncomingMessage,
    private readonly target: string,
    private readonly fallbackHost: string,
  ) {
    this.search = searchOf(target);
    const id = incoming.headers["x-request-id"];
    this.requestId = requestIdFrom(typeof id === "string" ? id : undefined);
  }

  get path(): string {
    return pathOf(this.target);
  }

  get url(): URL {
    this.#url ??= new URL(`http://${this.fallbackHost}${this.target}`);
    return this.#url;
  }

  get req(): Request {
    this.#req ??= webRequest(this.incoming, this.fallbackHost);
    return this.#req;
  }

  get method(): string {
    return this.incoming.method ?? "GET";
  }

  header(name: string): string | null {
    const value = this.incoming.headers[name];
    return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
  }

  /** Counted as a Web Request's head is (server/request-head.ts). */
  headTooLarge(): boolean {
    const { headers } = this.incoming;
    return isParsedHeadTooLarge(`http://${headers.host || this.fallbackHost}${this.target}`, headers);
  }
}

/** Writes a reply in one piece: the head and the whole body (none for HEAD), with its length. */
function writeWhole(
  res: ServerResponse,
  status: number,
  headers: Record<string, string | string[]>,
  body: string | Uint8Array | null,
  head: boolean,
): void {
  if (body !== null && !head) {
    headers["content-length"] = String(typeof body === "string" ? Buffer.byteLength(body) : body.byteLength);
  }
  res.writeHead(status, headers);
  if (body === null || head) res.end();
  else res.end(body);
}

/** Writes `response` in one piece, its body read whole. */
async function writeResponse(res: ServerResponse, response: Response, head: boolean): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 1) headers["set-cookie"] = cookies;
  let body: string | Uint8Array | null = null;
  if (response.body !== null && !head) {
    // Every body Marquee writes as text is JSON or HTML: read as text it skips a copy into an ArrayBuffer.
    body = isText(headers["content-type"]) ? await response.text() : new Uint8Array(await response.arrayBuffer());
  }
  writeWhole(res, response.status, headers, body, head);
}

/** The app's answer to the request as a Web Request; 400 for a head no Request can take (a Host that makes no URL, say). */
function answer(fetch: Fetch, req: IncomingMessage, fallbackHost: string): Response | Promise<Response> {
  let request: Request;
  try {
    request = webRequest(req, fallbackHost);
  } catch {
    return new Response(null, { status: 400 });
  }
  return fetch(request);
}

const isText = (type: string | string[] | undefined) =>
  typeof type === "string" && (type.startsWith("application/json") || type.startsWith("text/"));

export async function listenNodeHttp(
  fetch: Fetch,
  fastRoutes: Pick<ReadonlyMap<string, ScopedRoute>, "get">,
  options: { port: number; hostname: string },
): Promise<NodeHttpListener> {
  let fallbackHost = listeningHost(options.hostname, options.port);
  let inFlight = 0;
  const server = createServer(async (req, res) => {
    inFlight++;
    res.once("close", () => inFlight--);
    const target = req.url ?? "/";
    const route = fastRoutes.get(`${req.method ?? "GET"} ${target.split("?", 1)[0]}`);
    let reply: Reply;
    try {
      reply = await (route ? route(new NodeScope(req, target, fallbackHost)) : answer(fetch, req, fallbackHost));
    } catch {
      // The routes and the app render their own errors; this is only a last guard.
      reply = new Response(null, { status: 500 });
    }
    try {
      if (reply instanceof ReplyParts) writeWhole(res, reply.status, reply.headers, reply.body, req.method === "HEAD");
      else await writeResponse(res, reply, req.method === "HEAD");
    } catch {
      // A body that failed before anything was written (test mode's `reset` fault): the connection
      // closes without an answer. The socket itself: Bun's `res.destroy()` after an await still
      // sends a 200 head.
      if (res.socket) res.socket.destroy();
      else res.destroy();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port: options.port, host: options.hostname }, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  fallbackHost = listeningHost(options.hostname, port);
  return {
    port,
    async close(graceMs = 0) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Connections kept alive between requests are closed as they fall idle; the rest get the grace period.
      server.closeIdleConnections();
      const idle = setInterval(() => server.closeIdleConnections(), 100);
      try {
        if (graceMs > 0 && (await settlesWithin(closed, graceMs))) return 0;
        const cut = inFlight;
        server.closeAllConnections();
        await closed;
        return cut;
      } finally {
        clearInterval(idle);
      }
    },
  };
}
