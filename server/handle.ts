/**
 * The request wrapper every route uses: a request id on every response, errors rendered
 * through the one renderer, unexpected errors logged (never with a key) and hidden.
 *
 * `handle` describes a route for the route table (server/route-table.ts); two ways in run it with
 * one behaviour: `h3Handler` for the h3 app, and `direct` for `Bun.serve`'s own router, which the
 * hot list endpoint uses on Bun (server/listen.ts): it skips h3's event, URL and response
 * layers, about an eighth of a cached page's cost (test/bench/RESULTS.md).
 */
import { defineHandler, type H3Event } from "h3";
import { type Envelope, isApiError, renderError } from "./errors.ts";
import { headTooLarge, isHeadTooLarge } from "./request-head.ts";

export interface RequestScope {
  /** h3's event; null when Bun's router called the route directly. */
  event: H3Event | null;
  req: Request;
  url: URL;
  /** The raw query string with its "?", or "" (what `url.search` gives, without parsing the URL). */
  search: string;
  requestId: string;
  /** Headers decided early (e.g. rate-limit counters) that error responses carry too. */
  headers: Record<string, string>;
}

/** What an h3 route sees: the event is always there. */
export type H3Scope = RequestScope & { event: H3Event };

export type Route<S extends RequestScope = RequestScope> = (scope: S) => Response | Promise<Response>;

export interface RouteOptions {
  /** The route's own responses carry x-request-id already (errors are stamped here either way). */
  setsRequestId?: boolean;
}

export function newRequestId(): string {
  return crypto.randomUUID();
}

/** A route's function with how its errors render, as `handle` describes it (server/route-table.ts). */
export interface RouteHandler<S extends RequestScope = H3Scope> {
  run(scope: S): Response | Promise<Response>;
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
  return defineHandler((event) =>
    run<H3Scope>(
      { event, req: event.req, url: event.url, search: event.url.search, requestId: newRequestId(), headers: {} },
      route.run,
      route.envelope,
      route.options,
    ),
  );
}

/**
 * A direct route's scope: a class, so a request allocates one object (an object literal with a
 * getter would allocate the getter too, on every request).
 */
class DirectScope implements RequestScope {
  readonly event = null;
  readonly search: string;
  readonly requestId = newRequestId();
  readonly headers: Record<string, string> = {};
  #url: URL | undefined;

  constructor(
    readonly req: Request,
    private readonly raw: string,
  ) {
    const q = raw.indexOf("?");
    this.search = q < 0 || q === raw.length - 1 ? "" : raw.slice(q);
  }

  /** Parsed only when a route asks for more than the query string. */
  get url(): URL {
    return (this.#url ??= new URL(this.raw));
  }
}

/** The same route for a router that hands over the bare Request (Bun.serve `routes`). */
export function direct(route: RouteHandler<RequestScope>): (req: Request) => Response | Promise<Response> {
  const { run: fn, envelope, options } = route;
  return (req) => run(new DirectScope(req, req.url), fn, envelope, options);
}

function run<S extends RequestScope>(
  scope: S,
  fn: Route<S>,
  envelope: Envelope,
  options: RouteOptions,
): Response | Promise<Response> {
  if (isHeadTooLarge(scope.req)) return failed(scope, envelope, headTooLarge(envelope));
  let res: Response | Promise<Response>;
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

function done(scope: RequestScope, options: RouteOptions, res: Response): Response {
  // Asking a Response for its headers makes Bun build a Headers object for it: routes that
  // set the id themselves skip that.
  if (!options.setsRequestId && !res.headers.has("x-request-id")) res.headers.set("x-request-id", scope.requestId);
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
  console.error(
    `[${scope.requestId}] ${scope.req.method} ${scope.url.pathname}:`,
    err instanceof Error ? err.stack : err,
  );
}

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
  });
}
