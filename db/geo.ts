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
import { LRUCache } from "lru-cache";
import { LIST, PRECISE_GEOCODES } from "./contract.ts";
import type { Db } from "./driver.ts";
import { readWatermark } from "./replica.ts";

export type GeoFilter =
  | { kind: "circle"; lat: number; lng: number; radiusMiles: number }
  | { kind: "polygon"; ring: Array<[lat: number, lng: number]> };

export interface GeoCandidates {
  /** Venue ids admitted by the filter and the precision rule, at most 2,000, ascending. */
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
  /** Search results for this state of the replica. */
  results: LRUCache<string, GeoCandidates>;
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
    results: new LRUCache({ max: RESULT_CACHE_ENTRIES }),
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

/**
 * The `cap` entries of `idx` nearest by (distance, id), the spec's "nearest" with ties broken
 * by venue id, in no particular order. A native typed-array sort finds the cut distance;
 * sorting indices with a comparator cost several times more at these sizes.
 */
function nearest(idx: number[], dist: Float64Array, ids: number[], cap: number): number[] {
  if (idx.length <= cap) return idx;
  const sorted = Float64Array.from(idx, (i) => dist[i]).sort();
  const cut = sorted[cap - 1];
  const kept = idx.filter((i) => dist[i] < cut);
  const tied = idx.filter((i) => dist[i] === cut).sort((a, b) => ids[a] - ids[b]);
  for (let t = 0; kept.length < cap; t++) kept.push(tied[t]);
  return kept;
}

/** Venue ids of the kept entries in ascending order, so results are deterministic. */
const ascendingIds = (kept: number[], ids: number[]) => Array.from(Float64Array.from(kept, (i) => ids[i]).sort());

function searchCircle(replica: Db, table: VenueTable, f: Extract<GeoFilter, { kind: "circle" }>, includeCentroids: boolean): GeoCandidates {
  const found: Found = { ids: [], slots: [] };
  for (const box of circleBoxes(f.lat, f.lng, f.radiusMiles)) admittedInBox(replica, table, box, includeCentroids, found);
  const dist = new Float64Array(found.ids.length);
  const within: number[] = [];
  for (let i = 0; i < found.ids.length; i++) {
    dist[i] = greatCircleMiles(f.lat, f.lng, table.lat[found.slots[i]], table.lng[found.slots[i]]);
    if (dist[i] <= f.radiusMiles) within.push(i);
  }
  const kept = nearest(within, dist, found.ids, LIST.geoCandidateVenues);
  const distanceMiles = new Map<number, number>();
  for (const i of kept) distanceMiles.set(found.ids[i], dist[i]);
  return { venueIds: ascendingIds(kept, found.ids), distanceMiles };
}

function searchPolygon(replica: Db, table: VenueTable, f: Extract<GeoFilter, { kind: "polygon" }>, includeCentroids: boolean): GeoCandidates {
  const box = ringBox(f.ring);
  const centreLat = (box.minLat + box.maxLat) / 2;
  const centreLng = (box.minLng + box.maxLng) / 2;
  const found: Found = { ids: [], slots: [] };
  admittedInBox(replica, table, box, includeCentroids, found);
  const n = found.ids.length;
  const toCentre = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    toCentre[i] = greatCircleMiles(centreLat, centreLng, table.lat[found.slots[i]], table.lng[found.slots[i]]);
  }
  // GeoJSON order is [lng, lat] and rings are closed explicitly.
  const coordinates = f.ring.map(([lat, lng]) => [lng, lat]);
  coordinates.push(coordinates[0]);
  const polygon: Polygon = { type: "Polygon", coordinates: [coordinates] };
  // Membership is the costly test, so it runs outwards from the centre in widening bands and
  // stops once the cap is full: every venue up to the band's edge is tested, so the nearest
  // `cap` inside (ties included) are all among those found.
  const cap = LIST.geoCandidateVenues;
  const sorted = toCentre.slice().sort();
  const tested = new Uint8Array(n);
  const inside: number[] = [];
  const point = [0, 0];
  for (let k = Math.min(n, cap); n > 0; k = Math.min(n, k * 2)) {
    const edge = sorted[k - 1];
    for (let i = 0; i < n; i++) {
      if (tested[i] || toCentre[i] > edge) continue;
      tested[i] = 1;
      point[0] = table.lng[found.slots[i]];
      point[1] = table.lat[found.slots[i]];
      if (booleanPointInPolygon(point, polygon)) inside.push(i);
    }
    if (inside.length >= cap || k === n) break;
  }
  return { venueIds: ascendingIds(nearest(inside, toCentre, found.ids, cap), found.ids), distanceMiles: null };
}

/** Identical searches (every page of one traversal repeats its filter) within one replica state. */
const RESULT_CACHE_ENTRIES = 64;

function cacheKey(f: GeoFilter, includeCentroids: boolean): string {
  const shape = f.kind === "circle" ? `c${f.lat},${f.lng},${f.radiusMiles}` : `p${f.ring.join(";")}`;
  return `${includeCentroids ? 1 : 0}${shape}`;
}

/**
 * Candidates for one geo filter. `venueIds` are in ascending id order. The result is shared
 * with other requests of the same replica state, so callers must not change it (not frozen:
 * freezing a 2,000-element array cost a fifth of a search).
 */
export function findGeoCandidates(replica: Db, filter: GeoFilter, includeCentroids: boolean): GeoCandidates {
  const table = readVenueTable(replica);
  const key = cacheKey(filter, includeCentroids);
  let result = table.results.get(key);
  if (!result) {
    result =
      filter.kind === "circle"
        ? searchCircle(replica, table, filter, includeCentroids)
        : searchPolygon(replica, table, filter, includeCentroids);
    table.results.set(key, result);
  }
  return result;
}
