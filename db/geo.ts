/**
 * Geo candidates (docs/api.md, Listing events) from the serving snapshot's venues (docs/architecture.md, "The serving
 * snapshot" and "The list path"): a grid narrows by box, then membership is exact, in miles as @turf/distance computes
 * them (to the bit, tested) and by @turf/boolean-point-in-polygon. Measured by test/bench/geo.ts.
 */
import { booleanPointInPolygon } from "@turf/boolean-point-in-polygon";
import { lengthToRadians, radiansToDegrees } from "@turf/helpers";
import type { Polygon } from "geojson";
import { LIST, PRECISE_GEOCODES } from "./contract.ts";
import type { Db } from "./driver.ts";
import type { VenueSet } from "./page-filter.ts";
import { hash32, SeenOnce } from "./seen-once.ts";
import { KeptUntilMoved, readSnapshotStats } from "./snapshot-stats.ts";
import { TwoGenerations } from "./two-generations.ts";

export type GeoFilter =
  | { kind: "circle"; lat: number; lng: number; radiusMiles: number }
  | { kind: "polygon"; ring: Array<[lat: number, lng: number]> };

/** The filter re-checked against a venue's live row at hydration (db/hydrate.ts); the cap is not. */
export interface LiveGeo {
  /** Whether `venueId` is a candidate and its live coordinate and precision still pass the filter. */
  admits(venueId: number, lat: number | null, lng: number | null, precision: string | null): boolean;
  /** Circle: unrounded miles from the centre to a live coordinate; polygon: undefined. */
  miles(lat: number, lng: number): number | undefined;
}

/** A latitude/longitude box; `minLng > maxLng` never occurs (boxes are split at ±180). */
type Box = Record<"minLat" | "maxLat" | "minLng" | "maxLng", number>;

/** Widens circle boxes a hair beyond float rounding of the trigonometry; the exact test decides. */
const BOX_MARGIN_DEG = 1e-7;

/** @turf/helpers' earth radius in metres, divided by metres per mile: its "miles" factor. */
const MILES_PER_RADIAN = 63710088e-1 / 1609.344;
const radians = (degrees: number) => ((degrees % 360) * Math.PI) / 180;

/** Great-circle miles between two [lat, lng] points, as docs/api.md, Listing events measures them. */
export function greatCircleMiles(aLat: number, aLng: number, bLat: number, bLng: number): number {
  return haversineMiles(aLat, aLng, Math.cos(radians(aLat)), bLat, bLng, Math.cos(radians(bLat)));
}

/** @turf/distance's haversine operation for operation (to the bit), each point's `cos(radians(lat))` given. */
function haversineMiles(aLat: number, aLng: number, aCos: number, bLat: number, bLng: number, bCos: number): number {
  const dLat = radians(bLat - aLat);
  const dLon = radians(bLng - aLng);
  const a = Math.sin(dLat / 2) ** 2 + Math.sin(dLon / 2) ** 2 * aCos * bCos;
  return 2 * Math.atan2(Math.sqrt(a), Math.sqrt(1 - a)) * MILES_PER_RADIAN;
}

/**
 * docs/api.md, Geo search: the ring's bounding-box diagonal; a box spanning over 180° of longitude
 * reaches the long way round (rings are read in plain order), so it counts as infinitely wide.
 */
export function ringDiagonalMiles(ring: ReadonlyArray<readonly [number, number]>): number {
  const b = ringBox(ring);
  return b.maxLng - b.minLng > 180 ? Infinity : greatCircleMiles(b.minLat, b.minLng, b.maxLat, b.maxLng);
}

function ringBox(ring: ReadonlyArray<readonly [number, number]>): Box {
  const lats = ring.map(([lat]) => lat);
  const lngs = ring.map(([, lng]) => lng);
  return { minLat: Math.min(...lats), maxLat: Math.max(...lats), minLng: Math.min(...lngs), maxLng: Math.max(...lngs) };
}

/**
 * The boxes covering a circle on the sphere: the longitude span is asin(sin δ / cos φ) (exact for
 * a spherical cap); one reaching a pole spans every longitude, one crossing ±180° is two boxes.
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
  const boxes = [{ minLat, maxLat, minLng: Math.max(west, -180), maxLng: Math.min(east, 180) }];
  if (west < -180) boxes.push({ minLat, maxLat, minLng: west + 360, maxLng: 180 });
  if (east > 180) boxes.push({ minLat, maxLat, minLng: -180, maxLng: east - 360 });
  return boxes;
}

const isPrecise = (precision: string | null) => (PRECISE_GEOCODES as readonly (string | null)[]).includes(precision);

/** Grid cells of a quarter degree: a 25-mile circle's box covers about a dozen. */
const CELL_DEG = 0.25;
const cellRow = (lat: number) => Math.floor((lat + 90) / CELL_DEG);
const cellCol = (lng: number) => Math.floor((lng + 180) / CELL_DEG);
const gridCell = (row: number, col: number) => row * 2000 + col;

type VenueTable = ReturnType<typeof readVenueTable>;

/** The snapshot's venues in memory by grid cell: reading `venues` or an R-tree cost more than the rest of a search. */
function readVenueTable(replica: Db) {
  const rows = replica
    .prepare<{ id: number; lat: number; lng: number; precision: string | null; state: string }>(
      "SELECT id, latitude AS lat, longitude AS lng, geocode_precision AS precision, state FROM snapshot_venues",
    )
    .all();
  const n = rows.length;
  const cells = rows.map((row) => gridCell(cellRow(row.lat), cellCol(row.lng)));
  const order = rows.map((_, i) => i).sort((a, b) => cells[a] - cells[b] || rows[a].id - rows[b].id);
  const states = [...new Set(rows.map((row) => row.state))].sort();
  const codes = new Map(states.map((state, code) => [state, code]));
  const column = () => new Float64Array(n);
  // `cosLat` as the distance computes it for its second point; x, y, z the point on the unit sphere.
  const [ids, lat, lng, cosLat, x, y, z] = [column(), column(), column(), column(), column(), column(), column()];
  const precise = new Uint8Array(n); // 1: `street` or `unknown`, admitted without include_centroids
  const stateCode = new Uint16Array(n); // index into `states`
  const slotOf = new Map<number, number>();
  const grid = new Map<number, [first: number, end: number]>(); // cell → its venues' slots
  order.forEach((i, slot) => {
    const v = rows[i];
    ids[slot] = v.id;
    lat[slot] = v.lat;
    lng[slot] = v.lng;
    cosLat[slot] = Math.cos(radians(v.lat));
    [x[slot], y[slot], z[slot]] = unitPoint(v.lat, v.lng);
    precise[slot] = isPrecise(v.precision) ? 1 : 0;
    stateCode[slot] = codes.get(v.state)!;
    slotOf.set(v.id, slot);
    const range = grid.get(cells[i]);
    if (range) range[1] = slot + 1;
    else grid.set(cells[i], [slot, slot + 1]);
  });
  return { grid, states, ids, lat, lng, precise, cosLat, x, y, z, slotOf, stateCode };
}

/** The slots of the admitted venues inside the boxes (edges included). */
function admittedIn(table: VenueTable, boxes: Box[], includeCentroids: boolean): number[] {
  const found: number[] = [];
  const need = includeCentroids ? 0 : 1; // `precise` needed
  const { lat, lng, precise, grid } = table;
  for (const box of boxes) {
    for (let row = cellRow(box.minLat), lastRow = cellRow(box.maxLat); row <= lastRow; row++) {
      for (let col = cellCol(box.minLng), lastCol = cellCol(box.maxLng); col <= lastCol; col++) {
        const range = grid.get(gridCell(row, col));
        if (!range) continue;
        for (let slot = range[0]; slot < range[1]; slot++) {
          const y = lat[slot];
          const x = lng[slot];
          if (y >= box.minLat && y <= box.maxLat && x >= box.minLng && x <= box.maxLng && precise[slot] >= need) {
            found.push(slot);
          }
        }
      }
    }
  }
  return found;
}

/** The `cap` entries of `idx` nearest by (distance, id), unordered: no sort but of the ties at the cut. */
function nearest(idx: number[], dist: Float64Array, table: VenueTable, found: number[], cap: number): number[] {
  if (idx.length <= cap) return idx;
  const values = new Float64Array(idx.length);
  for (let k = 0; k < idx.length; k++) values[k] = dist[idx[k]];
  const cut = kthSmallest(values, cap - 1);
  const kept = idx.filter((i) => dist[i] < cut);
  const tied = idx.filter((i) => dist[i] === cut).sort((a, b) => table.ids[found[a]] - table.ids[found[b]]);
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

/** A point's position on the unit sphere. */
export function unitPoint(lat: number, lng: number): [x: number, y: number, z: number] {
  const phi = radians(lat);
  const lambda = radians(lng);
  return [Math.cos(phi) * Math.cos(lambda), Math.cos(phi) * Math.sin(lambda), Math.sin(phi)];
}

/** Under this radius the distance decides every point: a chord's rounding (~1e-15) could reach the band. */
const CHORD_MIN_RADIUS_MILES = 0.01;

/**
 * `greatCircleMiles(centre, point) <= radiusMiles`, mostly by the chord, which grows with the arc:
 * only within a ten-millionth of the rim (far above either rounding) does the distance decide.
 */
export class CircleTest {
  readonly #cos: number;
  readonly #centre: [number, number, number];
  readonly #inside: number;
  readonly #outside: number;

  constructor(
    readonly lat: number,
    readonly lng: number,
    readonly radiusMiles: number,
  ) {
    this.#cos = Math.cos(radians(lat));
    this.#centre = unitPoint(lat, lng);
    const chord = 2 * Math.sin(radiusMiles / MILES_PER_RADIAN / 2);
    const exactOnly = radiusMiles < CHORD_MIN_RADIUS_MILES;
    this.#inside = exactOnly ? -1 : chord * chord * (1 - 1e-7);
    this.#outside = exactOnly ? Infinity : chord * chord * (1 + 1e-7);
  }

  /** `greatCircleMiles` from the centre to a point, given its `cos(radians(lat))`. */
  miles(lat: number, lng: number, cosLat: number): number {
    return haversineMiles(this.lat, this.lng, this.#cos, lat, lng, cosLat);
  }

  /** The point (its unit-sphere position, coordinates and `cos(radians(lat))`) is within the radius. */
  contains(x: number, y: number, z: number, lat: number, lng: number, cosLat: number): boolean {
    const [cx, cy, cz] = this.#centre;
    const chord2 = (x - cx) * (x - cx) + (y - cy) * (y - cy) + (z - cz) * (z - cz);
    if (chord2 < this.#inside) return true;
    return chord2 <= this.#outside && this.miles(lat, lng, cosLat) <= this.radiusMiles;
  }
}

/** Miles from the circle's centre to the venue in `slot`. */
const milesTo = (table: VenueTable, circle: CircleTest, slot: number) =>
  circle.miles(table.lat[slot], table.lng[slot], table.cosLat[slot]);

/**
 * One search's result, serving every role: membership by binary search of the sorted ids, a
 * circle's distances, the live re-check. `kept` indexes `found`; ids ascend so results are deterministic.
 */
export class GeoCandidates implements VenueSet, LiveGeo {
  /** The snapshot's admitted venue ids, at most 2,000, ascending. */
  readonly venueIds: number[];
  /** Their distinct states, sorted: page selection scans each state's index. */
  readonly states: string[];
  /** Membership of those ids, for the page query's and the live re-check's venue tests. */
  readonly venueSet: VenueSet = this;
  readonly live: LiveGeo = this;
  /** Circle only: unrounded miles from the centre to a candidate's snapshot coordinate (a page serves `live.miles`). */
  readonly distanceMiles: { get(venueId: number): number | undefined } | null;
  readonly #ids: Float64Array;

  constructor(
    private readonly table: VenueTable,
    found: number[],
    kept: number[],
    private readonly includeCentroids: boolean,
    private readonly inside: (lat: number, lng: number) => boolean,
    private readonly circle: CircleTest | null,
  ) {
    const ids = new Float64Array(kept.length);
    for (let k = 0; k < kept.length; k++) ids[k] = table.ids[found[kept[k]]];
    this.#ids = ids.sort();
    this.venueIds = Array.from(ids);
    const seen = new Uint8Array(table.states.length);
    for (const i of kept) seen[table.stateCode[found[i]]] = 1;
    this.states = table.states.filter((_, code) => seen[code] === 1);
    this.distanceMiles = circle && this;
  }

  has(venueId: number): boolean {
    const ids = this.#ids;
    let lo = 0;
    let hi = ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (ids[mid] < venueId) lo = mid + 1;
      else hi = mid;
    }
    return lo < ids.length && ids[lo] === venueId;
  }

  get(venueId: number): number | undefined {
    if (this.circle === null || !this.has(venueId)) return undefined;
    return milesTo(this.table, this.circle, this.table.slotOf.get(venueId)!);
  }

  admits(venueId: number, lat: number | null, lng: number | null, precision: string | null): boolean {
    if (lat === null || lng === null || !this.has(venueId)) return false;
    if (!this.includeCentroids && !isPrecise(precision)) return false;
    const slot = this.table.slotOf.get(venueId)!;
    // At its snapshot coordinate (nearly every one), it passed the shape at selection.
    return (this.table.lat[slot] === lat && this.table.lng[slot] === lng) || this.inside(lat, lng);
  }

  miles(lat: number, lng: number): number | undefined {
    return this.circle?.miles(lat, lng, Math.cos(radians(lat)));
  }
}

/** Distances are computed only near the rim, and for all inside when more than the cap are. */
function searchCircle(table: VenueTable, f: Extract<GeoFilter, { kind: "circle" }>, centroids: boolean) {
  const found = admittedIn(table, circleBoxes(f.lat, f.lng, f.radiusMiles), centroids);
  const circle = new CircleTest(f.lat, f.lng, f.radiusMiles);
  const { x, y, z, lat, lng, cosLat } = table;
  let kept: number[] = [];
  for (let i = 0; i < found.length; i++) {
    const slot = found[i];
    if (circle.contains(x[slot], y[slot], z[slot], lat[slot], lng[slot], cosLat[slot])) kept.push(i);
  }
  if (kept.length > LIST.geoCandidateVenues) {
    const dist = new Float64Array(found.length);
    for (const i of kept) dist[i] = milesTo(table, circle, found[i]);
    kept = nearest(kept, dist, table, found, LIST.geoCandidateVenues);
  }
  const inside = (lat: number, lng: number) => circle.miles(lat, lng, Math.cos(radians(lat))) <= f.radiusMiles;
  return new GeoCandidates(table, found, kept, centroids, inside, circle);
}

function searchPolygon(table: VenueTable, f: Extract<GeoFilter, { kind: "polygon" }>, centroids: boolean) {
  const box = ringBox(f.ring);
  // The cap counts from the box's centre: a zero circle there measures the miles.
  const centre = new CircleTest((box.minLat + box.maxLat) / 2, (box.minLng + box.maxLng) / 2, 0);
  const found = admittedIn(table, [box], centroids);
  const n = found.length;
  const toCentre = new Float64Array(n);
  for (let i = 0; i < n; i++) toCentre[i] = milesTo(table, centre, found[i]);
  // GeoJSON order is [lng, lat] and rings are closed explicitly.
  const coordinates = f.ring.map(([lat, lng]) => [lng, lat]);
  coordinates.push(coordinates[0]);
  const polygon: Polygon = { type: "Polygon", coordinates: [coordinates] };
  // The costly membership test runs outwards in widening bands until the cap is full (ties included).
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
      point[0] = table.lng[found[i]];
      point[1] = table.lat[found[i]];
      if (booleanPointInPolygon(point, polygon)) inside.push(i);
    }
    if (inside.length >= cap || k === n) break;
  }
  const contains = (lat: number, lng: number) => booleanPointInPolygon([lng, lat], polygon);
  return new GeoCandidates(table, found, nearest(inside, toCentre, table, found, cap), centroids, contains, null);
}

/** The venue table of the snapshot's generation and its recent searches (owned by server/list/caches.ts). */
export class GeoIndex {
  readonly #table = new KeptUntilMoved<number, VenueTable>((db) => {
    this.#results.clear();
    return readVenueTable(db);
  });
  readonly #results: TwoGenerations<string, GeoCandidates>;
  /** A search is kept from its second time (db/seen-once.ts): a page's next pages search its shape again. */
  readonly #seen = new SeenOnce(1 << 16);

  constructor(
    private readonly replica: Db,
    maxResults: number,
    maxBytes = 1 << 30,
  ) {
    // About 100 bytes a candidate (conservatively), in the array and the sorted ids.
    const sizeOf = (r: GeoCandidates) => 256 + 100 * r.venueIds.length;
    this.#results = new TwoGenerations({ entries: maxResults, size: maxBytes, sizeOf });
  }

  /** One filter's candidates, shared: callers must not change them (freezing cost a fifth of a search). */
  find(filter: GeoFilter, includeCentroids: boolean): GeoCandidates {
    const table = this.#table.at(this.replica, readSnapshotStats(this.replica).generation);
    const shape =
      filter.kind === "circle" ? `c${filter.lat},${filter.lng},${filter.radiusMiles}` : `p${filter.ring.join(";")}`;
    const key = `${includeCentroids ? 1 : 0}${shape}`;
    const kept = this.#results.get(key);
    if (kept) return kept;
    const result =
      filter.kind === "circle"
        ? searchCircle(table, filter, includeCentroids)
        : searchPolygon(table, filter, includeCentroids);
    if (this.#seen.admit(hash32(key))) this.#results.set(key, result);
    return result;
  }

  clear(): void {
    this.#table.clear();
    this.#results.clear();
  }
}

/** One search with nothing kept (tests and tools). */
export function findGeoCandidates(replica: Db, filter: GeoFilter, includeCentroids: boolean): GeoCandidates {
  return new GeoIndex(replica, 1).find(filter, includeCentroids);
}
