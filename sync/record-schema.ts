/**
 * The upstream record schema (docs/upstream-records.md), validated with valibot at the edge of
 * the sync path. The single source of truth for what a record may hold and for the messages a
 * bad line reports; sync/fast-records.ts accepts a subset of it faster.
 */
import * as v from "valibot";
import { EVENT_STATUSES, GEOCODE_PRECISIONS } from "../db/contract.ts";
import { TICKET_LINK_STATUSES } from "../db/event.ts";
import { parseIsoInstant } from "../db/instant.ts";

const id = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(Number.MAX_SAFE_INTEGER));
const seq = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(Number.MAX_SAFE_INTEGER));
const nullableString = v.nullable(v.string());
const isoDate = v.pipe(
  v.string(),
  v.check((s) => parseIsoInstant(s) !== null, "not an RFC 3339 date-time"),
);

export const VenueRecord = v.object({
  type: v.literal("venue"),
  seq,
  venue: v.object({
    id,
    name: v.string(),
    city: v.string(),
    state: v.pipe(v.string(), v.regex(/^[A-Z]{2}$/)),
    timezone: nullableString,
    latitude: v.nullable(v.pipe(v.number(), v.minValue(-90), v.maxValue(90))),
    longitude: v.nullable(v.pipe(v.number(), v.minValue(-180), v.maxValue(180))),
    geocodePrecision: v.nullable(v.picklist(GEOCODE_PRECISIONS)),
    visible: v.boolean(),
  }),
});

export const TicketLink = v.object({
  url: v.string(),
  seller: v.optional(nullableString, null),
  broken: v.optional(v.boolean(), false),
});

/**
 * Fields another deployment has already resolved for an event it serves (docs/upstream-records.md,
 * Already-resolved fields): kept as delivered instead of derived again from the raw fields.
 */
export const ResolvedFields = v.object({
  eventUrl: v.optional(nullableString, null),
  ticketUrl: v.optional(nullableString, null),
  cost: v.optional(nullableString, null),
  ticketLinkStatus: v.picklist(TICKET_LINK_STATUSES),
  /** Whether the event comes from an aggregator; null when the upstream did not say. */
  aggregator: v.optional(v.nullable(v.boolean()), null),
});

export const EventRecord = v.object({
  type: v.literal("event"),
  seq,
  event: v.object({
    id,
    venueId: id,
    title: v.string(),
    slug: v.string(),
    startDate: isoDate,
    endDate: v.nullable(isoDate),
    costText: v.optional(nullableString, null),
    isFree: v.optional(v.nullable(v.boolean()), null),
    isSoldOut: v.optional(v.boolean(), false),
    isLowTickets: v.optional(v.boolean(), false),
    age: v.optional(nullableString, null),
    website: v.optional(nullableString, null),
    websiteBroken: v.optional(v.boolean(), false),
    imageUrl: v.optional(nullableString, null),
    categories: v.optional(v.array(v.string()), []),
    source: v.pipe(v.string(), v.regex(/^[a-z0-9._:-]+$/)),
    status: v.picklist(EVENT_STATUSES),
    duplicateOf: v.optional(v.nullable(id), null),
    ticketed: v.optional(v.boolean(), true),
    ticketLinks: v.optional(v.array(TicketLink), []),
    resolved: v.optional(ResolvedFields),
  }),
});

export const DeleteRecord = v.object({
  type: v.literal("delete"),
  seq,
  entity: v.picklist(["event", "venue"]),
  id,
});

export const UpstreamRecord = v.variant("type", [VenueRecord, EventRecord, DeleteRecord]);
export type UpstreamRecord = v.InferOutput<typeof UpstreamRecord>;
export type VenueRecord = v.InferOutput<typeof VenueRecord>;
export type EventRecord = v.InferOutput<typeof EventRecord>;
export type ResolvedFields = v.InferOutput<typeof ResolvedFields>;
