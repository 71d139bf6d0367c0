/**
 * One error type, one envelope, one renderer. List endpoint and most errors:
 *   { error: { code, message, requestId } }
 * Ticket handoffs:
 *   { error: { code, message }, request_id, event_url? }
 * The developer portal's JSON answers use the list envelope without the list's rate-limit and
 * bearer headers (it authenticates by session cookie).
 * Unexpected errors never leak their message: they render as 500 internal_error.
 */
import {
  HANDOFF_ERRORS,
  type HandoffErrorCode,
  LIST_ERRORS,
  type ListErrorCode,
  PORTAL_ERRORS,
  type PortalErrorCode,
  RATE,
} from "../db/contract.ts";

export type Envelope = "list" | "handoff" | "portal";

type ErrorCode = ListErrorCode | HandoffErrorCode | PortalErrorCode;

const DEFAULT_MESSAGES: Partial<Record<ErrorCode, string>> = {
  invalid_api_key: "A valid API key is required in the Authorization header as 'Bearer <key>'.",
  not_found: "No such resource.",
  internal_error: "An unexpected error occurred. It is safe to retry.",
};

export class ApiError extends Error {
  readonly status: number;
  readonly headers: Record<string, string>;
  constructor(
    readonly code: ErrorCode,
    message?: string,
    options: {
      status?: number;
      headers?: Record<string, string>;
      envelope?: Envelope;
      eventUrl?: string;
    } = {},
  ) {
    super(message ?? DEFAULT_MESSAGES[code] ?? code.replaceAll("_", " "));
    this.envelope = options.envelope ?? "list";
    this.status =
      options.status ??
      (this.envelope === "handoff"
        ? HANDOFF_ERRORS[code as HandoffErrorCode]
        : this.envelope === "portal"
          ? PORTAL_ERRORS[code as PortalErrorCode]
          : LIST_ERRORS[code as ListErrorCode]) ??
      500;
    this.headers = { ...options.headers };
    this.eventUrl = options.eventUrl;
  }
  readonly envelope: Envelope;
  readonly eventUrl: string | undefined;
}

export const isApiError = (e: unknown): e is ApiError => e instanceof ApiError;

/** Renders any thrown value as the API's envelope. */
export function renderError(err: unknown, requestId: string, envelope: Envelope = "list"): Response {
  const e = isApiError(err) ? err : new ApiError("internal_error", undefined, { envelope });
  const headers = new Headers(e.headers);
  headers.set("content-type", "application/json; charset=utf-8");
  headers.set("x-request-id", requestId);
  headers.set("cache-control", "no-store");
  // docs/api.md, Headers: 401, 431 and 500 report the published limit (402 too, set where it is
  // raised); a 431 is answered before the key is read.
  if ((e.status === 401 || e.status === 431 || e.status === 500) && e.envelope === "list") {
    headers.set("x-ratelimit-limit", String(RATE.publishedLimit));
  }
  if (e.status === 401 && e.envelope !== "portal") headers.set("www-authenticate", "Bearer");
  const body =
    e.envelope === "handoff"
      ? {
          error: { code: e.code, message: e.message },
          request_id: requestId,
          ...(e.eventUrl ? { event_url: e.eventUrl } : {}),
        }
      : { error: { code: e.code, message: e.message, requestId } };
  return new Response(JSON.stringify(body), { status: e.status, headers });
}
