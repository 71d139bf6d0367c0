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
import { CATEGORIES, GEOCODE_PRECISIONS, HANDOFF } from "../db/contract.ts";

const id = v.pipe(v.number(), v.integer(), v.minValue(1));
const utc = (description: string) => v.pipe(v.string(), v.isoTimestamp(), v.description(description));
const nullableUri = (description: string) => v.pipe(v.nullable(v.pipe(v.string(), v.url())), v.description(description));

/** Spec "Resources": ticketLinkStatus values. */
export const TICKET_LINK_STATUSES = ["available", "unavailable", "missing"] as const;

/** Spec "Venue (nested in Event)". */
export const Venue = v.pipe(
  v.strictObject({
    id,
    name: v.string(),
    city: v.pipe(v.string(), v.description("Matched exactly and case-sensitively by the `city` filter.")),
    state: v.pipe(v.string(), v.regex(/^[A-Z]{2}$/), v.description("Two-letter code.")),
    timezone: v.pipe(
      v.nullable(v.string()),
      v.description("IANA zone, needed to render local time because startDate/endDate are UTC. null if unresolved."),
    ),
    latitude: v.nullable(v.pipe(v.number(), v.minValue(-90), v.maxValue(90))),
    longitude: v.nullable(v.pipe(v.number(), v.minValue(-180), v.maxValue(180))),
    geocodePrecision: v.pipe(
      v.nullable(v.picklist(GEOCODE_PRECISIONS)),
      v.description(
        "Only `street` identifies the building. `zip` and `city` are centroids that can be miles from the door; " +
          "`unknown` is a source-supplied unclassified point; treat null as cautiously as `unknown`.",
      ),
    ),
    distanceMiles: v.pipe(
      v.nullable(v.pipe(v.number(), v.minValue(0))),
      v.description(
        "Great-circle miles from the query's lat/lng, rounded to 0.01. Set only on radius queries; null otherwise.",
      ),
    ),
  }),
  v.title("Venue"),
);

/** Spec "Event": every key present, optional fields null, never omitted. */
export const Event = v.pipe(
  v.strictObject({
    id,
    title: v.string(),
    slug: v.string(),
    eventUrl: v.pipe(v.string(), v.url(), v.description("Canonical event page on the service. Use it for citing and sharing.")),
    startDate: utc("UTC start."),
    endDate: v.pipe(v.nullable(v.pipe(v.string(), v.isoTimestamp())), v.description("UTC end, or null.")),
    cost: v.pipe(
      v.nullable(v.string()),
      v.description("Resolved display cost: `Free` when admission resolves to free. null does NOT imply free admission."),
    ),
    isFree: v.pipe(
      v.nullable(v.boolean()),
      v.description("true = explicitly free; false = known non-free; null = no trustworthy admission evidence."),
    ),
    isSoldOut: v.pipe(v.boolean(), v.description("True when the source reports sold out.")),
    isLowTickets: v.pipe(v.boolean(), v.description("True when the source reports limited remaining tickets.")),
    age: v.pipe(v.nullable(v.string()), v.description("Free text.")),
    ticketUrl: nullableUri("Service-issued ticket redirect; null when no safe destination exists or the event is not ticketed."),
    website: nullableUri("Sanitized external event website, with confirmed-broken links removed."),
    ticketLinkStatus: v.pipe(
      v.picklist(TICKET_LINK_STATUSES),
      v.description("`available` (a safe destination can be served), `unavailable` (stored candidates unusable), `missing` (none supplied)."),
    ),
    imageUrl: v.nullable(v.string()),
    categories: v.pipe(v.array(v.picklist(CATEGORIES)), v.description("Zero or more values of the 21-category taxonomy.")),
    venue: v.pipe(v.nullable(Venue), v.description("Always an object on /v1/events.")),
  }),
  v.title("Event"),
);

/** Spec "Page (envelope)". */
export const PageInfo = v.pipe(
  v.strictObject({
    nextCursor: v.pipe(
      v.nullable(v.string()),
      v.description("Opaque token continuing from the last snapshot row of the page (not the last delivered row)."),
    ),
    hasMore: v.pipe(v.boolean(), v.description("False when the window is exhausted. Page on this, never on data.length.")),
    count: v.pipe(v.number(), v.integer(), v.minValue(0), v.description("Rows delivered on this page; not a total match count.")),
  }),
  v.title("PageInfo"),
);

export const Page = v.pipe(v.strictObject({ data: v.array(Event), page: PageInfo }), v.title("Page"));

/** Spec "POST /v1/ticket-handoffs": exactly one field. */
export const TicketHandoffRequest = v.pipe(
  v.strictObject({
    event_id: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(HANDOFF.maxEventId)),
  }),
  v.title("TicketHandoffRequest"),
);

/** Spec "Ticket handoff (response of POST)". */
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

/** Spec "Error envelope": `{ error: { code, message, requestId } }`; code narrowed per status. */
export function listErrorSchema(codes: readonly [string, ...string[]]) {
  return v.strictObject({
    error: v.strictObject({
      code: v.picklist(codes),
      message: v.pipe(v.string(), v.description("Prose; may change. Branch on `code`.")),
      requestId: v.pipe(v.string(), v.description("Equals the x-request-id header.")),
    }),
  });
}

/** Spec "Ticket-handoff errors": `{ error: { code, message }, request_id, event_url? }`. */
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

export type Event = v.InferOutput<typeof Event>;
export type Venue = v.InferOutput<typeof Venue>;
export type Page = v.InferOutput<typeof Page>;
export type TicketHandoff = v.InferOutput<typeof TicketHandoff>;
