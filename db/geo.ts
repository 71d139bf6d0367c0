/**
 * Geo candidate search over the venue R-tree (spec "GET /v1/events" geo parameters and
 * "Limits", CONTRACT §5).
 *
 * A candidate is a VISIBLE venue with both coordinates, inside the circle or ring, that passes
 * the precision rule (without `include_centroids` only `street` and `unknown`; with it every
 * precision incl. null). Of those, the 2,000 nearest are kept — to the circle's centre, or to
 * the centre of the ring's bounding box — ties broken by venue id. Venues count toward the
 * 2,000 whether or not they currently have events: CONTRACT §5 defines candidates by place and
 * precision alone, which also keeps the set independent of dates and other filters.
 *
 * Steps: the R-tree narrows by a bounding box, then membership is exact (great-circle miles
 * with @turf/distance, point-in-polygon with @turf/boolean-point-in-polygon). R-tree boxes are
 * stored as 32-bit floats rounded outwards, so the overlap test never misses a venue; the
 * exact test reads the true coordinates from `venues`.
 */
import { distance } from "@turf/distance";
import { booleanPointInPolygon } from "@turf/boolean-point-in-polygon";
import { lengthToRadians, radiansToDegrees } from "@turf/helpers";
import type { Polygon } from "geojson";
import { LIST } from "./contract.ts";
import type { Db } from "./driver.ts";

export type GeoFilter =
  | { kind: "circle"; lat: number; lng: number; radiusMiles: number }
  | { kind: "polygon"; ring: Array<[lat: number, lng: number]> };

export interface GeoCandidates {
  /** Venue ids admitted by the filter and the precision rule, at most 2,000, nearest first. */
  venueIds: number[];
  /** Circle only: great-circle miles (unrounded) from the centre to each candidate venue. */
  distanceMiles: Map<number, number> | null;
}

/** A latitude/longitude box; `minLng > maxLng` never occurs (boxes are split at ±180). */
export interface Box {
  minLat: number;
  maxLat: number;
  minLng: number;
  maxLng: number;
}

const MILES = { units: "miles" } as const;
/** Widens R-tree boxes a hair beyond float rounding of the trigonometry; the exact test decides. */
const BOX_MARGIN_DEG = 1e-7;

/** Great-circle miles between two [lat, lng] points, as CONTRACT §5 measures them. */
export function greatCircleMiles(aLat: number, aLng: number, bLat: number, bLng: number): number {
  return distance([aLng, aLat], [bLng, bLat], MILES);
}

/**
 * Spec "Limits": the polygon's bounding-box diagonal, measured like every other distance.
 * Rings are read in plain longitude order, as GeoJSON and the membership test read them, so a
 * ring whose longitudes span more than 180° has a box reaching the long way round the globe.
 * The great-circle distance between its corners would measure the short way instead, so such a
 * box counts as infinitely wide (a ring crossing ±180° is refused).
 */
export function ringDiagonalMiles(ring: ReadonlyArray<readonly [number, number]>): number {
  const b = ringBox(ring);
  if (b.maxLng - b.minLng > 180) return Infinity;
  return greatCircleMiles(b.minLat, b.minLng, b.maxLat, b.maxLng);
}

export function ringBox(ring: ReadonlyArray<readonly [number, number]>): Box {
  let minLat = Infinity, maxLat = -Infinity, minLng = Infinity, maxLng = -Infinity;
  for (const [lat, lng] of ring) {
    if (lat < minLat) minLat = lat;
    if (lat > maxLat) maxLat = lat;
    if (lng < minLng) minLng = lng;
    if (lng > maxLng) maxLng = lng;
  }
  return { minLat, maxLat, minLng, maxLng };
}

/**
 * The boxes covering a circle on the sphere. The longitude span grows with latitude
 * (asin(sin δ / cos φ), exact for a spherical cap); a circle reaching a pole spans every
 * longitude, and one crossing ±180° (the western Aleutians) becomes two boxes.
 */
export function circleBoxes(lat: number, lng: number, radiusMiles: number): Box[] {
  const delta = lengthToRadians(radiusMiles, "miles");
  const dLat = radiansToDegrees(delta) + BOX_MARGIN_DEG;
  const minLat = lat - dLat;
  const maxLat = lat + dLat;
  if (minLat <= -90 || maxLat >= 90) {
    return [{ minLat: Math.max(minLat, -90), maxLat: Math.min(maxLat, 90), minLng: -180, maxLng: 180 }];
  }
  const dLng = radiansToDegrees(Math.asin(Math.sin(delta) / Math.cos((lat * Math.PI) / 180))) + BOX_MARGIN_DEG;
  const west = lng - dLng;
  const east = lng + dLng;
  if (west < -180) {
    return [{ minLat, maxLat, minLng: -180, maxLng: east }, { minLat, maxLat, minLng: west + 360, maxLng: 180 }];
  }
  if (east > 180) {
    return [{ minLat, maxLat, minLng: west, maxLng: 180 }, { minLat, maxLat, minLng: -180, maxLng: east - 360 }];
  }
  return [{ minLat, maxLat, minLng: west, maxLng: east }];
}

interface VenuePoint {
  id: number;
  lat: number;
  lng: number;
}

const BOX_WHERE = "r.min_lat <= $maxLat AND r.max_lat >= $minLat AND r.min_lng <= $maxLng AND r.max_lng >= $minLng";
const VENUES_IN_BOX = `SELECT v.id AS id, v.latitude AS lat, v.longitude AS lng
  FROM venue_rtree r JOIN venues v ON v.id = r.id
  WHERE ${BOX_WHERE} AND v.visible = 1`;
// Spec "include_centroids": without it only `street` and `unknown` are admitted (null is not).
const PRECISE_VENUES_IN_BOX = `${VENUES_IN_BOX} AND v.geocode_precision IN ('street', 'unknown')`;

function venuesInBox(replica: Db, box: Box, includeCentroids: boolean): VenuePoint[] {
  return replica.prepare<VenuePoint>(includeCentroids ? VENUES_IN_BOX : PRECISE_VENUES_IN_BOX).all({ ...box });
}

/**
 * The `cap` nearest by (distance, id), nearest first. `dist` is indexed like `ids`.
 */
function nearest(ids: number[], dist: Float64Array, cap: number): number[] {
  const order = Array.from(ids.keys());
  order.sort((a, b) => dist[a] - dist[b] || ids[a] - ids[b]);
  if (order.length > cap) order.length = cap;
  return order;
}

function searchCircle(replica: Db, f: Extract<GeoFilter, { kind: "circle" }>, includeCentroids: boolean): GeoCandidates {
  const ids: number[] = [];
  const within: number[] = [];
  for (const box of circleBoxes(f.lat, f.lng, f.radiusMiles)) {
    for (const p of venuesInBox(replica, box, includeCentroids)) {
      const d = greatCircleMiles(f.lat, f.lng, p.lat, p.lng);
      if (d <= f.radiusMiles) {
        ids.push(p.id);
        within.push(d);
      }
    }
  }
  const dist = Float64Array.from(within);
  const order = nearest(ids, dist, LIST.geoCandidateVenues);
  const venueIds = order.map((i) => ids[i]);
  const distanceMiles = new Map<number, number>();
  for (const i of order) distanceMiles.set(ids[i], dist[i]);
  return { venueIds, distanceMiles };
}

function searchPolygon(replica: Db, f: Extract<GeoFilter, { kind: "polygon" }>, includeCentroids: boolean): GeoCandidates {
  const box = ringBox(f.ring);
  const centreLat = (box.minLat + box.maxLat) / 2;
  const centreLng = (box.minLng + box.maxLng) / 2;
  // GeoJSON order is [lng, lat] and rings are closed explicitly.
  const coordinates = f.ring.map(([lat, lng]) => [lng, lat]);
  coordinates.push(coordinates[0]);
  const polygon: Polygon = { type: "Polygon", coordinates: [coordinates] };
  const ids: number[] = [];
  const toCentre: number[] = [];
  for (const p of venuesInBox(replica, box, includeCentroids)) {
    if (booleanPointInPolygon([p.lng, p.lat], polygon)) {
      ids.push(p.id);
      toCentre.push(greatCircleMiles(centreLat, centreLng, p.lat, p.lng));
    }
  }
  const order = nearest(ids, Float64Array.from(toCentre), LIST.geoCandidateVenues);
  return { venueIds: order.map((i) => ids[i]), distanceMiles: null };
}

export function findGeoCandidates(replica: Db, filter: GeoFilter, includeCentroids: boolean): GeoCandidates {
  return filter.kind === "circle"
    ? searchCircle(replica, filter, includeCentroids)
    : searchPolygon(replica, filter, includeCentroids);
}
