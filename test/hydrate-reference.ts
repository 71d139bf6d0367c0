/**
 * The reference the kept JSON path (db/hydrate.ts `hydratePageJson`) is compared to, written apart from it: one plain
 * read of the page's live rows and the Event built field by field as docs/api.md, "The Event object" defines it. A
 * row no longer servable (event not active, a duplicate, venue hidden or gone) or no longer matching the filter or a
 * geo filter's live re-check is dropped; survivors keep page order.
 */

import { eventUrlFor, servedTicketUrl } from "../db/contract.ts";
import type { Db } from "../db/driver.ts";
import type { Event, Venue } from "../db/event.ts";
import type { Hydration } from "../db/hydrate.ts";
import { isAggregator, type PageFilter, type PagePosition, rowMatcher, servedEndMs } from "../db/page-filter.ts";

interface LiveRow {
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
  event_url: string | null;
  ticket_url: string | null;
  website: string | null;
  ticket_link_status: Event["ticketLinkStatus"];
  image_url: string | null;
  categories: string;
  source: string;
  vendor: string;
  status: string;
  duplicate_of: number | null;
  venue_id: number;
  v_name: string;
  v_city: string;
  v_state: string;
  v_timezone: string | null;
  v_latitude: number | null;
  v_longitude: number | null;
  v_precision: Venue["geocodePrecision"];
  v_visible: number;
}

const LIVE_ROW_SQL = `SELECT e.*, v.name AS v_name, v.city AS v_city, v.state AS v_state, v.timezone AS v_timezone,
  v.latitude AS v_latitude, v.longitude AS v_longitude, v.geocode_precision AS v_precision, v.visible AS v_visible
FROM json_each($ids) j JOIN events e ON e.id = j.value JOIN venues v ON v.id = e.venue_id`;

/** The page's events as served now, in page order. */
export function hydratePage(db: Db, keys: readonly PagePosition[], filter: PageFilter, h: Hydration): Event[] {
  const matches = rowMatcher(filter);
  const out: Event[] = [];
  const rows = new Map<number, LiveRow>();
  for (const r of db.prepare<LiveRow>(LIVE_ROW_SQL).all({ ids: JSON.stringify(keys.map((k) => k.id)) }))
    rows.set(r.id, r);
  for (const { id } of keys) {
    const r = rows.get(id);
    if (r?.status !== "active" || r.duplicate_of !== null || r.v_visible !== 1) continue;
    const row = {
      startMs: r.start_ms,
      endMs: servedEndMs(r.start_ms, r.end_ms),
      state: r.v_state,
      city: r.v_city,
      source: r.source,
      venueId: r.venue_id,
      soldOut: r.is_sold_out === 1,
      aggregator: isAggregator(r.vendor),
    };
    if (!matches(row)) continue;
    if (h.geo && !h.geo.admits(r.venue_id, r.v_latitude, r.v_longitude, r.v_precision)) continue;
    const miles =
      h.geo && r.v_latitude !== null && r.v_longitude !== null ? h.geo.miles(r.v_latitude, r.v_longitude) : undefined;
    out.push({
      id: r.id,
      title: r.title,
      slug: r.slug,
      eventUrl: eventUrlFor(h.baseUrl, { id: r.id, slug: r.slug, eventUrl: r.event_url }),
      startDate: r.start_date,
      endDate: r.end_date,
      cost: r.cost,
      isFree: r.is_free === null ? null : r.is_free === 1,
      isSoldOut: r.is_sold_out === 1,
      isLowTickets: r.is_low_tickets === 1,
      age: r.age,
      ticketUrl: servedTicketUrl(h.baseUrl, {
        id: r.id,
        ticketDestination: r.ticket_destination,
        ticketUrl: r.ticket_url,
      }),
      website: r.website,
      ticketLinkStatus: r.ticket_link_status,
      imageUrl: r.image_url,
      categories: JSON.parse(r.categories),
      venue: {
        id: r.venue_id,
        name: r.v_name,
        city: r.v_city,
        state: r.v_state,
        timezone: r.v_timezone,
        latitude: r.v_latitude,
        longitude: r.v_longitude,
        geocodePrecision: r.v_precision,
        distanceMiles: miles === undefined ? null : Math.round(miles * 100) / 100,
      },
    });
  }
  return out;
}
