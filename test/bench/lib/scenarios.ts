/**
 * The requests the benchmark sends. Each scenario is one method + path (+ body) and the
 * kind of key it needs. Paths that depend on the data (a real city, a real source prefix, a real
 * deep cursor, an event a handoff can be created for) are resolved against the running server
 * and the replica before any load is applied.
 */

import { LIST } from "../../../db/contract.ts";
import type { Db } from "../../../db/driver.ts";
import { ringDiagonalMiles } from "../../../db/geo.ts";
import { DATA, MANHATTAN } from "./config.ts";

export type Auth = "bench" | "trial" | "handoff";

export interface Scenario {
  id: string;
  title: string;
  method: "GET" | "POST";
  path: string;
  body?: string;
  auth: Auth;
  /** List scenarios are held to a share of their ceiling. */
  list: boolean;
  geo: boolean;
}

/**
 * A ring around Manhattan, [lat, lng] in ring order, about 50 miles across: the "50-mile
 * polygon", as wide as the API takes (bounding-box diagonal 49.1 mi; the limit, checked below, is
 * 50). It reaches from Westchester to Staten Island and from Newark to Nassau County.
 */
export const MANHATTAN_RING: Array<[number, number]> = [
  [41.02, -73.98],
  [40.89, -73.67],
  [40.57, -73.67],
  [40.48, -73.98],
  [40.57, -74.28],
  [40.89, -74.28],
];

export interface ResolvedInputs {
  state: string;
  city: string;
  sourcePrefix: string;
  deepCursor: string;
  handoffEventId: number;
}

export function buildScenarios(r: ResolvedInputs): Scenario[] {
  const diagonal = ringDiagonalMiles(MANHATTAN_RING);
  if (diagonal > LIST.maxPolygonDiagonalMiles)
    throw new Error(`bench polygon diagonal ${diagonal} mi exceeds the limit`);
  const polygon = encodeURIComponent(MANHATTAN_RING.map(([lat, lng]) => `${lat},${lng}`).join(";"));
  const q = (params: string) => `/v1/events?${params}`;
  const list = (id: string, title: string, path: string, geo = false): Scenario => ({
    id,
    title,
    method: "GET",
    path,
    auth: "bench",
    list: true,
    geo,
  });
  return [
    list("default-25", "default page (limit 25)", "/v1/events"),
    list("default-100", "default page, limit 100", q("limit=100")),
    list(
      "state-city",
      `state + city (${r.state}, ${r.city})`,
      q(`state=${r.state}&city=${encodeURIComponent(r.city)}`),
    ),
    list("source", `source prefix (${r.sourcePrefix})`, q(`source=${encodeURIComponent(r.sourcePrefix)}`)),
    list("exclude", "exclude sold-out and aggregators", q("exclude_sold_out=true&exclude_aggregators=true")),
    list("deep", `deep page (after ${DATA.deepPages.toLocaleString("en-US")} pages)`, q(`cursor=${r.deepCursor}`)),
    list(
      "circle",
      "25-mile circle over Manhattan",
      q(`lat=${MANHATTAN.lat}&lng=${MANHATTAN.lng}&radius_miles=25`),
      true,
    ),
    list("polygon", `polygon over Manhattan (${diagonal.toFixed(1)} mi diagonal)`, q(`polygon=${polygon}`), true),
    {
      id: "trial",
      title: "trial account page (keys rotated)",
      method: "GET",
      path: q("limit=25"),
      auth: "trial",
      list: true,
      geo: false,
    },
    {
      id: "handoff",
      title: "handoff creation (keys rotated)",
      method: "POST",
      path: "/v1/ticket-handoffs",
      body: JSON.stringify({ event_id: r.handoffEventId }),
      auth: "handoff",
      list: false,
      geo: false,
    },
  ];
}

/** The city with the most servable events in New York state, else in the busiest state. */
export function pickStateCity(replica: Db): { state: string; city: string } {
  const top = (where: string) =>
    replica
      .prepare<{ state: string; city: string }>(
        `SELECT state, city FROM snapshot WHERE ${where} GROUP BY state, city ORDER BY count(*) DESC LIMIT 1`,
      )
      .get();
  const pick = top("state = 'NY' AND city = 'New York'") ?? top("state = 'NY'") ?? top("1");
  if (!pick) throw new Error("the replica's snapshot is empty");
  return pick;
}

/**
 * A bare vendor name as a user sends it (`source=ticketmaster` matches `ticketmaster` and
 * `ticketmaster:discovery`): the vendor with the most servable events, which is also the
 * prefix whose rows are least selective and so the dearest to page through.
 */
export function pickSourcePrefix(replica: Db): string {
  const top = replica
    .prepare<{ vendor: string }>(
      `SELECT CASE WHEN instr(source, ':') > 0 THEN substr(source, 1, instr(source, ':') - 1) ELSE source END AS vendor
       FROM snapshot_sources WHERE source NOT LIKE 'scraper:%' GROUP BY vendor ORDER BY sum(events) DESC, vendor LIMIT 1`,
    )
    .get();
  if (!top) throw new Error("snapshot_sources is empty");
  return top.vendor;
}

/** Events a handoff could be created for: a usable supported seller link, not sold out, upcoming. */
export function handoffCandidates(replica: Db, sellers: readonly string[], nowMs: number): number[] {
  const list = sellers.map((s) => `'${s}'`).join(",");
  return replica
    .prepare<{ id: number }>(
      `SELECT s.id FROM snapshot s JOIN events e ON e.id = s.id
       WHERE s.sold_out = 0 AND s.start_ms > $after AND e.ticketed = 1
         AND EXISTS (SELECT 1 FROM json_each(e.ticket_links) l
                     WHERE json_extract(l.value, '$.broken') = 0 AND json_extract(l.value, '$.seller') IN (${list}))
       LIMIT 20`,
    )
    .all({ after: nowMs + 7 * 86_400_000 })
    .map((r) => r.id);
}
