/**
 * db/geo.ts findGeoCandidates against the brute-force reference (test/geo-reference.ts) on a
 * real SQLite replica filled through the sync path.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { distance } from "@turf/distance";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../db/driver.ts";
import {
  CircleTest,
  circleBoxes,
  findGeoCandidates,
  type GeoFilter,
  GeoIndex,
  greatCircleMiles,
  kthSmallest,
  unitPoint,
} from "../db/geo.ts";
import { openReplica } from "../db/replica.ts";
import { refreshSnapshot } from "../db/snapshot.ts";
import { applyBatch } from "../sync/apply.ts";
import { parseRecordLine } from "../sync/records.ts";
import {
  type Circle,
  destination,
  generateVenues,
  PLACES,
  type Reference,
  type RefVenue,
  RIM_CIRCLES,
  type Ring,
  referenceCircle,
  referencePolygon,
  rng,
  starRing,
} from "./geo-reference.ts";

let dir: string;
let replica: Db;
let venues: RefVenue[];
let seq = 0;

function apply(lines: object[]): void {
  applyBatch(
    replica,
    lines.map((l, i) => parseRecordLine(JSON.stringify(l), i + 1)),
  );
}

function venueLine(v: RefVenue): object {
  return {
    type: "venue",
    seq: ++seq,
    venue: {
      id: v.id,
      name: `Venue ${v.id}`,
      city: "X",
      state: v.state,
      timezone: null,
      latitude: v.lat,
      longitude: v.lng,
      geocodePrecision: v.precision,
      visible: v.visible,
    },
  };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "marquee-geo-"));
  replica = await openReplica(join(dir, "replica.db"));
  venues = generateVenues();
  apply(venues.map(venueLine));
  refreshSnapshot(replica, Date.UTC(2030, 0, 1));
});

afterAll(() => {
  replica.close();
  rmSync(dir, { recursive: true, force: true });
});

function expectMatches(filter: GeoFilter, includeCentroids: boolean, ref: Reference): void {
  const got = findGeoCandidates(replica, filter, includeCentroids);
  expect(got.venueIds).toEqual([...ref.venueIds].sort((a, b) => a - b));
  // The states page selection scans, and the membership the venue tests read.
  const stateOf = new Map(venues.map((v) => [v.id, v.state]));
  expect(got.states).toEqual([...new Set(ref.venueIds.map((id) => stateOf.get(id)!))].sort());
  const chosen = new Set(ref.venueIds);
  for (const v of venues) expect(got.venueSet.has(v.id)).toBe(chosen.has(v.id));
  if (ref.distances) {
    expect(got.distanceMiles).not.toBeNull();
    expect(ref.venueIds.map((id) => got.distanceMiles!.get(id))).toEqual(ref.distances);
    const candidate = new Set(ref.venueIds);
    for (const v of venues) if (!candidate.has(v.id)) expect(got.distanceMiles!.get(v.id)).toBeUndefined();
  } else {
    expect(got.distanceMiles).toBeNull();
  }
}

const circle = (lat: number, lng: number, radiusMiles: number): Circle => ({ kind: "circle", lat, lng, radiusMiles });
const polygon = (ring: Ring) => ({ kind: "polygon" as const, ring });

const r = rng(99);
const CIRCLES: Array<[string, Circle]> = [
  ["Manhattan, 25 mi (cap)", circle(...PLACES.manhattan, 25)],
  ["Manhattan, 0.4 mi", circle(...PLACES.manhattan, 0.4)],
  ["Manhattan, 1e-9 mi", circle(40.758, -73.986, 1e-9)],
  ["Kansas City across the state line", circle(39.1, -94.6, 10)],
  ["Anchorage", circle(...PLACES.anchorage, 25)],
  ["Honolulu", circle(...PLACES.honolulu, 12)],
  ["Aleutians across ±180°", circle(...PLACES.aleutians, 25)],
  ["Aleutians, centre west of 180°", circle(51.7, -179.9, 20)],
  ["north pole", circle(...PLACES.northPole, 25)],
  ["empty Atlantic", circle(35, -50, 25)],
  ...RIM_CIRCLES.map((c, i): [string, Circle] => [`rim circle ${i}`, c]),
  ...Array.from({ length: 12 }, (_, i): [string, Circle] => {
    const [lat, lng] = destination(...PLACES.manhattan, 30 * r(), 360 * r());
    return [`random NYC circle ${i}`, circle(lat, lng, 0.1 + 24.9 * r())];
  }),
];

const POLYGONS: Array<[string, Ring]> = [
  [
    "Manhattan square (cap)",
    [
      [40.7, -74.05],
      [40.7, -73.92],
      [40.82, -73.92],
      [40.82, -74.05],
    ],
  ],
  [
    "Manhattan triangle",
    [
      [40.74, -74.0],
      [40.78, -73.96],
      [40.76, -74.02],
    ],
  ],
  [
    "NYC concave",
    [
      [40.6, -74.3],
      [40.6, -73.7],
      [40.95, -73.7],
      [40.75, -74.0],
      [40.95, -74.3],
    ],
  ],
  ["Honolulu star", starRing(r, ...PLACES.honolulu, 17, 2, 9)],
  ["Anchorage star", starRing(r, ...PLACES.anchorage, 32, 4, 20)],
  [
    "Kansas City across the line",
    [
      [39.0, -94.75],
      [39.0, -94.45],
      [39.2, -94.45],
      [39.2, -94.75],
    ],
  ],
  [
    "self-intersecting bow tie",
    [
      [40.7, -74.05],
      [40.82, -73.92],
      [40.7, -73.92],
      [40.82, -74.05],
    ],
  ],
  ...Array.from({ length: 8 }, (_, i): [string, Ring] => {
    const [lat, lng] = destination(...PLACES.manhattan, 10 * r(), 360 * r());
    return [`random NYC star ${i}`, starRing(r, lat, lng, 3 + Math.floor(r() * 30), 0.5, 15)];
  }),
];

describe("findGeoCandidates: circles match the brute-force reference", () => {
  for (const [name, c] of CIRCLES) {
    for (const centroids of [false, true]) {
      it(`${name}${centroids ? ", include_centroids" : ""}`, () => {
        expectMatches(c, centroids, referenceCircle(venues, c, centroids));
      });
    }
  }

  it("the fixture exercises the cap with a distance tie across it, and the rims", () => {
    const ref = referenceCircle(venues, CIRCLES[0][1], false);
    expect(ref.matched).toBeGreaterThan(2000);
    expect(ref.venueIds).toHaveLength(2000);
    expect(ref.allDistances[1999]).toBe(ref.allDistances[2000]);
    // Venues placed 1e-9 inside a rim are in; 1e-9 outside are out (both sides are present).
    const rim = referenceCircle(venues, RIM_CIRCLES[1], false);
    const inside = rim.allDistances.filter((d) => d > 25 * (1 - 1e-8));
    expect(inside.length).toBeGreaterThan(40);
  });

  it("without include_centroids admits only street and unknown; with it every precision incl. null", () => {
    const byId = new Map(venues.map((v) => [v.id, v]));
    const precise = findGeoCandidates(replica, CIRCLES[1][1], false).venueIds.map((id) => byId.get(id)!.precision);
    expect(new Set(precise)).toEqual(new Set(["street", "unknown"]));
    const all = findGeoCandidates(replica, CIRCLES[1][1], true).venueIds.map((id) => byId.get(id)!.precision);
    expect(new Set(all)).toEqual(new Set(["street", "unknown", "zip", "city", null]));
  });
});

describe("findGeoCandidates: polygons match the brute-force reference", () => {
  for (const [name, ring] of POLYGONS) {
    for (const centroids of [false, true]) {
      it(`${name}${centroids ? ", include_centroids" : ""}`, () => {
        expectMatches(polygon(ring), centroids, referencePolygon(venues, ring, centroids));
      });
    }
  }

  it("the Manhattan square is over the cap", () => {
    expect(referencePolygon(venues, POLYGONS[0][1], false).matched).toBeGreaterThan(2000);
  });

  it("a venue on an edge or a vertex is inside", () => {
    const ring: Ring = [
      [40.74, -74.0],
      [40.74, -73.96],
      [40.78, -73.96],
    ];
    const ids = findGeoCandidates(replica, polygon(ring), false).venueIds;
    const onEdge = venues.filter(
      (v) =>
        v.visible &&
        (v.precision === "street" || v.precision === "unknown") &&
        ((v.lat === 40.74 && v.lng! >= -74.0 && v.lng! <= -73.96) ||
          (v.lng === -73.96 && v.lat! >= 40.74 && v.lat! <= 40.78)),
    );
    expect(onEdge.length).toBeGreaterThan(0);
    for (const v of onEdge) expect(ids).toContain(v.id);
  });
});

describe("GeoIndex keeps a search from its second time", () => {
  it("answers a shape searched once anew, then from the kept search", () => {
    const index = new GeoIndex(replica, 8);
    const shape = circle(...PLACES.manhattan, 0.4);
    const first = index.find(shape, false);
    expect(first.venueIds.length).toBeGreaterThan(0);
    const second = index.find(shape, false);
    expect(second).not.toBe(first);
    expect(second.venueIds).toEqual(first.venueIds);
    expect(index.find(shape, false)).toBe(second);
    // Another shape is its own first time.
    const other = circle(...PLACES.manhattan, 0.5);
    expect(index.find(other, false)).not.toBe(index.find(other, false));
  });
});

describe("GeoIndex follows the serving snapshot", () => {
  it("drops a venue once hidden or moved, and admits one newly placed, at the next refresh and not before", () => {
    const index = new GeoIndex(replica, 8);
    const find = (f: GeoFilter) => index.find(f, false);
    const refresh = () => refreshSnapshot(replica, Date.UTC(2030, 0, 1));
    const c = circle(44.5, -100.3, 2); // central South Dakota: empty in the fixture
    const base = 900_000;
    const placed: RefVenue[] = [0, 1, 2].map((i) => ({
      id: base + i,
      lat: 44.5 + i * 0.001,
      lng: -100.3,
      precision: "street",
      visible: true,
      state: "SD",
    }));
    apply(placed.map(venueLine));
    // Applied, not refreshed: the snapshot's venues are still those of the last refresh.
    expect(find(c).venueIds).toEqual([]);
    refresh();
    expect(find(c).venueIds).toEqual([base, base + 1, base + 2]);
    // The same search again is answered from the kept results until the snapshot changes.
    expect(find(c)).toBe(find(c));
    apply([venueLine({ ...placed[0], visible: false }), venueLine({ ...placed[1], lat: 45.5 })]);
    expect(find(c).venueIds).toEqual([base, base + 1, base + 2]);
    refresh();
    expect(find(c).venueIds).toEqual([base + 2]);
    apply([venueLine({ ...placed[2], precision: "city" })]);
    refresh();
    expect(find(c).venueIds).toEqual([]);
    expect(index.find(c, true).venueIds).toEqual([base + 2]);
    apply([{ type: "delete", seq: ++seq, entity: "venue", id: base + 2 }]);
    expect(index.find(c, true).venueIds).toEqual([base + 2]);
    refresh();
    expect(index.find(c, true).venueIds).toEqual([]);
  });
});

describe("LiveGeo: the live re-check of a search's candidates", () => {
  it("admits a candidate at its snapshot place or moved within the shape, with an admitted precision", () => {
    const c = CIRCLES[1][1]; // Manhattan, 0.4 mi
    const found = findGeoCandidates(replica, c, false);
    const id = found.venueIds[0];
    const v = venues.find((x) => x.id === id)!;
    const { live } = found;
    expect(live.admits(id, v.lat, v.lng, v.precision)).toBe(true);
    // Moved within the circle, to its rim and past it (north: latitude alone moves).
    const at = (miles: number) => destination(c.lat, c.lng, miles, 0);
    expect(live.admits(id, ...at(0.39), "street")).toBe(true);
    expect(live.admits(id, ...at(0.41), "street")).toBe(false);
    expect(live.admits(id, null, v.lng, "street")).toBe(false);
    // The precision rule on the live precision; every precision with include_centroids.
    expect(live.admits(id, v.lat, v.lng, "city")).toBe(false);
    expect(findGeoCandidates(replica, c, true).live.admits(id, v.lat, v.lng, "city")).toBe(true);
    // Not a candidate: never admitted, wherever it is now.
    const other = venues.find((x) => !found.venueSet.has(x.id))!;
    expect(live.admits(other.id, c.lat, c.lng, "street")).toBe(false);
    // Miles to the live coordinate given, as every distance is measured.
    const [lat, lng] = at(0.2);
    expect(live.miles(lat, lng)).toBe(greatCircleMiles(c.lat, c.lng, lat, lng));
  });

  it("re-tests a polygon's membership for a moved candidate; a polygon has no miles", () => {
    const ring = POLYGONS[1][1]; // Manhattan triangle
    const found = findGeoCandidates(replica, polygon(ring), false);
    const id = found.venueIds[0];
    const v = venues.find((x) => x.id === id)!;
    expect(found.live.admits(id, v.lat, v.lng, v.precision)).toBe(true);
    const [[aLat, aLng], [bLat, bLng], [cLat, cLng]] = ring;
    expect(found.live.admits(id, (aLat + bLat + cLat) / 3, (aLng + bLng + cLng) / 3, "unknown")).toBe(true);
    expect(found.live.admits(id, 40.9, -73.7, "street")).toBe(false);
    expect(found.live.miles(v.lat!, v.lng!)).toBeUndefined();
  });
});

describe("greatCircleMiles", () => {
  it("equals @turf/distance in miles to the bit, for any two points", () => {
    const lat = fc.double({ min: -90, max: 90, noNaN: true });
    const lng = fc.double({ min: -180, max: 180, noNaN: true });
    fc.assert(
      fc.property(lat, lng, lat, lng, (aLat, aLng, bLat, bLng) => {
        expect(greatCircleMiles(aLat, aLng, bLat, bLng)).toBe(distance([aLng, aLat], [bLng, bLat], { units: "miles" }));
      }),
      { numRuns: 2000 },
    );
  });
});

describe("CircleTest", () => {
  // A point `miles` from the centre along `bearing` (spherical, on @turf's earth radius).
  const pointAt = (lat: number, lng: number, miles: number, bearing: number): [number, number] => {
    const rad = Math.PI / 180;
    const d = miles / (6371008.8 / 1609.344);
    const phi = lat * rad;
    const theta = bearing * rad;
    const phi2 = Math.asin(Math.sin(phi) * Math.cos(d) + Math.cos(phi) * Math.sin(d) * Math.cos(theta));
    const lambda2 =
      lng * rad +
      Math.atan2(Math.sin(theta) * Math.sin(d) * Math.cos(phi), Math.cos(d) - Math.sin(phi) * Math.sin(phi2));
    return [phi2 / rad, ((((lambda2 / rad + 540) % 360) + 360) % 360) - 180];
  };

  it("decides as the great-circle distance does, also on the rim", () => {
    fc.assert(
      fc.property(
        fc.double({ min: -80, max: 80, noNaN: true }),
        fc.double({ min: -180, max: 180, noNaN: true }),
        // Radii down to a millionth of a mile, where the distance decides every point.
        fc.oneof(fc.double({ min: 0.1, max: 25, noNaN: true }), fc.double({ min: 1e-6, max: 0.1, noNaN: true })),
        fc.double({ min: 0, max: 360, noNaN: true }),
        // From well inside to well outside, most of the draws within a hair of the rim.
        fc.oneof(fc.double({ min: 0, max: 2, noNaN: true }), fc.double({ min: 1 - 1e-6, max: 1 + 1e-6, noNaN: true })),
        (lat, lng, radius, bearing, share) => {
          const [pLat, pLng] = pointAt(lat, lng, radius * share, bearing);
          const circle = new CircleTest(lat, lng, radius);
          const cos = Math.cos(((pLat % 360) * Math.PI) / 180);
          expect(circle.contains(...unitPoint(pLat, pLng), pLat, pLng, cos)).toBe(
            greatCircleMiles(lat, lng, pLat, pLng) <= radius,
          );
          expect(circle.miles(pLat, pLng, cos)).toBe(greatCircleMiles(lat, lng, pLat, pLng));
        },
      ),
      { numRuns: 5000 },
    );
  });
});

describe("kthSmallest", () => {
  it("finds the k-th smallest value, ties included", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 20 }), { minLength: 1, maxLength: 60 }), fc.nat(), (values, k) => {
        const i = k % values.length;
        expect(kthSmallest(Float64Array.from(values), i)).toBe([...values].sort((a, b) => a - b)[i]);
      }),
    );
  });
});

describe("circleBoxes", () => {
  it("covers every point of the circle, at any latitude, across ±180° and near the poles", () => {
    fc.assert(
      fc.property(
        fc.double({ min: -89.99, max: 89.99, noNaN: true }),
        fc.double({ min: -180, max: 180, noNaN: true }),
        fc.double({ min: 1e-6, max: 25, noNaN: true }),
        fc.double({ min: 0, max: 360, noNaN: true }),
        (lat, lng, miles, bearing) => {
          const [pLat, pLng] = destination(lat, lng, miles * (1 - 1e-12), bearing);
          const boxes = circleBoxes(lat, lng, miles);
          return boxes.some((b) => pLat >= b.minLat && pLat <= b.maxLat && pLng >= b.minLng && pLng <= b.maxLng);
        },
      ),
      { numRuns: 5000, seed: 42 },
    );
  });

  it("widens the longitude span with latitude and splits at the antimeridian", () => {
    const span = (lat: number) => {
      const [b] = circleBoxes(lat, -100, 25);
      return b.maxLng - b.minLng;
    };
    expect(span(61)).toBeGreaterThan(span(21) * 1.9);
    expect(circleBoxes(51.6, 179.95, 25)).toHaveLength(2);
    expect(circleBoxes(51.6, -179.95, 25)).toHaveLength(2);
    expect(circleBoxes(89.9, 0, 25)).toEqual([expect.objectContaining({ minLng: -180, maxLng: 180, maxLat: 90 })]);
  });
});
