/**
 * Response headers of the OpenAPI document: docs/api.md, the
 * handoff error table (Retry-After: 60) and "every response carries x-request-id". Which
 * header may appear on which status is decided here once; the conformance suite checks every
 * response against it in both directions (required ones present, none undeclared).
 */
import { HANDOFF, RATE, TRIAL } from "../db/contract.ts";

export interface HeaderObject {
  description: string;
  required?: boolean;
  schema: Record<string, unknown>;
}

const int = { type: "integer", minimum: 0 } as const;

export const HEADERS = {
  "x-request-id": {
    description: "Identifies the request; equals `requestId` in error bodies.",
    schema: { type: "string", minLength: 1 },
  },
  "Cache-Control": { description: "Never cache list pages.", schema: { type: "string", enum: ["private, no-store"] } },
  "X-RateLimit-Limit": {
    description: `Request-rate capacity of the bucket that admitted the request; 401, 402, 431, 500 and 503 policy_unavailable report the published ${RATE.publishedLimit}.`,
    schema: int,
  },
  "X-RateLimit-Remaining": { description: "Whole request units left. Absence means unknown, not zero.", schema: int },
  "X-RateLimit-Reset": { description: "Unix seconds when the bucket is full again.", schema: int },
  "Retry-After": { description: "Delta-seconds until a retry can succeed.", schema: int },
  "WWW-Authenticate": { description: "Bearer challenge.", schema: { type: "string", pattern: "^Bearer" } },
  "X-RowBudget-Limit": { description: "Rolling 24-hour delivered-row budget of the account.", schema: int },
  "X-RowBudget-Remaining": { description: "Rows left in the rolling 24-hour budget.", schema: int },
  "X-DataApi-Access": { description: "Present on trial responses.", schema: { type: "string", enum: ["trial"] } },
  "X-Trial-RowBudget-Limit": { description: `Total trial rows (${TRIAL.rows}).`, schema: int },
  "X-Trial-RowBudget-Remaining": { description: "Trial rows left, net of in-flight requests.", schema: int },
  "X-Trial-Expires-At": { description: "UTC end of the trial.", schema: { type: "string", format: "date-time" } },
} as const satisfies Record<string, Omit<HeaderObject, "required">>;

export type HeaderName = keyof typeof HEADERS;

/**
 * Header names the conformance suite holds to the document (lower-case): the API's own
 * headers. Cache-Control is ordinary HTTP, fixed by docs/api.md only on list pages.
 */
export const DOCUMENTED_HEADER_FAMILY = Object.keys(HEADERS)
  .filter((h) => h !== "Cache-Control")
  .map((h) => h.toLowerCase());

const TRIAL_HEADERS = [
  "X-DataApi-Access",
  "X-Trial-RowBudget-Limit",
  "X-Trial-RowBudget-Remaining",
  "X-Trial-Expires-At",
] as const;

function pick(required: readonly HeaderName[], optional: readonly HeaderName[]): Record<string, HeaderObject> {
  const out: Record<string, HeaderObject> = {};
  for (const name of required) out[name] = { ...HEADERS[name], required: true };
  for (const name of optional) out[name] = { ...HEADERS[name], required: false };
  return out;
}

/** `GET /v1/events`, by status. */
export function listResponseHeaders(status: number): Record<string, HeaderObject> {
  // Every list response carries the request id and the request-rate capacity.
  const always: HeaderName[] = ["x-request-id", "X-RateLimit-Limit"];
  // Trial responses carry the trial headers once the account is known (after 401).
  const trial = status === 401 ? [] : TRIAL_HEADERS;
  switch (status) {
    case 200:
      return pick(
        [...always, "Cache-Control"],
        ["X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RowBudget-Limit", "X-RowBudget-Remaining", ...trial],
      );
    case 401:
      return pick([...always, "WWW-Authenticate"], []);
    case 429:
      // rate_limited: rate counters; row_budget_exhausted: X-RowBudget-*; trial_capacity_reserved: X-Trial-*.
      return pick(
        [...always, "Retry-After"],
        ["X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RowBudget-Limit", "X-RowBudget-Remaining", ...trial],
      );
    case 503:
      return pick([...always, "Retry-After"], trial);
    default:
      return pick(always, trial);
  }
}

/** `POST /v1/ticket-handoffs`, by status. */
export function handoffResponseHeaders(status: number): Record<string, HeaderObject> {
  const retry = {
    ...HEADERS["Retry-After"],
    description: `Seconds until a retry can succeed (${HANDOFF.retryAfterS}).`,
  };
  switch (status) {
    case 401:
      return pick(["x-request-id", "WWW-Authenticate"], []);
    case 429:
    case 503:
      return { ...pick(["x-request-id"], []), "Retry-After": { ...retry, required: true } };
    default:
      return pick(["x-request-id"], []);
  }
}

/** Public endpoints (the document itself). */
export function publicResponseHeaders(): Record<string, HeaderObject> {
  return pick(["x-request-id"], []);
}
