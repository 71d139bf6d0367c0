/**
 * The request wrapper every route uses: a request id on every response, errors rendered
 * through the one renderer, unexpected errors logged (never with a key) and hidden.
 */
import { defineHandler, type H3Event } from "h3";
import { isApiError, renderError, type Envelope } from "./errors.ts";

export interface RequestScope {
  event: H3Event;
  req: Request;
  url: URL;
  requestId: string;
  /** Headers decided early (e.g. rate-limit counters) that error responses carry too. */
  headers: Record<string, string>;
}

export function newRequestId(): string {
  return crypto.randomUUID();
}

export function handle(fn: (scope: RequestScope) => Response | Promise<Response>, envelope: Envelope = "list") {
  return defineHandler((event) => {
    const scope: RequestScope = { event, req: event.req, url: event.url, requestId: newRequestId(), headers: {} };
    const done = (res: Response) => {
      // Hot routes put it in the Response's own headers; setting it again would cost a copy.
      if (!res.headers.has("x-request-id")) res.headers.set("x-request-id", scope.requestId);
      return res;
    };
    const failed = (err: unknown) => {
      if (!isApiError(err)) logUnexpected(scope, err);
      const res = renderError(err, scope.requestId, envelope);
      for (const [k, v] of Object.entries(scope.headers)) if (!res.headers.has(k)) res.headers.set(k, v);
      return res;
    };
    // A route that answers synchronously (the list endpoint) is finished without a promise.
    try {
      const res = fn(scope);
      return res instanceof Promise ? res.then(done, failed) : done(res);
    } catch (err) {
      return failed(err);
    }
  });
}

function logUnexpected(scope: RequestScope, err: unknown): void {
  // The path only: query strings and headers may carry keys.
  console.error(`[${scope.requestId}] ${scope.req.method} ${scope.url.pathname}:`, err instanceof Error ? err.stack : err);
}

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
  });
}
