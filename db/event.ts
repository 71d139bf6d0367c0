/**
 * The Event as served, declared once: the valibot schema, from which the TypeScript type, the
 * OpenAPI document (server/openapi.ts), the MCP tools' output schemas and the conformance tests all
 * come (docs/api.md, The Event object). db/hydrate.ts writes exactly this shape.
 *
 * Objects are strict: every key is present on every event, so an extra key is a defect the
 * conformance suite should catch.
 */
import * as v from "valibot";
import { CATEGORIES, GEOCODE_PRECISIONS } from "./contract.ts";

export const id = v.pipe(v.number(), v.integer(), v.minValue(1));
export const utc = (description: string) => v.pipe(v.string(), v.isoTimestamp(), v.description(description));
const nullableUri = (description: string) =>
  v.pipe(v.nullable(v.pipe(v.string(), v.url())), v.description(description));

/** docs/api.md, The Event object: ticketLinkStatus values. */
export const TICKET_LINK_STATUSES = ["available", "unavailable", "missing"] as const;

/** docs/api.md, The Event object: the venue nested in every Event. */
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

/** docs/api.md, The Event object: every key present, optional fields null, never omitted. */
export const Event = v.pipe(
  v.strictObject({
    id,
    title: v.string(),
    slug: v.string(),
    eventUrl: v.pipe(
      v.string(),
      v.url(),
      v.description("Canonical event page on the service. Use it for citing and sharing."),
    ),
    startDate: utc("UTC start."),
    endDate: v.pipe(v.nullable(v.pipe(v.string(), v.isoTimestamp())), v.description("UTC end, or null.")),
    cost: v.pipe(
      v.nullable(v.string()),
      v.description(
        "Resolved display cost: `Free` when admission resolves to free. null does NOT imply free admission.",
      ),
    ),
    isFree: v.pipe(
      v.nullable(v.boolean()),
      v.description("true = explicitly free; false = known non-free; null = no trustworthy admission evidence."),
    ),
    isSoldOut: v.pipe(v.boolean(), v.description("True when the source reports sold out.")),
    isLowTickets: v.pipe(v.boolean(), v.description("True when the source reports limited remaining tickets.")),
    age: v.pipe(v.nullable(v.string()), v.description("Free text.")),
    ticketUrl: nullableUri(
      "Service-issued ticket redirect; null when no safe destination exists or the event is not ticketed.",
    ),
    website: nullableUri("Sanitized external event website, with confirmed-broken links removed."),
    ticketLinkStatus: v.pipe(
      v.picklist(TICKET_LINK_STATUSES),
      v.description(
        "`available` (a safe destination can be served), `unavailable` (stored candidates unusable), `missing` (none supplied).",
      ),
    ),
    imageUrl: v.nullable(v.string()),
    categories: v.pipe(
      v.array(v.picklist(CATEGORIES)),
      v.description("Zero or more values of the 21-category taxonomy."),
    ),
    venue: v.pipe(v.nullable(Venue), v.description("Always an object on /v1/events.")),
  }),
  v.title("Event"),
);

export type Venue = v.InferOutput<typeof Venue>;
export type Event = v.InferOutput<typeof Event>;
