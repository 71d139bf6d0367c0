/**
 * One event as it may be shown right now, read from the live rows (not the snapshot): what a
 * ticket handoff checks and what the event and handoff pages render.
 */
import type { Db } from "./driver.ts";
import { SERVABLE_SQL } from "./snapshot.ts";

export interface TicketLinkRow {
  url: string;
  seller: string | null;
  broken: boolean;
}

export interface ServableEvent {
  id: number;
  title: string;
  slug: string;
  startDate: string;
  startMs: number;
  endDate: string | null;
  endMs: number | null;
  cost: string | null;
  isSoldOut: boolean;
  isLowTickets: boolean;
  age: string | null;
  website: string | null;
  categories: string[];
  ticketed: boolean;
  ticketDestination: string | null;
  /** An event of another deployment: its upstream's page and ticket redirect (db/replica.ts v11); else null. */
  eventUrl: string | null;
  ticketUrl: string | null;
  venue: { id: number; name: string; city: string; state: string; timezone: string | null };
  ticketLinks: TicketLinkRow[];
}

interface EventRow {
  id: number;
  title: string;
  slug: string;
  startDate: string;
  startMs: number;
  endDate: string | null;
  endMs: number | null;
  cost: string | null;
  isSoldOut: number;
  isLowTickets: number;
  age: string | null;
  website: string | null;
  categories: string;
  ticketed: number;
  ticketDestination: string | null;
  eventUrl: string | null;
  ticketUrl: string | null;
  ticketLinks: string | null;
  venueId: number;
  venueName: string;
  city: string;
  state: string;
  timezone: string | null;
}

/** The event when it is servable now (docs/upstream-records.md: active, not a duplicate, visible venue). */
export function readServableEvent(replica: Db, id: number): ServableEvent | undefined {
  const row = replica
    .prepare<EventRow>(
      `SELECT e.id, e.title, e.slug, e.start_date AS startDate, e.start_ms AS startMs, e.end_date AS endDate,
         e.end_ms AS endMs, e.cost, e.is_sold_out AS isSoldOut, e.is_low_tickets AS isLowTickets, e.age, e.website,
         e.categories, e.ticketed, e.ticket_destination AS ticketDestination, e.event_url AS eventUrl,
         e.ticket_url AS ticketUrl, e.ticket_links AS ticketLinks,
         v.id AS venueId, v.name AS venueName,
         v.city, v.state, v.timezone
       FROM events e JOIN venues v ON v.id = e.venue_id
       WHERE e.id = $id AND ${SERVABLE_SQL}`,
    )
    .get({ id });
  if (!row) return undefined;
  // Stored as validated upstream (replica v6): [{url, seller, broken}] in order, NULL for none.
  const links = JSON.parse(row.ticketLinks ?? "[]") as Array<{ url: string; seller: string | null; broken: boolean }>;
  return {
    id: row.id,
    title: row.title,
    slug: row.slug,
    startDate: row.startDate,
    startMs: row.startMs,
    endDate: row.endDate,
    endMs: row.endMs,
    cost: row.cost,
    isSoldOut: row.isSoldOut === 1,
    isLowTickets: row.isLowTickets === 1,
    age: row.age,
    website: row.website,
    categories: JSON.parse(row.categories) as string[],
    ticketed: row.ticketed === 1,
    ticketDestination: row.ticketDestination,
    eventUrl: row.eventUrl,
    ticketUrl: row.ticketUrl,
    venue: { id: row.venueId, name: row.venueName, city: row.city, state: row.state, timezone: row.timezone },
    ticketLinks: links.map((l) => ({ url: l.url, seller: l.seller, broken: l.broken })),
  };
}
