/**
 * Geo candidate search over the venue R-tree (docs/api.md geo parameters and
 * "Limits", docs/api.md, Listing events).
 *
 * A candidate is a VISIBLE venue with both coordinates, inside the circle or ring, that passes
 * the precision rule (without `include_centroids` only `street` and `unknown`; with it every
 * precision incl. null). Of those, the 2,000 nearest are kept — to the circle's centre, or to
 * the centre of the ring's bounding box — ties broken by venue id. Venues count toward the
 * 2,000 whether or not they currently have events: docs/api.md, Listing events defines candidates by place and
 * precision alone, which also keeps the set independent of dates and other filters.
 *
 * Candidates are chosen from the serving snapshot's venues (`snapshot_venues`, written by every
 * refresh: db/snapshot.ts), as every page's rows are chosen from the snapshot (docs/api.md,
 * Serving snapshot): a venue hidden, moved or re-geocoded since the last refresh keeps its place
 * among the candidates, and the 2,000 cap, until the next one. Hydration then re-checks each
 * candidate against its live row (`LiveGeo`), as it re-checks a city.
 *
 * Steps: an in-memory grid over the venues' true coordinates narrows by a bounding box (see
 * VenueTable), then membership is exact (great-circle miles computed as @turf/distance computes
 * them, settled by a cheaper chord test away from the rim: CircleTest; point-in-polygon with
 * @turf/boolean-point-in-polygon). The box contains every point of the shape, so the narrowing
 * never misses a venue. A circle's distances are computed near its rim, for all inside when more
 * than 2,000 are (to keep the nearest), and for the venues a page shows.
 * Performance is measured by test/bench/geo.ts, not asserted in tests.
 */
import { booleanPointInPolygon } from "@turf/boolean-point-in-polygon";
import { lengthToRadians, radiansToDegrees } from "@turf/helpers";
import type { Polygon } from "geojson";
import { LRUCache } from "lru-cache";
import { LIST, PRECISE_GEOCODES } from "./contract.ts";
import type { Db } from "./driver.ts";
import type { VenueSet } from "./page-filter.ts";
import { readSnapshotStats } from "./snapshot-stats.ts";

export type GeoFilter =
  | { kind: "circle"; lat: number; lng: number; radiusMiles: number }
  | { kind: "polygon"; ring: Array<[lat: number, lng: number]> };

export interface GeoCandidates {
  /** Venue ids admitted by the filter and the precision rule in the snapshot, at most 2,000, ascending. */
  venueIds: number[];
  /** Membership of those ids, for the page query's and the live re-check's venue tests. */
  venueSet: VenueSet;
  /** The distinct states of those venues in the snapshot, sorted: page selection scans each state's index. */
  states: string[];
  /**
   * Circle only: great-circle miles (unrounded) from the centre to each candidate venue's snapshot
   * coordinate, as the cap ranks them. A page serves `live.miles` instead.
   */
  distanceMiles: VenueDistances | null;
  /** The filter as hydration re-checks a candidate's live row. */
  live: LiveGeo;
}

/**
 * A geo filter re-checked against a venue's LIVE row when a page is hydrated (db/hydrate.ts).
 * Served venue fields are live, and docs/api.md, Serving snapshot says a page never contradicts its
 * own filters: so a candidate whose live coordinate has left the shape, or whose live precision
 * the precision rule no longer admits, is dropped like an event whose venue moved to another
 * city, and `distanceMiles` is measured to the live coordinate the page serves. It is never
 * more than the radius. The 2,000 cap is not re-checked: it ranks the snapshot's venues.
 */
export interface LiveGeo {
  /** Whether `venueId` is a candidate and its live coordinate and precision still pass the filter. */
  admits(venueId: number, lat: number | null, lng: number | null, precision: string | null): boolean;
  /** Circle: great-circle miles (unrounded) from the centre to a live coordinate; polygon: undefined. */
  miles(lat: number, lng: number): number | undefined;
}

/** Distances by venue id: undefined for a venue that is not a candidate. */
export interface VenueDistances {
  get(venueId: number): number | undefined;
}

/** A latitude/longitude box; `minLng > maxLng` never occurs (boxes are split at ±180). */
export interface Box {
  minLat: number;
  maxLat: number;
  minLng: number;
  maxLng: number;
}

/** Widens circle boxes a hair beyond float rounding of the trigonometry; the exact test decides. */
const BOX_MARGIN_DEG = 1e-7;

/** @turf/helpers' earth radius in metres, divided by metres per mile: its "miles" factor. */
const MILES_PER_RADIAN = 63710088e-1 / 1609.344;
const radians = (degrees: number) => ((degrees % 360) * Math.PI) / 180;

/** Great-circle miles between two [lat, lng] points, as docs/api.md, Listing events measures them. */
export function greatCircleMiles(aLat: number, aLng: number, bLat: number, bLng: number): number {
  return haversineMiles(aLat, aLng, Math.cos(radians(aLat)), bLat, bLng, Math.cos(radians(bLat)));
}

/**
 * `greatCircleMiles` with each point's `cos(radians(lat))` given, so a search computes a venue's
 * once. @turf/distance's haversine, operation for operation, so results agree to the bit (tested),
 * without the two coordinate arrays and the unit lookup it costs per call.
 */
function haversineMiles(aLat: number, aLng: number, aCos: number, bLat: number, bLng: number, bCos: number): number {
  const dLat = radians(bLat - aLat);
  const dLon = radians(bLng - aLng);
  const a = Math.sin(dLat / 2) ** 2 + Math.sin(dLon / 2) ** 2 * aCos * bCos;
  return 2 * Math.atan2(Math.sqrt(a), Math.sqrt(1 - a)) * MILES_PER_RADIAN;
}

/**
 * docs/api.md, Geo search: the polygon's bounding-box diagonal, measured like every other distance.
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
  let minLat = Infinity,
    maxLat = -Infinity,
    minLng = Infinity,
    maxLng = -Infinity;
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
    return [
      { minLat, maxLat, minLng: -180, maxLng: east },
      { minLat, maxLat, minLng: west + 360, maxLng: 180 },
    ];
  }
  if (east > 180) {
    return [
      { minLat, maxLat, minLng: west, maxLng: 180 },
      { minLat, maxLat, minLng: -180, maxLng: east - 360 },
    ];
  }
  return [{ minLat, maxLat, minLng: west, maxLng: east }];
}

/**
 * The coordinates, precision and state of every venue of the serving snapshot (`snapshot_venues`:
 * visible, with both coordinates), held in memory with a grid over them, so a search reads nothing
 * from the database: looking candidates up in `venues` (thousands of random page reads in a dense
 * metro) cost more than the rest of the search, and so did reading ids from the R-tree. Rebuilt
 * when the snapshot generation moves, which every refresh does in the transaction that rewrites
 * `snapshot_venues` (db/replica.ts v2, v10), also when another process refreshes.
 */
interface VenueTable {
  generation: number;
  ids: Float64Array;
  lat: Float64Array;
  lng: Float64Array;
  /** ADMIT_* bits. */
  admit: Uint8Array;
  /** `cos` of the latitude in radians, as the distance computes it for its second point. */
  cosLat: Float64Array;
  /** The venue's point on the unit sphere, for the quick test of a circle (`CircleTest`). */
  x: Float64Array;
  y: Float64Array;
  z: Float64Array;
  /** Venue id → slot. */
  slotOf: Map<number, number>;
  /** Index into `states` of each venue's state. */
  stateCode: Uint16Array;
  /** The distinct states, sorted. */
  states: string[];
  /**
   * Grid cell (gridCell) → the slots of the venues in it, `[first, end)`: venues are stored cell
   * by cell, so a search reads each cell's coordinates in one run of memory.
   */
  grid: Map<number, [first: number, end: number]>;
}

const ADMIT_CENTROIDS = 1; // admitted with include_centroids (every precision incl. null)
const ADMIT_PRECISE = 2; // `street` or `unknown`: admitted without it

const isPrecise = (precision: string | null) => (PRECISE_GEOCODES as readonly (string | null)[]).includes(precision);

/** Grid cells of a quarter degree: a 25-mile circle's box covers about a dozen. */
const CELL_DEG = 0.25;
const cellRow = (lat: number) => Math.floor((lat + 90) / CELL_DEG);
const cellCol = (lng: number) => Math.floor((lng + 180) / CELL_DEG);
const gridCell = (row: number, col: number) => row * 2000 + col;

function readVenueTable(replica: Db, generation: number): VenueTable {
  const rows = replica
    .prepare<{ id: number; lat: number; lng: number; precision: string | null; state: string }>(
      "SELECT id, latitude AS lat, longitude AS lng, geocode_precision AS precision, state FROM snapshot_venues",
    )
    .all();
  const states = [...new Set(rows.map((row) => row.state))].sort();
  const codes = new Map(states.map((state, code) => [state, code]));
  const table: VenueTable = {
    generation,
    ids: new Float64Array(rows.length),
    lat: new Float64Array(rows.length),
    lng: new Float64Array(rows.length),
    admit: new Uint8Array(rows.length),
    cosLat: new Float64Array(rows.length),
    x: new Float64Array(rows.length),
    y: new Float64Array(rows.length),
    z: new Float64Array(rows.length),
    slotOf: new Map(),
    stateCode: new Uint16Array(rows.length),
    states,
    grid: new Map(),
  };
  const cellOf = (row: { lat: number; lng: number }) => gridCell(cellRow(row.lat), cellCol(row.lng));
  const cells = rows.map(cellOf);
  const order = rows.map((_, i) => i).sort((a, b) => cells[a] - cells[b] || rows[a].id - rows[b].id);
  order.forEach((i, slot) => {
    const row = rows[i];
    table.ids[slot] = row.id;
    table.lat[slot] = row.lat;
    table.lng[slot] = row.lng;
    table.cosLat[slot] = Math.cos(radians(row.lat));
    [table.x[slot], table.y[slot], table.z[slot]] = unitPoint(row.lat, row.lng);
    table.slotOf.set(row.id, slot);
    table.stateCode[slot] = codes.get(row.state)!;
    table.admit[slot] = ADMIT_CENTROIDS | (isPrecise(row.precision) ? ADMIT_PRECISE : 0);
    const range = table.grid.get(cells[i]);
    if (range) range[1] = slot + 1;
    else table.grid.set(cells[i], [slot, slot + 1]);
  });
  return table;
}

/** Candidates found in a box: parallel arrays of venue id and table slot. */
interface Found {
  ids: number[];
  slots: number[];
}

/** Admitted venues inside `box` (edges included). */
function admittedInBox(table: VenueTable, box: Box, includeCentroids: boolean, into: Found): void {
  const bit = includeCentroids ? ADMIT_CENTROIDS : ADMIT_PRECISE;
  const { lat, lng, admit, ids, grid } = table;
  for (let row = cellRow(box.minLat), lastRow = cellRow(box.maxLat); row <= lastRow; row++) {
    for (let col = cellCol(box.minLng), lastCol = cellCol(box.maxLng); col <= lastCol; col++) {
      const range = grid.get(gridCell(row, col));
      if (!range) continue;
      for (let slot = range[0]; slot < range[1]; slot++) {
        const y = lat[slot];
        const x = lng[slot];
        if (y >= box.minLat && y <= box.maxLat && x >= box.minLng && x <= box.maxLng && admit[slot] & bit) {
          into.ids.push(ids[slot]);
          into.slots.push(slot);
        }
      }
    }
  }
}

/** The distinct states of the kept venues, sorted. */
function statesOf(table: VenueTable, kept: number[], found: Found): string[] {
  const seen = new Uint8Array(table.states.length);
  for (const i of kept) seen[table.stateCode[found.slots[i]]] = 1;
  return table.states.filter((_, code) => seen[code] === 1);
}

/**
 * The `cap` entries of `idx` nearest by (distance, id), the API's "nearest" with ties broken
 * by venue id, in no particular order. The cut distance is the cap-th smallest, found by
 * selection (no sort of all of them); only the entries tied at the cut are sorted, by id.
 */
function nearest(idx: number[], dist: Float64Array, ids: number[], cap: number): number[] {
  if (idx.length <= cap) return idx;
  const values = new Float64Array(idx.length);
  for (let k = 0; k < idx.length; k++) values[k] = dist[idx[k]];
  const cut = kthSmallest(values, cap - 1);
  const kept = idx.filter((i) => dist[i] < cut);
  const tied = idx.filter((i) => dist[i] === cut).sort((a, b) => ids[a] - ids[b]);
  for (let t = 0; kept.length < cap; t++) kept.push(tied[t]);
  return kept;
}

/** The k-th smallest value (from 0) of `a`, which it reorders: Hoare's selection. */
export function kthSmallest(a: Float64Array, k: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >>> 1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        const t = a[i];
        a[i] = a[j];
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k];
  }
  return a[k];
}

/** Venue ids of the kept entries in ascending order, so results are deterministic. */
function ascendingIds(kept: number[], ids: number[]): Float64Array {
  const sorted = new Float64Array(kept.length);
  for (let k = 0; k < kept.length; k++) sorted[k] = ids[kept[k]];
  return sorted.sort();
}

/** Membership in ascending venue ids, by binary search: nothing to build per search. */
class SortedVenues implements VenueSet {
  constructor(readonly ids: Float64Array) {}

  has(venueId: number): boolean {
    const { ids } = this;
    let lo = 0;
    let hi = ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (ids[mid] < venueId) lo = mid + 1;
      else hi = mid;
    }
    return lo < ids.length && ids[lo] === venueId;
  }
}

/** A point's position on the unit sphere. */
export function unitPoint(lat: number, lng: number): [x: number, y: number, z: number] {
  const phi = radians(lat);
  const lambda = radians(lng);
  return [Math.cos(phi) * Math.cos(lambda), Math.cos(phi) * Math.sin(lambda), Math.sin(phi)];
}

/** `greatCircleMiles` from one point, its cosine computed once. */
class MilesFrom {
  readonly #cos: number;

  constructor(
    readonly lat: number,
    readonly lng: number,
  ) {
    this.#cos = Math.cos(radians(lat));
  }

  /** To a point, given its `cos(radians(lat))`. */
  miles(lat: number, lng: number, cosLat: number): number {
    return haversineMiles(this.lat, this.lng, this.#cos, lat, lng, cosLat);
  }
}

/**
 * Below this radius the rounding of a chord (about 1e-15 of the sphere's radius) could reach the
 * band of `CircleTest`, so the distance decides every point; at it, the rounding is a thousandth
 * of the band.
 */
const CHORD_MIN_RADIUS_MILES = 0.01;

/**
 * "Within the radius" for one circle, as `greatCircleMiles(centre, point) <= radiusMiles` decides
 * it, mostly without that distance: the straight line through the sphere (the chord) grows with
 * the arc, so a point whose squared chord is well below the radius's is inside and one well above
 * is outside. Between the two limits (a band of a ten-millionth of the radius, far wider than the
 * rounding of either computation) the great-circle distance decides, as it does for every point
 * of a circle under CHORD_MIN_RADIUS_MILES.
 */
export class CircleTest extends MilesFrom {
  readonly #centre: [number, number, number];
  readonly #inside: number;
  readonly #outside: number;

  constructor(
    lat: number,
    lng: number,
    readonly radiusMiles: number,
  ) {
    super(lat, lng);
    this.#centre = unitPoint(lat, lng);
    const chord = 2 * Math.sin(radiusMiles / MILES_PER_RADIAN / 2);
    const exactOnly = radiusMiles < CHORD_MIN_RADIUS_MILES;
    this.#inside = exactOnly ? -1 : chord * chord * (1 - 1e-7);
    this.#outside = exactOnly ? Infinity : chord * chord * (1 + 1e-7);
  }

  /** The point (its unit-sphere position, coordinates and `cos(radians(lat))`) is within the radius. */
  contains(x: number, y: number, z: number, lat: number, lng: number, cosLat: number): boolean {
    const [cx, cy, cz] = this.#centre;
    const chord2 = (x - cx) * (x - cx) + (y - cy) * (y - cy) + (z - cz) * (z - cz);
    if (chord2 < this.#inside) return true;
    return chord2 <= this.#outside && this.miles(lat, lng, cosLat) <= this.radiusMiles;
  }
}

/** A circle's candidates: membership by their sorted ids, each one's distance when asked for. */
class CircleCandidates extends SortedVenues implements VenueDistances {
  constructor(
    ids: Float64Array,
    private readonly table: VenueTable,
    private readonly circle: CircleTest,
  ) {
    super(ids);
  }

  get(venueId: number): number | undefined {
    if (!this.has(venueId)) return undefined;
    return milesTo(this.table, this.circle, this.table.slotOf.get(venueId)!);
  }
}

/**
 * `LiveGeo` over one search's candidates. A candidate whose live coordinate is the snapshot's
 * (nearly every one) passed the shape at selection; only a moved one is tested again.
 */
class LiveCheck implements LiveGeo {
  constructor(
    private readonly candidates: VenueSet,
    private readonly table: VenueTable,
    private readonly includeCentroids: boolean,
    private readonly inside: (lat: number, lng: number) => boolean,
    private readonly circle: CircleTest | null,
  ) {}

  admits(venueId: number, lat: number | null, lng: number | null, precision: string | null): boolean {
    if (lat === null || lng === null || !this.candidates.has(venueId)) return false;
    if (!this.includeCentroids && !isPrecise(precision)) return false;
    const slot = this.table.slotOf.get(venueId)!;
    return (this.table.lat[slot] === lat && this.table.lng[slot] === lng) || this.inside(lat, lng);
  }

  miles(lat: number, lng: number): number | undefined {
    return this.circle?.miles(lat, lng, Math.cos(radians(lat)));
  }
}

/** Miles from `from` to the venue in `slot`. */
const milesTo = (table: VenueTable, from: MilesFrom, slot: number) =>
  from.miles(table.lat[slot], table.lng[slot], table.cosLat[slot]);

function searchCircle(
  table: VenueTable,
  f: Extract<GeoFilter, { kind: "circle" }>,
  includeCentroids: boolean,
): GeoCandidates {
  const found: Found = { ids: [], slots: [] };
  for (const box of circleBoxes(f.lat, f.lng, f.radiusMiles)) admittedInBox(table, box, includeCentroids, found);
  const circle = new CircleTest(f.lat, f.lng, f.radiusMiles);
  const { x, y, z, lat, lng, cosLat } = table;
  const within: number[] = [];
  for (let i = 0; i < found.ids.length; i++) {
    const slot = found.slots[i];
    if (circle.contains(x[slot], y[slot], z[slot], lat[slot], lng[slot], cosLat[slot])) within.push(i);
  }
  let kept = within;
  if (within.length > LIST.geoCandidateVenues) {
    // More than the cap: the nearest are kept, by distance.
    const dist = new Float64Array(found.ids.length);
    for (const i of within) dist[i] = milesTo(table, circle, found.slots[i]);
    kept = nearest(within, dist, found.ids, LIST.geoCandidateVenues);
  }
  const sorted = ascendingIds(kept, found.ids);
  const candidates = new CircleCandidates(sorted, table, circle);
  const inside = (lat: number, lng: number) => circle.miles(lat, lng, Math.cos(radians(lat))) <= f.radiusMiles;
  return {
    venueIds: Array.from(sorted),
    venueSet: candidates,
    states: statesOf(table, kept, found),
    distanceMiles: candidates,
    live: new LiveCheck(candidates, table, includeCentroids, inside, circle),
  };
}

function searchPolygon(
  table: VenueTable,
  f: Extract<GeoFilter, { kind: "polygon" }>,
  includeCentroids: boolean,
): GeoCandidates {
  const box = ringBox(f.ring);
  const centreLat = (box.minLat + box.maxLat) / 2;
  const centreLng = (box.minLng + box.maxLng) / 2;
  const found: Found = { ids: [], slots: [] };
  admittedInBox(table, box, includeCentroids, found);
  const n = found.ids.length;
  const centre = new MilesFrom(centreLat, centreLng);
  const toCentre = new Float64Array(n);
  for (let i = 0; i < n; i++) toCentre[i] = milesTo(table, centre, found.slots[i]);
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
  const kept = nearest(inside, toCentre, found.ids, cap);
  const ids = ascendingIds(kept, found.ids);
  const venueSet = new SortedVenues(ids);
  const contains = (lat: number, lng: number) => booleanPointInPolygon([lng, lat], polygon);
  return {
    venueIds: Array.from(ids),
    venueSet,
    states: statesOf(table, kept, found),
    distanceMiles: null,
    live: new LiveCheck(venueSet, table, includeCentroids, contains, null),
  };
}

function cacheKey(f: GeoFilter, includeCentroids: boolean): string {
  const shape = f.kind === "circle" ? `c${f.lat},${f.lng},${f.radiusMiles}` : `p${f.ring.join(";")}`;
  return `${includeCentroids ? 1 : 0}${shape}`;
}

/**
 * Geo candidate search over one replica: the in-memory venue table of the serving snapshot,
 * rebuilt when the snapshot generation moves (not the sync watermark: a sync commits live rows the
 * snapshot does not hold yet), and the results of recent searches for that table (every page of
 * one traversal repeats its filter). Owned by the list path's caches (server/list/caches.ts).
 * Called inside the page's read transaction, so the table is the snapshot its rows come from.
 */
export class GeoIndex {
  #table: VenueTable | null = null;
  readonly #results: LRUCache<string, GeoCandidates>;

  constructor(
    private readonly replica: Db,
    maxResults: number,
    maxBytes = 1 << 30,
  ) {
    // About 100 bytes a candidate (conservatively): its id in the array and in the sorted ids.
    this.#results = new LRUCache({
      max: maxResults,
      maxSize: maxBytes,
      sizeCalculation: (r) => 256 + 100 * r.venueIds.length,
    });
  }

  /**
   * Candidates for one geo filter. `venueIds` are in ascending id order. The result is shared
   * with other requests of the same replica state, so callers must not change it (not frozen:
   * freezing a 2,000-element array cost a fifth of a search).
   */
  find(filter: GeoFilter, includeCentroids: boolean): GeoCandidates {
    const { generation } = readSnapshotStats(this.replica);
    if (this.#table?.generation !== generation) {
      this.#table = readVenueTable(this.replica, generation);
      this.#results.clear();
    }
    const table = this.#table;
    const key = cacheKey(filter, includeCentroids);
    let result = this.#results.get(key);
    if (!result) {
      result =
        filter.kind === "circle"
          ? searchCircle(table, filter, includeCentroids)
          : searchPolygon(table, filter, includeCentroids);
      this.#results.set(key, result);
    }
    return result;
  }

  clear(): void {
    this.#table = null;
    this.#results.clear();
  }
}

/** One search with nothing kept (tests and tools). */
export function findGeoCandidates(replica: Db, filter: GeoFilter, includeCentroids: boolean): GeoCandidates {
  return new GeoIndex(replica, 1).find(filter, includeCentroids);
}
