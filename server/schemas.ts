/**
 * The response resources of docs/api.md as valibot schemas: Event, Venue, Page, TicketHandoff and
 * both error envelopes. The OpenAPI document (server/openapi.ts), the MCP tools' output schemas
 * and the conformance tests all read these, so the published shapes cannot drift from what
 * tests hold the server to.
 *
 * Objects are strict: docs/api.md lists every key ("Every key is present on every event"), so an
 * extra key is a defect the conformance suite should catch.
 */
import * as v from "valibot";
import { HANDOFF } from "../db/contract.ts";

export { Event, type Event as EventShape, TICKET_LINK_STATUSES, Venue } from "../db/event.ts";

import { Event, utc } from "../db/event.ts";

/** The page envelope (docs/api.md, Pagination). */
export const PageInfo = v.pipe(
  v.strictObject({
    nextCursor: v.pipe(
      v.nullable(v.string()),
      v.description("Opaque token continuing from the last snapshot row of the page (not the last delivered row)."),
    ),
    hasMore: v.pipe(
      v.boolean(),
      v.description("False when the window is exhausted. Page on this, never on data.length."),
    ),
    count: v.pipe(
      v.number(),
      v.integer(),
      v.minValue(0),
      v.description("Rows delivered on this page; not a total match count."),
    ),
  }),
  v.title("PageInfo"),
);

export const Page = v.pipe(v.strictObject({ data: v.array(Event), page: PageInfo }), v.title("Page"));

/** The body of `POST /v1/ticket-handoffs`: exactly one field (docs/api.md, Ticket handoffs). */
export const TicketHandoffRequest = v.pipe(
  v.strictObject({
    event_id: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(HANDOFF.maxEventId)),
  }),
  v.title("TicketHandoffRequest"),
);

/** A created ticket handoff (docs/api.md, Ticket handoffs). */
export const TicketHandoff = v.pipe(
  v.strictObject({
    handoff_id: v.pipe(v.string(), v.minLength(1), v.description("Opaque reference. Not an order or reservation id.")),
    event_id: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(HANDOFF.maxEventId)),
    event_url: v.pipe(v.string(), v.url(), v.description("Canonical event page.")),
    handoff_url: v.pipe(
      v.string(),
      v.url(),
      v.description("Short-lived confirmation page. Opening or previewing it records no affiliate click."),
    ),
    expires_at: utc(`The handoff lives ${HANDOFF.lifetimeMs / 60_000} minutes.`),
    booking_mode: v.literal("external_checkout"),
    requires_user_action: v.literal(true),
  }),
  v.title("TicketHandoff"),
);

/** The error envelope `{ error: { code, message, requestId } }` (docs/api.md, Errors); code narrowed per status. */
export function listErrorSchema(codes: readonly [string, ...string[]]) {
  return v.strictObject({
    error: v.strictObject({
      code: v.picklist(codes),
      message: v.pipe(v.string(), v.description("Prose; may change. Branch on `code`.")),
      requestId: v.pipe(v.string(), v.description("Equals the x-request-id header.")),
    }),
  });
}

/** Ticket-handoff errors: `{ error: { code, message }, request_id, event_url? }` (docs/api.md, Ticket handoffs). */
export function handoffErrorSchema(codes: readonly [string, ...string[]], withEventUrl = false) {
  const error = v.strictObject({
    code: v.picklist(codes),
    message: v.pipe(v.string(), v.description("Prose; may change. Branch on `code`.")),
  });
  const requestId = v.pipe(v.string(), v.description("Also in the X-Request-Id header."));
  return withEventUrl
    ? v.strictObject({ error, request_id: requestId, event_url: v.pipe(v.string(), v.url()) })
    : v.strictObject({ error, request_id: requestId });
}

export type Page = v.InferOutput<typeof Page>;
export type TicketHandoff = v.InferOutput<typeof TicketHandoff>;
