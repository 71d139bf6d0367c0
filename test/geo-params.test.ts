/**
 * server/params-geo.ts: every geo error code, the documented order among them, and the
 * number grammar (docs/api.md parameter table and cross-parameter rules 2–3, docs/api.md, Listing events).
 */
import { describe, expect, it } from "vitest";
import { ApiError } from "../server/errors.ts";
import { isGeoRequest, parseGeoParams } from "../server/params-geo.ts";

function codeOf(query: string): string {
  try {
    const filter = parseGeoParams(new URLSearchParams(query));
    return filter === null ? "none" : filter.kind;
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    return (err as ApiError).code;
  }
}

const parse = (query: string) => parseGeoParams(new URLSearchParams(query));
const SQUARE = "40.70,-74.05;40.70,-73.92;40.82,-73.92;40.82,-74.05";
const enc = encodeURIComponent;

describe("geo presence", () => {
  it("no geo parameter: null, and not a geo request", () => {
    expect(parse("state=NY&include_centroids=true")).toBeNull();
    expect(isGeoRequest(new URLSearchParams("state=NY"))).toBe(false);
  });

  it("any geo parameter makes a geo request, even empty or invalid", () => {
    for (const q of ["lat=", "lng=x", "radius_miles=99", "polygon="])
      expect(isGeoRequest(new URLSearchParams(q))).toBe(true);
  });
});

describe("circle", () => {
  it("parses a valid circle", () => {
    expect(parse("lat=40.758&lng=-73.9855&radius_miles=25")).toEqual({
      kind: "circle",
      lat: 40.758,
      lng: -73.9855,
      radiusMiles: 25,
    });
  });

  it.each([
    // invalid_coordinates: missing members, bad numbers, out of range, radius alone
    ["radius_miles=5", "invalid_coordinates"],
    ["lat=40&radius_miles=5", "invalid_coordinates"],
    ["lng=-74&radius_miles=5", "invalid_coordinates"],
    ["lat=40", "invalid_coordinates"],
    ["lng=-74", "invalid_coordinates"],
    ["lat=&lng=-74&radius_miles=5", "invalid_coordinates"],
    ["lat=%20&lng=-74&radius_miles=5", "invalid_coordinates"],
    ["lat=90.0001&lng=-74&radius_miles=5", "invalid_coordinates"],
    ["lat=-90.0001&lng=-74&radius_miles=5", "invalid_coordinates"],
    ["lat=40&lng=180.5&radius_miles=5", "invalid_coordinates"],
    ["lat=40&lng=-181&radius_miles=5", "invalid_coordinates"],
    ["lat=abc&lng=-74&radius_miles=5", "invalid_coordinates"],
    ["lat=NaN&lng=-74&radius_miles=5", "invalid_coordinates"],
    ["lat=Infinity&lng=-74&radius_miles=5", "invalid_coordinates"],
    ["lat=0x10&lng=-74&radius_miles=5", "invalid_coordinates"],
    ["lat=1e400&lng=-74&radius_miles=5", "invalid_coordinates"],
    ["lat=40,1&lng=-74&radius_miles=5", "invalid_coordinates"],
    ["lat=4_0&lng=-74&radius_miles=5", "invalid_coordinates"],
    ["lat=40&lat=41&lng=-74&radius_miles=5", "invalid_coordinates"],
    ["lat=40&lng=-74&lng=-74&radius_miles=5", "invalid_coordinates"],
    // coordinates come first even when the radius is also wrong
    ["lat=91&lng=-74&radius_miles=0", "invalid_coordinates"],
    ["lat=91&lng=-74", "invalid_coordinates"],
    // invalid_radius: missing beside valid coordinates, or not in (0, 25]
    ["lat=40&lng=-74", "invalid_radius"],
    ["lat=40&lng=-74&radius_miles=", "invalid_radius"],
    ["lat=40&lng=-74&radius_miles=0", "invalid_radius"],
    ["lat=40&lng=-74&radius_miles=-0", "invalid_radius"],
    ["lat=40&lng=-74&radius_miles=-1", "invalid_radius"],
    ["lat=40&lng=-74&radius_miles=25.0000001", "invalid_radius"],
    ["lat=40&lng=-74&radius_miles=1e-400", "invalid_radius"],
    ["lat=40&lng=-74&radius_miles=ten", "invalid_radius"],
    ["lat=40&lng=-74&radius_miles=Infinity", "invalid_radius"],
    ["lat=40&lng=-74&radius_miles=5&radius_miles=5", "invalid_radius"],
  ])("%s → %s", (query, code) => {
    expect(codeOf(query)).toBe(code);
  });

  it.each([
    ["lat=90&lng=180&radius_miles=25", 90, 180, 25],
    ["lat=-90&lng=-180&radius_miles=0.001", -90, -180, 0.001],
    ["lat=1e1&lng=-7.4e1&radius_miles=2.5E0", 10, -74, 2.5],
    [`lat=${enc("+40")}&lng=-74.&radius_miles=.5`, 40, -74, 0.5],
    ["lat=%2040.5%20&lng=-74&radius_miles=5", 40.5, -74, 5],
    ["lat=+40.5&lng=-74&radius_miles=5", 40.5, -74, 5], // an unencoded + is a space
    ["lat=040&lng=-0&radius_miles=25", 40, -0, 25],
  ])("accepts %s", (query, lat, lng, radiusMiles) => {
    expect(parse(query)).toEqual({ kind: "circle", lat, lng, radiusMiles });
  });
});

describe("polygon", () => {
  it("parses a ring, latitude first, without a repeated closing vertex", () => {
    const expected = {
      kind: "polygon",
      ring: [
        [40.7, -74.05],
        [40.7, -73.92],
        [40.82, -73.92],
        [40.82, -74.05],
      ],
    };
    expect(parse(`polygon=${enc(SQUARE)}`)).toEqual(expected);
    expect(parse(`polygon=${enc(`${SQUARE};40.70,-74.05`)}`)).toEqual(expected);
    expect(parse(`polygon=${enc(" 40.70 , -74.05 ; 40.70,-73.92;40.82,-73.92;40.82,-74.05")}`)).toEqual(expected);
  });

  const ring = (n: number, close = false) => {
    const pts = Array.from({ length: n }, (_, i) => {
      const a = (2 * Math.PI * i) / n;
      return `${(40.75 + 0.1 * Math.sin(a)).toFixed(6)},${(-73.98 + 0.1 * Math.cos(a)).toFixed(6)}`;
    });
    if (close) pts.push(pts[0]);
    return enc(pts.join(";"));
  };

  it.each([
    [`polygon=${ring(3)}`, "polygon"],
    [`polygon=${ring(32)}`, "polygon"],
    [`polygon=${ring(32, true)}`, "polygon"],
    [`polygon=${ring(33)}`, "invalid_polygon"],
    [`polygon=${ring(40)}`, "invalid_polygon"],
    [`polygon=${ring(2)}`, "invalid_polygon"],
    ["polygon=", "invalid_polygon"],
    ["polygon=40.7,-74", "invalid_polygon"],
    [`polygon=${enc("40.7,-74;40.8,-74;40.7,-74")}`, "invalid_polygon"], // 2 vertices once closed
    [`polygon=${enc(`${SQUARE};`)}`, "invalid_polygon"],
    [`polygon=${enc(`;${SQUARE}`)}`, "invalid_polygon"],
    [`polygon=${enc(SQUARE.replace(";", ";;"))}`, "invalid_polygon"],
    [`polygon=${enc("40.7,-74,1;40.8,-74;40.8,-73.9")}`, "invalid_polygon"],
    [`polygon=${enc("40.7;40.8,-74;40.8,-73.9")}`, "invalid_polygon"],
    [`polygon=${enc("-74,40.7;-74,40.8;-73.9,40.8")}`, "polygon"], // read latitude first: a valid ring in Antarctica
    [`polygon=${enc("40.7,-74;40.8,-74;95,-73.9")}`, "invalid_polygon"],
    [`polygon=${enc("40.7,-74;40.8,-74;40.8,-190")}`, "invalid_polygon"],
    [`polygon=${enc("40.7,-74;40.8,-74;40.8,NaN")}`, "invalid_polygon"],
    [`polygon=${enc("40.7,-74;40.8,-74;40.8,0x10")}`, "invalid_polygon"],
    [`polygon=${enc(SQUARE)}&polygon=${enc(SQUARE)}`, "invalid_polygon"],
    // bounding-box diagonal (great-circle miles): ~43.3 accepted, ~60.6 refused
    [`polygon=${enc("40.5,-74.2;40.5,-73.7;41.0,-73.7")}`, "polygon"],
    [`polygon=${enc("40.5,-74.3;40.5,-73.6;41.2,-73.6")}`, "invalid_polygon"],
    // across the antimeridian the box spans the globe: refused as too wide
    [`polygon=${enc("51.5,179.9;51.6,-179.9;51.7,179.95")}`, "invalid_polygon"],
  ])("%s → %s", (query, code) => {
    expect(codeOf(query)).toBe(code);
  });

  it("the 50-mile diagonal is inclusive", () => {
    // Boxes from (40, -74) to (lat, -73.4): diagonals 49.9999986 and 50.0000039 miles.
    const ok = enc("40,-74;40,-73.4;40.5605049,-73.4");
    const over = enc("40,-74;40,-73.4;40.560505,-73.4");
    expect(codeOf(`polygon=${ok}`)).toBe("polygon");
    expect(codeOf(`polygon=${over}`)).toBe("invalid_polygon");
  });
});

describe("order among geo errors (docs/api.md, Listing events: lat/lng/radius_miles, polygon, conflicts)", () => {
  it.each([
    [`lat=40&lng=-74&radius_miles=5&polygon=${enc(SQUARE)}`, "conflicting_geo_filters"],
    [`lat=40&lng=-74&radius_miles=5&polygon=`, "invalid_polygon"],
    [`lat=40&lng=-74&radius_miles=99&polygon=${enc(SQUARE)}`, "invalid_radius"],
    [`lat=40&polygon=${enc(SQUARE)}`, "invalid_coordinates"],
    [`radius_miles=5&polygon=${enc(SQUARE)}`, "invalid_coordinates"],
    [`lat=40&lng=-74&polygon=bad`, "invalid_radius"],
    [`lat=x&lng=-74&radius_miles=0&polygon=bad`, "invalid_coordinates"],
  ])("%s → %s", (query, code) => {
    expect(codeOf(query)).toBe(code);
  });
});
