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
 * exact test reads the true coordinates (an in-memory copy of `venues`, see VenueTable).
 * Performance is measured by test/bench/geo.ts, not asserted in tests.
 */
import { distance } from "@turf/distance";
import { booleanPointInPolygon } from "@turf/boolean-point-in-polygon";
import { lengthToRadians, radiansToDegrees } from "@turf/helpers";
import type { Polygon } from "geojson";
import { LIST, PRECISE_GEOCODES } from "./contract.ts";
import type { Db } from "./driver.ts";
import { readWatermark } from "./replica.ts";

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

/**
 * The coordinates, visibility and precision of every venue with both coordinates, held in
 * memory so a search reads only ids from the R-tree: looking each candidate up in `venues`
 * (thousands of random page reads in a dense metro) cost more than the rest of the search.
 * Rebuilt when the sync watermark moves, which every applied batch does (sync/apply.ts), also
 * when another process syncs the same file.
 */
interface VenueTable {
  watermark: number;
  slotOf: Map<number, number>;
  lat: Float64Array;
  lng: Float64Array;
  /** ADMIT_* bits. */
  admit: Uint8Array;
}

const ADMIT_CENTROIDS = 1; // visible: admitted with include_centroids (every precision incl. null)
const ADMIT_PRECISE = 2; // visible and `street` or `unknown`: admitted without it

const tables = new WeakMap<Db, VenueTable>();

function readVenueTable(replica: Db): VenueTable {
  const watermark = readWatermark(replica);
  const cached = tables.get(replica);
  if (cached && cached.watermark === watermark) return cached;
  const rows = replica
    .prepare<{ id: number; lat: number; lng: number; precision: string | null; visible: number }>(
      `SELECT id, latitude AS lat, longitude AS lng, geocode_precision AS precision, visible FROM venues
       WHERE latitude IS NOT NULL AND longitude IS NOT NULL`,
    )
    .all();
  const table: VenueTable = {
    watermark,
    slotOf: new Map(),
    lat: new Float64Array(rows.length),
    lng: new Float64Array(rows.length),
    admit: new Uint8Array(rows.length),
  };
  rows.forEach((row, slot) => {
    table.slotOf.set(row.id, slot);
    table.lat[slot] = row.lat;
    table.lng[slot] = row.lng;
    const precise = (PRECISE_GEOCODES as readonly (string | null)[]).includes(row.precision);
    table.admit[slot] = row.visible ? ADMIT_CENTROIDS | (precise ? ADMIT_PRECISE : 0) : 0;
  });
  tables.set(replica, table);
  return table;
}

const IDS_IN_BOX =
  "SELECT id FROM venue_rtree WHERE min_lat <= $maxLat AND max_lat >= $minLat AND min_lng <= $maxLng AND max_lng >= $minLng";

/** Candidates found in a box: parallel arrays of venue id and table slot. */
interface Found {
  ids: number[];
  slots: number[];
}

/** Admitted venues whose R-tree box overlaps `box` (the overlap test never misses a point). */
function admittedInBox(replica: Db, table: VenueTable, box: Box, includeCentroids: boolean, into: Found): void {
  const bit = includeCentroids ? ADMIT_CENTROIDS : ADMIT_PRECISE;
  for (const { id } of replica.prepare<{ id: number }>(IDS_IN_BOX).all({ ...box })) {
    const slot = table.slotOf.get(id);
    // A venue synced after the table was read is left for the next request.
    if (slot !== undefined && table.admit[slot] & bit) {
      into.ids.push(id);
      into.slots.push(slot);
    }
  }
}

/** Indices into `ids` ordered by (distance, id): the spec's "nearest", ties by venue id. */
function byDistance(ids: number[], dist: Float64Array): number[] {
  const order = Array.from(ids.keys());
  order.sort((a, b) => dist[a] - dist[b] || ids[a] - ids[b]);
  return order;
}

function searchCircle(replica: Db, f: Extract<GeoFilter, { kind: "circle" }>, includeCentroids: boolean): GeoCandidates {
  const table = readVenueTable(replica);
  const found: Found = { ids: [], slots: [] };
  for (const box of circleBoxes(f.lat, f.lng, f.radiusMiles)) admittedInBox(replica, table, box, includeCentroids, found);
  const ids: number[] = [];
  const within: number[] = [];
  for (let i = 0; i < found.ids.length; i++) {
    const slot = found.slots[i];
    const d = greatCircleMiles(f.lat, f.lng, table.lat[slot], table.lng[slot]);
    if (d <= f.radiusMiles) {
      ids.push(found.ids[i]);
      within.push(d);
    }
  }
  const dist = Float64Array.from(within);
  const order = byDistance(ids, dist);
  if (order.length > LIST.geoCandidateVenues) order.length = LIST.geoCandidateVenues;
  const venueIds = order.map((i) => ids[i]);
  const distanceMiles = new Map<number, number>();
  for (const i of order) distanceMiles.set(ids[i], dist[i]);
  return { venueIds, distanceMiles };
}

function searchPolygon(replica: Db, f: Extract<GeoFilter, { kind: "polygon" }>, includeCentroids: boolean): GeoCandidates {
  const table = readVenueTable(replica);
  const box = ringBox(f.ring);
  const centreLat = (box.minLat + box.maxLat) / 2;
  const centreLng = (box.minLng + box.maxLng) / 2;
  const found: Found = { ids: [], slots: [] };
  admittedInBox(replica, table, box, includeCentroids, found);
  const toCentre = new Float64Array(found.ids.length);
  for (let i = 0; i < found.ids.length; i++) {
    toCentre[i] = greatCircleMiles(centreLat, centreLng, table.lat[found.slots[i]], table.lng[found.slots[i]]);
  }
  // GeoJSON order is [lng, lat] and rings are closed explicitly.
  const coordinates = f.ring.map(([lat, lng]) => [lng, lat]);
  coordinates.push(coordinates[0]);
  const polygon: Polygon = { type: "Polygon", coordinates: [coordinates] };
  // Nearest first, so membership is tested only until the cap is full.
  const venueIds: number[] = [];
  const point = [0, 0];
  for (const i of byDistance(found.ids, toCentre)) {
    point[0] = table.lng[found.slots[i]];
    point[1] = table.lat[found.slots[i]];
    if (booleanPointInPolygon(point, polygon) && venueIds.push(found.ids[i]) === LIST.geoCandidateVenues) break;
  }
  return { venueIds, distanceMiles: null };
}

export function findGeoCandidates(replica: Db, filter: GeoFilter, includeCentroids: boolean): GeoCandidates {
  return filter.kind === "circle"
    ? searchCircle(replica, filter, includeCentroids)
    : searchPolygon(replica, filter, includeCentroids);
}
