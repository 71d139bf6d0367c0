#!/usr/bin/env bun
/**
 * The straightforward peer: what a developer writes in an afternoon over the same replica. One
 * `Bun.serve`, bun:sqlite, one SQL statement per request joining the snapshot's index to events
 * and venues, `Response.json`. It answers the state, state + city and circle queries of the unique
 * traffic with the same JSON fields as Marquee (no keys, limits, cursors or live re-checks), so
 * the benchmark can say what Marquee's design buys on traffic no cache has seen.
 *
 *   bun test/bench/peer.ts --port P --db REPLICA
 */
import { Database } from "bun:sqlite";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { port: { type: "string" }, db: { type: "string" } } });
if (!values.port || !values.db) {
  console.error("usage: bun test/bench/peer.ts --port P --db REPLICA");
  process.exit(2);
}

const db = new Database(values.db, { readonly: true });
const DAY = 86_400_000;
const MILES_PER_DEG = 69.05;

// The snapshot's own index, as a newcomer would read it: `long = 0` picks the ordered range of
// short events (long-running ones are missed, which only makes the peer faster than a correct one).
const FIELDS = `e.id, e.title, e.slug, e.start_date, e.end_date, e.cost, e.is_free, e.is_sold_out, e.is_low_tickets, e.age,
  e.ticket_destination, e.website, e.ticket_link_status, e.image_url, e.categories,
  v.id AS venue_id, v.name, v.city, v.state, v.timezone, v.latitude, v.longitude, v.geocode_precision`;
const PAGE = (where: string) =>
  db.query(`SELECT ${FIELDS} FROM snapshot s JOIN events e ON e.id = s.id JOIN venues v ON v.id = e.venue_id
    WHERE ${where} AND s.start_ms >= $after - $span AND s.start_ms <= $before AND s.end_ms >= $after
    ORDER BY s.start_ms, s.id LIMIT 25`);
const byState = PAGE("s.state = $state AND s.long = 0");
const byCity = PAGE("s.city = $city AND s.long = 0 AND s.state = $state");
const byBox =
  db.query(`SELECT ${FIELDS} FROM venue_rtree r JOIN snapshot s ON s.venue_id = r.id JOIN events e ON e.id = s.id
    JOIN venues v ON v.id = e.venue_id
    WHERE r.min_lat <= $maxLat AND r.max_lat >= $minLat AND r.min_lng <= $maxLng AND r.max_lng >= $minLng
      AND s.start_ms >= $after - $span AND s.start_ms <= $before AND s.end_ms >= $after
    ORDER BY s.start_ms, s.id LIMIT 25`);
const longest = (db.query("SELECT max(end_ms - start_ms) AS span FROM snapshot").get() as { span: number }).span;

type Row = Record<string, string | number | null>;

function miles(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const r = Math.PI / 180;
  const a =
    Math.sin(((lat2 - lat1) * r) / 2) ** 2 +
    Math.cos(lat1 * r) * Math.cos(lat2 * r) * Math.sin(((lng2 - lng1) * r) / 2) ** 2;
  return 2 * Math.atan2(Math.sqrt(a), Math.sqrt(1 - a)) * 3958.7613;
}

function toEvent(r: Row, base: string, distance: number | null) {
  return {
    id: r.id,
    title: r.title,
    slug: r.slug,
    eventUrl: `${base}/events/${r.id}/${r.slug}`,
    startDate: r.start_date,
    endDate: r.end_date,
    cost: r.cost,
    isFree: r.is_free === null ? null : r.is_free === 1,
    isSoldOut: r.is_sold_out === 1,
    isLowTickets: r.is_low_tickets === 1,
    age: r.age,
    ticketUrl: r.ticket_destination === null ? null : `${base}/v1/tickets/${r.id}`,
    website: r.website,
    ticketLinkStatus: r.ticket_link_status,
    imageUrl: r.image_url,
    categories: JSON.parse(String(r.categories)),
    venue: {
      id: r.venue_id,
      name: r.name,
      city: r.city,
      state: r.state,
      timezone: r.timezone,
      latitude: r.latitude,
      longitude: r.longitude,
      geocodePrecision: r.geocode_precision,
      distanceMiles: distance === null ? null : Math.round(distance * 100) / 100,
    },
  };
}

const server = Bun.serve({
  port: Number(values.port),
  hostname: "127.0.0.1",
  fetch(req) {
    const url = new URL(req.url);
    if (url.pathname === "/healthz") return new Response("ok");
    if (url.pathname !== "/v1/events") return new Response("not found", { status: 404 });
    const q = url.searchParams;
    const after = q.has("starts_after") ? Date.parse(q.get("starts_after")!) : Date.now();
    const lat = Number(q.get("lat"));
    const lng = Number(q.get("lng"));
    const radius = Number(q.get("radius_miles"));
    const geo = q.has("lat");
    const params = { after, before: after + (geo ? 30 : 90) * DAY, span: geo ? longest : DAY };
    let rows: Row[];
    if (geo) {
      const dLat = radius / MILES_PER_DEG;
      const dLng = radius / (MILES_PER_DEG * Math.cos((lat * Math.PI) / 180));
      rows = byBox.all({
        ...params,
        minLat: lat - dLat,
        maxLat: lat + dLat,
        minLng: lng - dLng,
        maxLng: lng + dLng,
      }) as Row[];
    } else if (q.has("city")) {
      rows = byCity.all({ ...params, state: q.get("state")!.toUpperCase(), city: q.get("city")! }) as Row[];
    } else {
      rows = byState.all({ ...params, state: (q.get("state") ?? "").toUpperCase() }) as Row[];
    }
    const base = url.origin;
    const data = rows.map((r) =>
      toEvent(r, base, geo ? miles(lat, lng, Number(r.latitude), Number(r.longitude)) : null),
    );
    return Response.json({ data, page: { nextCursor: null, hasMore: data.length === 25, count: data.length } });
  },
});

console.log(`peer listening on ${server.url}`);
