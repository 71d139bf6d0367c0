/**
 * Each event's served JSON, derived at apply time and stored in `events.served_json` (docs/upstream-records.md,
 * "Derived fields"), so hydration reads one column instead of building it (docs/architecture.md, "From record to
 * response bytes"): the API's Event as JSON.stringify writes it, up to and including `"venue":`, with one raw
 * U+0001 where the service's base URL goes. JSON.stringify escapes every control character, so no other raw one
 * is ever in the text.
 */
import { eventUrlFor, servedTicketUrl } from "./contract.ts";
import type { Event } from "./event.ts";

/** The replica columns the served JSON is made of; `categories` is the JSON array apply stored. */
export type ServedColumns = Record<"id" | "is_sold_out" | "is_low_tickets", number> &
  Record<"title" | "slug" | "start_date" | "categories", string> &
  Record<"end_date" | "cost" | "age" | "ticket_destination" | "website" | "image_url", string | null> &
  Record<"event_url" | "ticket_url", string | null> &
  Record<"is_free", number | null> & { ticket_link_status: Event["ticketLinkStatus"] };

export const SERVED_COLUMN_NAMES = [
  "id",
  "title",
  "slug",
  "start_date",
  "end_date",
  "cost",
  "is_free",
  "is_sold_out",
  "is_low_tickets",
  "age",
  "ticket_destination",
  "event_url",
  "ticket_url",
  "website",
  "ticket_link_status",
  "image_url",
  "categories",
] as const satisfies readonly (keyof ServedColumns)[];

const BASE = "\u0001";

/** A nullable string as JSON. */
const text = (v: string | null) => (v === null ? "null" : JSON.stringify(v));

/** A served URL as JSON: one this service makes starts with the base URL's placeholder, left raw. */
const url = (v: string | null) =>
  v === null ? "null" : v.startsWith(BASE) ? `"${BASE}${JSON.stringify(v.slice(1)).slice(1)}` : JSON.stringify(v);

/**
 * The stored text: the Event's fields in key order, each value as JSON.stringify writes it (the
 * categories as apply stored them), written field by field: stringifying an object and putting the
 * placeholders back took 2.1 µs an event against 1.2–1.3 (docs/perf-history.md, "Round 29").
 */
export function servedJson(r: ServedColumns): string {
  const eventUrl = eventUrlFor(BASE, { id: r.id, slug: r.slug, eventUrl: r.event_url });
  const ticketUrl = servedTicketUrl(BASE, {
    id: r.id,
    ticketDestination: r.ticket_destination,
    ticketUrl: r.ticket_url,
  });
  const isFree = r.is_free === null ? "null" : r.is_free === 1;
  return (
    `{"id":${r.id},"title":${text(r.title)},"slug":${text(r.slug)},"eventUrl":${url(eventUrl)},` +
    `"startDate":${text(r.start_date)},"endDate":${text(r.end_date)},"cost":${text(r.cost)},"isFree":${isFree},` +
    `"isSoldOut":${r.is_sold_out === 1},"isLowTickets":${r.is_low_tickets === 1},"age":${text(r.age)},` +
    `"ticketUrl":${url(ticketUrl)},"website":${text(r.website)},"ticketLinkStatus":${text(r.ticket_link_status)},` +
    `"imageUrl":${text(r.image_url)},"categories":${r.categories},"venue":`
  );
}

/** The base URL as it reads inside a JSON string, for `withBase` (`$` doubled: replaceAll reads `$&` and the like). */
export const jsonBase = (baseUrl: string) => JSON.stringify(baseUrl).slice(1, -1).replaceAll("$", "$$$$");

/** A stored served JSON for the service at a base URL (`jsonBase` of it). */
export const withBase = (stored: string, base: string) => stored.replaceAll(BASE, base);
