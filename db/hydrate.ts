/**
 * Hydration of a selected page (CONTRACT §4): the page's ids are read from the LIVE `events` and
 * `venues` rows in one query, and rows that are no longer servable — cancelled, deleted, spam,
 * demoted to a duplicate, venue hidden or gone — are dropped. A row whose live fields no longer
 * satisfy the request (rescheduled out of the window, now sold out under exclude_sold_out, …)
 * is dropped too, so a page never contradicts its own filters. Survivors keep snapshot order.
 *
 * Served fields were derived at apply time (sync/derive.ts); this module only shapes them into
 * the spec's Event (every key present, optional ones null, `venue` always an object).
 */
import { AGGREGATOR_VENDORS } from "./contract.ts";
import type { Db } from "./driver.ts";
import { venueSetOf, type PageFilter, type PagePosition } from "./events-query.ts";
import { SERVABLE_SQL } from "./snapshot.ts";

export interface Venue {
  id: number;
  name: string;
  city: string;
  state: string;
  timezone: string | null;
  latitude: number | null;
  longitude: number | null;
  geocodePrecision: string | null;
  distanceMiles: number | null;
}

export interface Event {
  id: number;
  title: string;
  slug: string;
  eventUrl: string;
  startDate: string;
  endDate: string | null;
  cost: string | null;
  isFree: boolean | null;
  isSoldOut: boolean;
  isLowTickets: boolean;
  age: string | null;
  ticketUrl: string | null;
  website: string | null;
  ticketLinkStatus: string;
  imageUrl: string | null;
  categories: string[];
  venue: Venue;
}

interface Row {
  id: number;
  title: string;
  slug: string;
  start_date: string;
  start_ms: number;
  end_date: string | null;
  end_ms: number | null;
  cost: string | null;
  is_free: number | null;
  is_sold_out: number;
  is_low_tickets: number;
  age: string | null;
  ticket_destination: string | null;
  website: string | null;
  ticket_link_status: string;
  image_url: string | null;
  categories: string;
  source: string;
  vendor: string;
  venue_id: number;
  venue_name: string;
  city: string;
  state: string;
  timezone: string | null;
  latitude: number | null;
  longitude: number | null;
  geocode_precision: string | null;
}

const HYDRATE_SQL = `
SELECT e.id, e.title, e.slug, e.start_date, e.start_ms, e.end_date, e.end_ms, e.cost, e.is_free, e.is_sold_out,
       e.is_low_tickets, e.age, e.ticket_destination, e.website, e.ticket_link_status, e.image_url, e.categories,
       e.source, e.vendor, v.id AS venue_id, v.name AS venue_name, v.city, v.state, v.timezone, v.latitude,
       v.longitude, v.geocode_precision
FROM json_each($ids) j
JOIN events e ON e.id = j.value
JOIN venues v ON v.id = e.venue_id
WHERE ${SERVABLE_SQL}`;

const aggregators = new Set<string>(AGGREGATOR_VENDORS);

/** `_` matches any one character, everything else itself (CONTRACT §5), as a prefix. */
export function sourceMatcher(tokens: readonly string[]): (source: string) => boolean {
  const pattern = tokens.map((t) => t.replace(/[.]/g, "\\.").replaceAll("_", ".")).join("|");
  const re = new RegExp(`^(?:${pattern})`);
  return (source) => re.test(source);
}

function stillMatches(r: Row, f: PageFilter, venues: ReadonlySet<number> | null, source: ((s: string) => boolean) | null): boolean {
  const end = Math.max(r.end_ms ?? r.start_ms, r.start_ms);
  return (
    end >= f.afterMs &&
    r.start_ms <= f.beforeMs &&
    (f.state === null || r.state === f.state) &&
    (f.city === null || r.city === f.city) &&
    !(f.excludeSoldOut && r.is_sold_out === 1) &&
    !(f.excludeAggregators && aggregators.has(r.vendor)) &&
    (venues === null || venues.has(r.venue_id)) &&
    (source === null || source(r.source))
  );
}

export interface Hydration {
  baseUrl: string;
  /** Circle queries: unrounded miles per venue id. */
  distanceMiles: ReadonlyMap<number, number> | null;
}

function toEvent(r: Row, h: Hydration): Event {
  const distance = h.distanceMiles?.get(r.venue_id);
  return {
    id: r.id,
    title: r.title,
    slug: r.slug,
    eventUrl: `${h.baseUrl}/events/${r.id}/${encodeURIComponent(r.slug)}`,
    startDate: r.start_date,
    endDate: r.end_date,
    cost: r.cost,
    isFree: r.is_free === null ? null : r.is_free === 1,
    isSoldOut: r.is_sold_out === 1,
    isLowTickets: r.is_low_tickets === 1,
    age: r.age,
    ticketUrl: r.ticket_destination === null ? null : `${h.baseUrl}/t/${r.id}`,
    website: r.website,
    ticketLinkStatus: r.ticket_link_status,
    imageUrl: r.image_url,
    categories: JSON.parse(r.categories) as string[],
    venue: {
      id: r.venue_id,
      name: r.venue_name,
      city: r.city,
      state: r.state,
      timezone: r.timezone,
      latitude: r.latitude,
      longitude: r.longitude,
      geocodePrecision: r.geocode_precision,
      distanceMiles: distance === undefined ? null : Math.round(distance * 100) / 100,
    },
  };
}

/** Reads the page's live rows and shapes the survivors, in page order. */
export function hydratePage(db: Db, keys: readonly PagePosition[], filter: PageFilter, h: Hydration): Event[] {
  if (keys.length === 0) return [];
  const rows = db.prepare<Row>(HYDRATE_SQL).all({ ids: JSON.stringify(keys.map((k) => k.id)) });
  // Page order is snapshot order; placing rows by id is cheaper than sorting in SQL.
  const byId = new Map<number, Row>();
  for (const r of rows) byId.set(r.id, r);
  const venues = filter.venueIds === null ? null : venueSetOf(filter.venueIds);
  const source = filter.sources === null ? null : sourceMatcher(filter.sources);
  const out: Event[] = [];
  for (const k of keys) {
    const r = byId.get(k.id);
    if (r && stillMatches(r, filter, venues, source)) out.push(toEvent(r, h));
  }
  return out;
}
