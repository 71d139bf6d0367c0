/**
 * Where demo events come from and where their tickets are sold: source tokens (docs/upstream-records.md,
 * every aggregator vendor, `scraper:` tokens per venue and per city, other platforms) and
 * seller URLs in each seller's real URL shape.
 */
import { AGGREGATOR_VENDORS } from "../../db/contract.ts";
import type { Random } from "./random.ts";

/** Aggregator sources, including sub-feeds and scrapers whose vendor is an aggregator. */
export const AGGREGATOR_SOURCES = [
  ...AGGREGATOR_VENDORS,
  "ticketmaster:discovery",
  "eventbrite:community",
  "livenation:clubs",
  "scraper:ticketmaster",
  "scraper:axs",
] as const;

/** Ticketing platforms and listing feeds that are not aggregators. */
export const PLATFORM_SOURCES = [
  "dice",
  "etix",
  "seetickets",
  "tixr",
  "songkick:us",
  "bandsintown",
  "meetup",
  "allevents",
  "universe",
  "showclix",
  "ticketweb",
  "humanitix",
  "ticketleap",
  "do512",
  "scraper:eventful_archive",
  "scraper:patch.com",
] as const;

/** Sellers whose links the demo writes; the last two are real but not supported for handoffs. */
const SELLER_URLS: Record<string, (slug: string, id: number, r: Random) => string> = {
  ticketmaster: (_s, _id, r) => `https://www.ticketmaster.com/event/${hex(r, 16).toUpperCase()}`,
  livenation: (s, id) => `https://www.livenation.com/event/vv${id}/${s}`,
  axs: (s, id) => `https://www.axs.com/events/${id}/${s}-tickets`,
  eventbrite: (s, id) => `https://www.eventbrite.com/e/${s}-tickets-${700000000000 + id}`,
  seatgeek: (s, id) => `https://seatgeek.com/${s}-tickets/${6000000 + id}`,
  stubhub: (s, id) => `https://www.stubhub.com/${s}-tickets/event/${150000000 + id}/`,
  vividseats: (s, id) => `https://www.vividseats.com/${s}-tickets/production/${4000000 + id}`,
  gametime: (_s, _id, r) => `https://gametime.co/events/${hex(r, 24)}`,
  dice: (s, _id, r) => `https://dice.fm/event/${hex(r, 6)}-${s}`,
  etix: (s, id) => `https://www.etix.com/ticket/p/${10000000 + id}/${s}`,
  seetickets: (s, id) => `https://wl.seetickets.us/event/${s}/${500000 + id}`,
  tixr: (s, id) => `https://www.tixr.com/e/${s}-${100000 + id}`,
  ticketweb: (s, id) => `https://www.ticketweb.com/event/${s}/${13000000 + id}`,
  brownpapertickets: (_s, id) => `https://www.brownpapertickets.com/event/${5000000 + id}`,
};

export const SELLERS = Object.keys(SELLER_URLS);

function hex(r: Random, length: number): string {
  let out = "";
  while (out.length < length) out += r.uint32().toString(16).padStart(8, "0");
  return out.slice(0, length);
}

/** The seller a source sells through, when its vendor is a seller. */
export function sellerOfSource(source: string): string | undefined {
  const rest = source.startsWith("scraper:") ? source.slice(8) : source;
  const vendor = rest.split(":")[0];
  return vendor in SELLER_URLS ? vendor : undefined;
}

export function sellerUrl(seller: string, slug: string, eventId: number, r: Random): string {
  return SELLER_URLS[seller](slug, eventId, r);
}

/** Upstream junk that must never be served as a destination (docs/upstream-records.md: absolute http(s) only). */
export const UNUSABLE_URLS = [
  "tickets at the door",
  "www.example-box-office.com/tickets",
  "ftp://tickets.example.com/event",
  "javascript:alert(1)",
  "https://user:secret@tickets.example.com/event",
  "mailto:boxoffice@example.com",
];
