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
const PLACEHOLDER_TAIL = '0,"venue":0}';

/**
 * The stored text: the Event's fields in key order, placeholders for the last two cut off, then the categories
 * as stored. The base URL, where present, starts the value of `eventUrl` or `ticketUrl`; JSON.stringify wrote
 * the placeholder escaped, and a quote inside a value is escaped too, so `,"eventUrl":"` matches only the key.
 */
export function servedJson(r: ServedColumns): string {
  const json = JSON.stringify({
    id: r.id,
    title: r.title,
    slug: r.slug,
    eventUrl: eventUrlFor(BASE, { id: r.id, slug: r.slug, eventUrl: r.event_url }),
    startDate: r.start_date,
    endDate: r.end_date,
    cost: r.cost,
    isFree: r.is_free === null ? null : r.is_free === 1,
    isSoldOut: r.is_sold_out === 1,
    isLowTickets: r.is_low_tickets === 1,
    age: r.age,
    ticketUrl: servedTicketUrl(BASE, { id: r.id, ticketDestination: r.ticket_destination, ticketUrl: r.ticket_url }),
    website: r.website,
    ticketLinkStatus: r.ticket_link_status,
    imageUrl: r.image_url,
    categories: 0,
    venue: 0,
  } satisfies Record<keyof Event, unknown>);
  return `${json.slice(0, -PLACEHOLDER_TAIL.length)}${r.categories},"venue":`
    .replace(',"eventUrl":"\\u0001', `,"eventUrl":"${BASE}`)
    .replace(',"ticketUrl":"\\u0001', `,"ticketUrl":"${BASE}`);
}

/** The base URL as it reads inside a JSON string, for `withBase` (`$` doubled: replaceAll reads `$&` and the like). */
export const jsonBase = (baseUrl: string) => JSON.stringify(baseUrl).slice(1, -1).replaceAll("$", "$$$$");

/** A stored served JSON for the service at a base URL (`jsonBase` of it). */
export const withBase = (stored: string, base: string) => stored.replaceAll(BASE, base);
