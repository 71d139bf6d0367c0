/**
 * The app on `node:http` under Bun, for a server whose responses mostly complete after an await
 * (a Redis ledger: every list request waits for a script). Bun 1.4's `Bun.serve` sends a response
 * finished outside the request's own callback unbuffered: the status line, each header's name,
 * `: `, value and line end, and the body each go out in their own `send()`, so a page with a
 * dozen headers costs about fifty system calls and as many TCP segments for the client to read.
 * Measured on this project's two-core host (test/bench/RESULTS.md, "Round 12"): an 18 kB answer
 * with 12 headers after one `setImmediate` cost 290 µs of server CPU a request through
 * `Bun.serve` against 20 µs answered at once; Bun's `node:http` writes the same late answer in
 * one `sendmsg` (23 µs). A server that answers at once (the SQLite ledger) keeps `Bun.serve`
 * (server/listen.ts), which is a little cheaper there.
 *
 * Requests become the same Web `Request`s `Bun.serve` hands over, to the route table's fast
 * routes by exact path and method and to the h3 app otherwise, and their `Response`s are written
 * back with their status, headers and body.
 *
 * SO_REUSEPORT: Bun's `node:http` binds with it in a process it takes for a cluster worker
 * (`NODE_UNIQUE_ID` set), and offers no option for it otherwise; the `--workers` supervisor sets
 * that variable for its workers (server/workers.ts).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { Readable } from "node:stream";

export type Fetch = (req: Request) => Response | Promise<Response>;

export interface NodeHttpListener {
  close(): Promise<void>;
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

/** Writes `response` in one piece: the head and the whole body, with its length. */
async function writeResponse(res: ServerResponse, response: Response, head: boolean): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 1) headers["set-cookie"] = cookies;
  if (response.body === null || head) {
    res.writeHead(response.status, headers);
    res.end();
    return;
  }
  // Every body Marquee writes as text is JSON or HTML: read as text it skips a copy into an ArrayBuffer.
  const body = isText(headers["content-type"]) ? await response.text() : new Uint8Array(await response.arrayBuffer());
  headers["content-length"] = String(typeof body === "string" ? Buffer.byteLength(body) : body.byteLength);
  res.writeHead(response.status, headers);
  res.end(body);
}

const isText = (type: string | string[] | undefined) =>
  typeof type === "string" && (type.startsWith("application/json") || type.startsWith("text/"));

export async function listenNodeHttp(
  fetch: Fetch,
  fastRoutes: ReadonlyMap<string, Fetch>,
  options: { port: number; hostname: string },
): Promise<NodeHttpListener> {
  const fallbackHost = `${options.hostname}:${options.port}`;
  const server = createServer(async (req, res) => {
    let response: Response;
    let request: Request | undefined;
    try {
      request = webRequest(req, fallbackHost);
    } catch {
      // A head the Request cannot take (a Host that makes no URL, say).
      request = undefined;
    }
    if (request === undefined) response = new Response(null, { status: 400 });
    else {
      const path = req.url === undefined ? "/" : req.url.split("?", 1)[0];
      const route = fastRoutes.get(`${request.method} ${path}`);
      try {
        response = await (route ?? fetch)(request);
      } catch {
        // The routes and the app render their own errors; this is only a last guard.
        response = new Response(null, { status: 500 });
      }
    }
    try {
      await writeResponse(res, response, req.method === "HEAD");
    } catch {
      res.destroy();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port: options.port, host: options.hostname }, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
