/**
 * The request wrapper every route uses: a request id on every response, errors rendered
 * through the one renderer, unexpected errors logged (never with a key) and hidden.
 *
 * `handle` describes a route for the route table (server/route-table.ts); three ways in run it
 * with one behaviour: `h3Handler` for the h3 app, `direct` for `Bun.serve`'s own router, which the
 * hot list endpoint uses on Bun (server/listen.ts): it skips h3's event, URL and response
 * layers, about an eighth of a cached page's cost (test/bench/RESULTS.md); and `scoped` for the
 * `node:http` listener (server/node-http.ts), whose scope reads node's request as it is and
 * takes a route's reply in parts (`ReplyParts`), with no Web Request or Response in between.
 */
import { defineHandler, type H3Event } from "h3";
import { type Envelope, isApiError, renderError } from "./errors.ts";
import { headTooLarge, isHeadTooLarge } from "./request-head.ts";

export interface RequestScope {
  /** h3's event; null when a listener called the route directly. */
  event: H3Event | null;
  /** The Web Request (the node:http listener builds it only when a route asks). */
  req: Request;
  /** The request's method, read without the Web Request. */
  readonly method: string;
  url: URL;
  /** The raw query string with its "?", or "" (what `url.search` gives, without parsing the URL). */
  search: string;
  requestId: string;
  /** Headers decided early (e.g. rate-limit counters) that error responses carry too. */
  headers: Record<string, string>;
  /** One field of the request head, as `Headers.get` gives it (repeated fields joined by ", "), or null. */
  header(name: string): string | null;
  /** The request's URL and header fields exceed the head limit (server/request-head.ts). */
  headTooLarge(): boolean;
  /** The listener writes a reply given as `ReplyParts` itself; otherwise a route answers with a Response. */
  readonly takesParts: boolean;
}

/**
 * A reply as its status, header fields and body, for a listener that writes them itself
 * (`RequestScope.takesParts`): a route that answers often (the list endpoint) skips building a
 * Response that the listener would only take apart again.
 */
export class ReplyParts {
  constructor(
    readonly status: number,
    readonly headers: Record<string, string>,
    readonly body: string | Uint8Array<ArrayBuffer> | null,
  ) {}

  toResponse(): Response {
    return new Response(this.body, { status: this.status, headers: this.headers });
  }
}

export type Reply = Response | ReplyParts;

const asResponse = (reply: Reply): Response => (reply instanceof ReplyParts ? reply.toResponse() : reply);

/** What an h3 route sees: the event is always there. */
export type H3Scope = RequestScope & { event: H3Event };

export type Route<S extends RequestScope = RequestScope> = (scope: S) => Reply | Promise<Reply>;

export interface RouteOptions {
  /** The route's own responses carry x-request-id already (errors are stamped here either way). */
  setsRequestId?: boolean;
}

export function newRequestId(): string {
  return crypto.randomUUID();
}

/** A route's function with how its errors render, as `handle` describes it (server/route-table.ts). */
export interface RouteHandler<S extends RequestScope = H3Scope> {
  run(scope: S): Reply | Promise<Reply>;
  envelope: Envelope;
  options: RouteOptions;
}

/** Describes a route for the route table: the function, its error envelope and options. */
export function handle<S extends RequestScope = H3Scope>(
  run: Route<S>,
  envelope: Envelope = "list",
  options: RouteOptions = {},
): RouteHandler<S> {
  return { run, envelope, options };
}

/** The route as an h3 handler. */
export function h3Handler(route: RouteHandler<H3Scope>) {
  return defineHandler((event) => {
    const scope = new WebScope(event.req, undefined, event) as H3Scope;
    return respond(run<H3Scope>(scope, route.run, route.envelope, route.options));
  });
}

/** The query string of a request target or URL ("?…"), or "" when it has none or only "?". */
export function searchOf(target: string): string {
  const q = target.indexOf("?");
  return q < 0 || q === target.length - 1 ? "" : target.slice(q);
}

/**
 * The scope of a Web Request: a class, so a request allocates one object (an object literal with
 * a getter would allocate the getter too, on every request).
 */
export class WebScope implements RequestScope {
  readonly search: string;
  readonly requestId = newRequestId();
  readonly headers: Record<string, string> = {};
  readonly takesParts = false;
  #url: URL | undefined;

  constructor(
    readonly req: Request,
    private readonly raw: string = req.url,
    readonly event: H3Event | null = null,
  ) {
    this.#url = event?.url;
    this.search = event ? event.url.search : searchOf(raw);
  }

  /** Parsed only when a route asks for more than the query string. */
  get url(): URL {
    return (this.#url ??= new URL(this.raw));
  }

  get method(): string {
    return this.req.method;
  }

  header(name: string): string | null {
    return this.req.headers.get(name);
  }

  headTooLarge(): boolean {
    return isHeadTooLarge(this.req);
  }
}

/** The same route for a router that hands over the bare Request (Bun.serve `routes`). */
export function direct(route: RouteHandler<RequestScope>): (req: Request) => Response | Promise<Response> {
  const { run: fn, envelope, options } = route;
  return (req) => respond(run(new WebScope(req), fn, envelope, options));
}

/** The same route for a listener that makes the scope itself (server/node-http.ts). */
export function scoped(route: RouteHandler<RequestScope>): (scope: RequestScope) => Reply | Promise<Reply> {
  const { run: fn, envelope, options } = route;
  return (scope) => run(scope, fn, envelope, options);
}

/** A Web Request's answer: a reply in parts (only given to a scope that takes them) as a Response. */
function respond(reply: Reply | Promise<Reply>): Response | Promise<Response> {
  return reply instanceof Promise ? reply.then(asResponse) : asResponse(reply);
}

function run<S extends RequestScope>(
  scope: S,
  fn: Route<S>,
  envelope: Envelope,
  options: RouteOptions,
): Reply | Promise<Reply> {
  if (scope.headTooLarge()) return failed(scope, envelope, headTooLarge(envelope));
  let res: Reply | Promise<Reply>;
  try {
    res = fn(scope);
  } catch (err) {
    return failed(scope, envelope, err);
  }
  // A route that answers synchronously (the list endpoint) is finished without a promise.
  if (res instanceof Promise)
    return res.then(
      (r) => done(scope, options, r),
      (err) => failed(scope, envelope, err),
    );
  return done(scope, options, res);
}

function done(scope: RequestScope, options: RouteOptions, res: Reply): Reply {
  // Asking a Response for its headers makes Bun build a Headers object for it: routes that
  // set the id themselves skip that.
  if (options.setsRequestId) return res;
  if (res instanceof ReplyParts) res.headers["x-request-id"] ??= scope.requestId;
  else if (!res.headers.has("x-request-id")) res.headers.set("x-request-id", scope.requestId);
  return res;
}

function failed(scope: RequestScope, envelope: Envelope, err: unknown): Response {
  if (!isApiError(err)) logUnexpected(scope, err);
  const res = renderError(err, scope.requestId, envelope);
  for (const [k, v] of Object.entries(scope.headers)) if (!res.headers.has(k)) res.headers.set(k, v);
  return res;
}

function logUnexpected(scope: RequestScope, err: unknown): void {
  // The path only: query strings and headers may carry keys.
  console.error(`[${scope.requestId}] ${scope.method} ${scope.url.pathname}:`, err instanceof Error ? err.stack : err);
}

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
  });
}
