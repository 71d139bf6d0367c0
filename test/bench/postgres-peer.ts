#!/usr/bin/env bun
/**
 * The PostgreSQL peer of the benchmark: a minimal Bun server that answers the default page of
 * `/v1/events` (the next 25 servable events in the 90-day window, in start order) straight
 * from the upstream tables, with a pool of connections and an index made for that query.
 *
 *   bun test/bench/postgres-peer.ts --port P --url postgres://…
 */
import { parseArgs } from "node:util";
import pg from "pg";

const { values } = parseArgs({ options: { port: { type: "string" }, url: { type: "string" } } });
const pool = new pg.Pool({ connectionString: values.url, max: 8 });

const PAGE = `
SELECT e.id, e.title, e.slug, e.start_date AS "startDate", e.end_date AS "endDate", e.cost_text AS "costText",
       e.is_free AS "isFree", e.is_sold_out AS "isSoldOut", e.is_low_tickets AS "isLowTickets", e.age, e.website,
       e.image_url AS "imageUrl", e.categories, e.source, e.ticket_links AS "ticketLinks",
       json_build_object('id', v.id, 'name', v.name, 'city', v.city, 'state', v.state, 'timezone', v.timezone,
                         'latitude', v.latitude, 'longitude', v.longitude) AS venue
FROM marquee.events e JOIN marquee.venues v ON v.id = e.venue_id
WHERE e.status = 'active' AND e.duplicate_of IS NULL AND v.visible
  AND coalesce(e.end_date, e.start_date) >= now() AND e.start_date <= now() + interval '90 days'
ORDER BY e.start_date, e.id
LIMIT 25`;

Bun.serve({
  port: Number(values.port),
  hostname: "127.0.0.1",
  async fetch(req) {
    const path = new URL(req.url).pathname;
    if (path === "/healthz") return new Response("ok");
    if (path !== "/v1/events") return new Response("not found", { status: 404 });
    const { rows } = await pool.query(PAGE);
    return Response.json({ data: rows, page: { nextCursor: null, hasMore: rows.length === 25, count: rows.length } });
  },
});
