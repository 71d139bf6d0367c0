/**
 * Deterministic geo fixtures and a brute-force reference for the geo tests: every venue is
 * checked with @turf/distance or @turf/boolean-point-in-polygon, nothing is pre-filtered, so
 * the R-tree search in db/geo.ts has an independent answer to match.
 */
import { booleanPointInPolygon } from "@turf/boolean-point-in-polygon";
import { distance } from "@turf/distance";
import { earthRadius } from "@turf/helpers";

export type Precision = "street" | "zip" | "city" | "unknown" | null;

export interface RefVenue {
  id: number;
  lat: number | null;
  lng: number | null;
  precision: Precision;
  visible: boolean;
  state: string;
}

export type Circle = { kind: "circle"; lat: number; lng: number; radiusMiles: number };
export type Ring = Array<[number, number]>;

/** mulberry32: small, seedable, same numbers on every runtime. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const RADIUS_MILES = earthRadius / 1609.344;

/** The point `miles` away from (lat, lng) along initial bearing `bearingDeg` (spherical earth). */
export function destination(lat: number, lng: number, miles: number, bearingDeg: number): [number, number] {
  const d = miles / RADIUS_MILES;
  const t = (bearingDeg * Math.PI) / 180;
  const p1 = (lat * Math.PI) / 180;
  const l1 = (lng * Math.PI) / 180;
  const p2 = Math.asin(Math.sin(p1) * Math.cos(d) + Math.cos(p1) * Math.sin(d) * Math.cos(t));
  const l2 = l1 + Math.atan2(Math.sin(t) * Math.sin(d) * Math.cos(p1), Math.cos(d) - Math.sin(p1) * Math.sin(p2));
  let lngOut = (l2 * 180) / Math.PI;
  if (lngOut > 180) lngOut -= 360;
  if (lngOut < -180) lngOut += 360;
  return [(p2 * 180) / Math.PI, lngOut];
}

export const PLACES = {
  manhattan: [40.758, -73.9855],
  kansasCity: [39.0997, -94.5786], // the KS/MO line runs at about -94.6078 here
  anchorage: [61.2181, -149.9003],
  honolulu: [21.3069, -157.8583],
  aleutians: [51.6, 179.95], // circles here cross the antimeridian
  northPole: [89.9, 0],
} as const;

/** Circles whose rims get venues placed a hair inside and outside (R-tree box edges). */
export const RIM_CIRCLES: Circle[] = [
  { kind: "circle", lat: 40.758, lng: -73.9855, radiusMiles: 25 },
  { kind: "circle", lat: 61.2181, lng: -149.9003, radiusMiles: 25 },
  { kind: "circle", lat: 21.3069, lng: -157.8583, radiusMiles: 3.5 },
  { kind: "circle", lat: 51.6, lng: 179.95, radiusMiles: 25 },
  { kind: "circle", lat: 39.0997, lng: -94.5786, radiusMiles: 10 },
];

const PRECISIONS: Precision[] = ["street", "street", "street", "street", "unknown", "zip", "city", "city", null, null];

/**
 * About 9,000 venues: a dense Manhattan grid (> 2,000 precise venues, many sharing a point so
 * distances tie), the wider New York area across the NJ line, Kansas City across the KS/MO
 * line, Anchorage, Honolulu, the Aleutians on both sides of ±180°, venues near the pole,
 * venues on circle rims, hidden venues and venues missing a coordinate.
 */
export function generateVenues(seed = 7): RefVenue[] {
  const r = rng(seed);
  const out: RefVenue[] = [];
  const add = (lat: number | null, lng: number | null, state: string, extra: Partial<RefVenue> = {}) =>
    out.push({
      id: out.length + 1,
      lat,
      lng,
      precision: PRECISIONS[Math.floor(r() * PRECISIONS.length)],
      visible: r() > 0.08,
      state,
      ...extra,
    });
  const around = (lat: number, lng: number, maxMiles: number) =>
    destination(lat, lng, maxMiles * Math.sqrt(r()), r() * 360);

  // Manhattan: points snapped to a 0.004° grid so about a dozen venues share each point.
  for (let i = 0; i < 6000; i++) {
    const [lat, lng] = around(40.758, -73.9855, 3);
    add(Math.round(lat * 250) / 250, Math.round(lng * 250) / 250, "NY");
  }
  for (let i = 0; i < 900; i++) {
    const [lat, lng] = around(40.758, -73.9855, 32);
    add(lat, lng, lng < -74.02 ? "NJ" : "NY");
  }
  for (let i = 0; i < 300; i++) {
    const [lat, lng] = around(PLACES.kansasCity[0], PLACES.kansasCity[1], 14);
    add(lat, lng, lng < -94.6078 ? "KS" : "MO");
  }
  for (let i = 0; i < 200; i++) add(...around(PLACES.anchorage[0], PLACES.anchorage[1], 30), "AK");
  for (let i = 0; i < 200; i++) add(...around(PLACES.honolulu[0], PLACES.honolulu[1], 8), "HI");
  for (let i = 0; i < 120; i++) add(...around(PLACES.aleutians[0], PLACES.aleutians[1], 35), "AK");
  for (let i = 0; i < 6; i++) add(89.95 + r() * 0.04, r() * 360 - 180, "AK");
  // Scattered over the lower 48.
  for (let i = 0; i < 600; i++) add(25 + r() * 24, -124 + r() * 57, "KS");
  // Rims: just inside and just outside, every 7.5° of bearing.
  for (const c of RIM_CIRCLES) {
    for (let b = 0; b < 360; b += 7.5) {
      for (const f of [1 - 1e-9, 1 - 1e-12, 1 + 1e-9]) {
        add(...destination(c.lat, c.lng, c.radiusMiles * f, b), "AK", { precision: "street", visible: true });
      }
    }
  }
  // Without a coordinate: never a geo candidate.
  for (let i = 0; i < 40; i++) add(i % 2 ? 40.758 : null, i % 2 ? null : -73.9855, "NY");
  return out;
}

export interface Reference {
  venueIds: number[];
  /** Circle only, in venueIds order. */
  distances: number[] | null;
  /** How many venues matched before the 2,000 cap. */
  matched: number;
  /** Every match nearest first, uncapped, and their distances (to the centre or the box centre). */
  allIds: number[];
  allDistances: number[];
}

const admitted = (v: RefVenue, includeCentroids: boolean) =>
  v.visible &&
  v.lat !== null &&
  v.lng !== null &&
  (includeCentroids || v.precision === "street" || v.precision === "unknown");

function capNearest(matches: Array<{ id: number; d: number }>, withDistances: boolean, cap = 2000): Reference {
  matches.sort((a, b) => a.d - b.d || a.id - b.id);
  const kept = matches.slice(0, cap);
  return {
    venueIds: kept.map((m) => m.id),
    distances: withDistances ? kept.map((m) => m.d) : null,
    matched: matches.length,
    allIds: matches.map((m) => m.id),
    allDistances: matches.map((m) => m.d),
  };
}

export function referenceCircle(venues: RefVenue[], c: Circle, includeCentroids: boolean): Reference {
  const matches: Array<{ id: number; d: number }> = [];
  for (const v of venues) {
    if (!admitted(v, includeCentroids)) continue;
    const d = distance([c.lng, c.lat], [v.lng!, v.lat!], { units: "miles" });
    if (d <= c.radiusMiles) matches.push({ id: v.id, d });
  }
  return capNearest(matches, true);
}

export function referencePolygon(venues: RefVenue[], ring: Ring, includeCentroids: boolean): Reference {
  const lats = ring.map((p) => p[0]);
  const lngs = ring.map((p) => p[1]);
  const cLat = (Math.min(...lats) + Math.max(...lats)) / 2;
  const cLng = (Math.min(...lngs) + Math.max(...lngs)) / 2;
  const closed = [...ring, ring[0]].map(([lat, lng]) => [lng, lat]);
  const polygon = { type: "Polygon" as const, coordinates: [closed] };
  const matches: Array<{ id: number; d: number }> = [];
  for (const v of venues) {
    if (!admitted(v, includeCentroids)) continue;
    if (!booleanPointInPolygon([v.lng!, v.lat!], polygon)) continue;
    matches.push({ id: v.id, d: distance([cLng, cLat], [v.lng!, v.lat!], { units: "miles" }) });
  }
  return capNearest(matches, false);
}

/** A star-shaped (simple) ring of `n` vertices around a centre, radii in [minMiles, maxMiles]. */
export function starRing(
  r: () => number,
  lat: number,
  lng: number,
  n: number,
  minMiles: number,
  maxMiles: number,
): Ring {
  const ring: Ring = [];
  for (let i = 0; i < n; i++) ring.push(destination(lat, lng, minMiles + r() * (maxMiles - minMiles), (360 * i) / n));
  return ring;
}

/** Upstream venue records (docs/upstream-records.md) for the fixture. */
export function venueLines(venues: RefVenue[], nextSeq: () => number): object[] {
  return venues.map((v) => ({
    type: "venue",
    seq: nextSeq(),
    venue: {
      id: v.id,
      name: `Venue ${v.id}`,
      city: v.state === "NY" ? "New York" : "Elsewhere",
      state: v.state,
      timezone: null,
      latitude: v.lat,
      longitude: v.lng,
      geocodePrecision: v.precision,
      visible: v.visible,
    },
  }));
}
