/**
 * The request wrapper every route uses, on every listener (server/listen.ts): a request id on
 * every response (the client's `X-Request-Id` when usable, docs/operations.md, Request id), errors
 * through the one renderer, unexpected errors logged (never with a key) and hidden, and each
 * answered request recorded once (server/requests.ts: the request log, the metrics, the journal).
 */
import { defineHandler, type H3Event } from "h3";
import { type Envelope, isApiError, renderError } from "./errors.ts";
import { headTooLarge, isHeadTooLarge } from "./request-head.ts";
import { pathOf } from "./request-record.ts";

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
  /** The path without the query string, without parsing the URL. */
  readonly path: string;
  requestId: string;
  /** `performance.now()` when the request arrived. */
  readonly startedMs: number;
  /** Who asked and what they got, for the request's record, set by the stages that learn them. */
  accountId: number | null;
  keyId: number | null;
  rows: number;
  /** Headers decided early (e.g. rate-limit counters) that error responses carry too. */
  headers: Record<string, string>;
  /** One field of the request head, as `Headers.get` gives it (repeated fields joined by ", "), or null. */
  header(name: string): string | null;
  /** The request's URL and header fields exceed the head limit (server/request-head.ts). */
  headTooLarge(): boolean;
  /** The listener writes a reply given as `ReplyParts` itself; otherwise a route answers with a Response. */
  readonly takesParts: boolean;
}

/** A reply for a listener that writes it itself (`takesParts`): no Response built only to be taken apart. */
export class ReplyParts {
  constructor(
    readonly status: number,
    readonly headers: Record<string, string>,
    readonly body: string | Uint8Array<ArrayBuffer> | null,
  ) {}
}

export type Reply = Response | ReplyParts;

const asResponse = (r: Reply) =>
  r instanceof ReplyParts ? new Response(r.body, { status: r.status, headers: r.headers }) : r;

/** What an h3 route sees: the event is always there. */
export type H3Scope = RequestScope & { event: H3Event };

export type Route<S extends RequestScope = RequestScope> = (scope: S) => Reply | Promise<Reply>;

export interface RouteOptions {
  /** The route's own responses carry x-request-id already (errors are stamped here either way). */
  setsRequestId?: boolean;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** An API key fits the id's characters; one that holds a key's shape is never echoed or logged. */
const HOLDS_KEY = /mq_(?:live|builder|legacy)_/;

/** The request's id: the client's `X-Request-Id` when it is a usable one, else a new UUID. */
export function requestIdFrom(incoming: string | null | undefined): string {
  return incoming && REQUEST_ID.test(incoming) && !HOLDS_KEY.test(incoming) ? incoming : crypto.randomUUID();
}

/** Told of every answered request (server/requests.ts). */
export interface RequestRecorder {
  /** `route`: the route table's path pattern, or "unmatched". */
  record(scope: RequestScope, status: number, code: string | null, route: string): void;
  /** An error no route expected, before it is hidden behind a 500. */
  unexpected(scope: RequestScope, err: unknown): void;
}

/** Where a route's answered requests are recorded, and under which route label. */
export interface Recording {
  recorder: RequestRecorder;
  route: string;
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

/** The route for the h3 app, for `Bun.serve`'s router (the bare Request, no h3 layers) and for node:http. */
export function h3Handler(route: RouteHandler<H3Scope>, recording?: Recording) {
  return defineHandler((event) => respond(run(new WebScope(event.req, event) as H3Scope, route, recording)));
}

export function direct(route: RouteHandler<RequestScope>, recording?: Recording) {
  return (req: Request): Response | Promise<Response> => respond(run(new WebScope(req), route, recording));
}

export function scoped(route: RouteHandler<RequestScope>, recording?: Recording) {
  return (scope: RequestScope): Reply | Promise<Reply> => run(scope, route, recording);
}

/** The query string of a request target or URL ("?…"), or "" when it has none or only "?". */
export function searchOf(target: string): string {
  const q = target.indexOf("?");
  return q < 0 || q === target.length - 1 ? "" : target.slice(q);
}

/** The scope of a Web Request (a class: one allocation a request, getters included). */
export class WebScope implements RequestScope {
  readonly startedMs = performance.now();
  readonly search: string;
  readonly requestId: string;
  readonly headers: Record<string, string> = {};
  readonly takesParts = false;
  accountId: number | null = null;
  keyId: number | null = null;
  rows = 0;
  /** Parsed only when a route asks for more than the path and the query string. */
  #url: URL | undefined;

  constructor(
    readonly req: Request,
    readonly event: H3Event | null = null,
  ) {
    this.#url = event?.url;
    this.search = event ? event.url.search : searchOf(req.url);
    this.requestId = requestIdFrom(req.headers.get("x-request-id"));
  }

  get path(): string {
    return this.#url ? this.#url.pathname : pathOf(this.req.url);
  }

  get url(): URL {
    this.#url ??= new URL(this.req.url);
    return this.#url;
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

function respond(reply: Reply | Promise<Reply>): Response | Promise<Response> {
  return reply instanceof Promise ? reply.then(asResponse) : asResponse(reply);
}

/** Every route, on every listener: the route's reply or its error rendered, and the request recorded once. */
function run<S extends RequestScope>(scope: S, route: RouteHandler<S>, recording?: Recording): Reply | Promise<Reply> {
  const { envelope, options } = route;
  if (scope.headTooLarge()) return failed(scope, envelope, headTooLarge(envelope), recording);
  let res: Reply | Promise<Reply>;
  try {
    res = route.run(scope);
  } catch (err) {
    return failed(scope, envelope, err, recording);
  }
  // A route that answers synchronously (the list endpoint on SQLite) is finished without a promise.
  if (!(res instanceof Promise)) return done(scope, options, res, recording);
  return res.then(
    (r) => done(scope, options, r, recording),
    (err) => failed(scope, envelope, err, recording),
  );
}

function done(scope: RequestScope, options: RouteOptions, res: Reply, recording: Recording | undefined): Reply {
  // Asking a Response for its headers makes Bun build a Headers object: routes that set the id skip that.
  if (!options.setsRequestId) {
    if (res instanceof ReplyParts) res.headers["x-request-id"] ??= scope.requestId;
    else if (!res.headers.has("x-request-id")) res.headers.set("x-request-id", scope.requestId);
  }
  recording?.recorder.record(scope, res.status, null, recording.route);
  return res;
}

function failed(scope: RequestScope, envelope: Envelope, err: unknown, recording: Recording | undefined): Response {
  const known = isApiError(err);
  if (!known) {
    // The path only: query strings and headers may carry keys.
    if (recording) recording.recorder.unexpected(scope, err);
    else console.error(`[${scope.requestId}] ${scope.method} ${scope.path}:`, err instanceof Error ? err.stack : err);
  }
  const res = renderError(err, scope.requestId, envelope);
  for (const [k, v] of Object.entries(scope.headers)) if (!res.headers.has(k)) res.headers.set(k, v);
  recording?.recorder.record(scope, res.status, known ? err.code : "internal_error", recording.route);
  return res;
}

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
  });
}
