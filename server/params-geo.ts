/**
 * Geo parameters of `GET /v1/events`: `lat`, `lng`, `radius_miles` (a circle) and `polygon`
 * (docs/api.md parameter table, cross-parameter rules 2–3, "Limits"; docs/api.md, Listing events).
 *
 * Order of checks (docs/api.md, Listing events stage 6 "then geo (lat/lng/radius_miles, polygon, conflicts)");
 * the first failure wins:
 *   1. invalid_coordinates  a circle parameter is present and `lat` or `lng` is missing,
 *                           repeated, not a number or out of range (this also covers
 *                           `radius_miles` given without them);
 *   2. invalid_radius       `lat`/`lng` are valid and `radius_miles` is missing, repeated,
 *                           not a number or not in (0, 25];
 *   3. invalid_polygon      `polygon` is present and not a valid ring;
 *   4. conflicting_geo_filters  both a valid circle and a valid polygon.
 * The polygon plan gate (403 feature_not_in_plan) runs earlier, in the route (stage 5).
 *
 * Number grammar, shared by every geo number: an optional sign, decimal digits with an optional
 * fraction and an optional exponent (`40.7`, `-74`, `.5`, `5.`, `+5`, `1e1`), surrounding
 * whitespace ignored. Rejected: empty values, hexadecimal (`0x10`), `Infinity`, `NaN`, digit
 * separators, and anything that overflows to a non-finite value. A parameter that is present
 * counts as given even when empty (`lat=` is invalid, not dropped), matching how the rate
 * limiter decides a geo request by presence.
 */
import * as v from "valibot";
import { LIST, type ListErrorCode } from "../db/contract.ts";
import type { GeoFilter } from "../db/geo.ts";
import { ringDiagonalMiles } from "../db/geo.ts";
import { ApiError } from "./errors.ts";

/** Names whose presence makes a request a geo request (5 rate units, decided before validation). */
export const GEO_PARAMS = ["lat", "lng", "radius_miles", "polygon"] as const;
const CIRCLE_PARAMS = ["lat", "lng", "radius_miles"] as const;

export function isGeoRequest(query: URLSearchParams): boolean {
  return GEO_PARAMS.some((p) => query.has(p));
}

const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** A geo number: the grammar above, converted and required to be finite. */
const geoNumber = v.pipe(v.string(), v.trim(), v.regex(DECIMAL), v.transform(Number), v.finite());

export const LatitudeParam = v.pipe(
  geoNumber,
  v.minValue(-90),
  v.maxValue(90),
  v.description("Circle centre latitude, -90..90. Requires `lng` and `radius_miles`."),
);
export const LongitudeParam = v.pipe(
  geoNumber,
  v.minValue(-180),
  v.maxValue(180),
  v.description("Circle centre longitude, -180..180. Requires `lat` and `radius_miles`."),
);
export const RadiusParam = v.pipe(
  geoNumber,
  v.gtValue(0),
  v.maxValue(LIST.maxRadiusMiles),
  v.description(`Circle radius in statute miles, greater than 0 and at most ${LIST.maxRadiusMiles}.`),
);

/** The single value of a parameter, or undefined when absent; a repeated one is invalid (docs/api.md, Listing events). */
export function single(query: URLSearchParams, name: string, code: ListErrorCode): string | undefined {
  const all = query.getAll(name);
  if (all.length > 1) throw new ApiError(code, `\`${name}\` may be given only once.`);
  return all[0];
}

function parseCircle(query: URLSearchParams): GeoFilter {
  const latText = single(query, "lat", "invalid_coordinates");
  const lngText = single(query, "lng", "invalid_coordinates");
  if (latText === undefined || lngText === undefined) {
    throw new ApiError("invalid_coordinates", "`lat`, `lng` and `radius_miles` must be given together.");
  }
  const lat = v.safeParse(LatitudeParam, latText);
  const lng = v.safeParse(LongitudeParam, lngText);
  if (!lat.success || !lng.success) {
    throw new ApiError("invalid_coordinates", "`lat` must be a number in -90..90 and `lng` a number in -180..180.");
  }
  const radiusText = single(query, "radius_miles", "invalid_radius");
  if (radiusText === undefined) {
    throw new ApiError("invalid_radius", "`radius_miles` is required with `lat` and `lng`.");
  }
  const radius = v.safeParse(RadiusParam, radiusText);
  if (!radius.success) {
    throw new ApiError(
      "invalid_radius",
      `\`radius_miles\` must be a number greater than 0 and at most ${LIST.maxRadiusMiles}.`,
    );
  }
  return { kind: "circle", lat: lat.output, lng: lng.output, radiusMiles: radius.output };
}

const POLYGON_SHAPE = `\`polygon\` must be ${LIST.minPolygonVertices} to ${LIST.maxPolygonVertices} \`lat,lng\` vertices separated by \`;\` (latitude first).`;

/**
 * Parses a ring: `lat,lng;lat,lng;…`. A last vertex equal to the first closes the ring and is
 * not counted; every other vertex counts as sent (duplicates included).
 */
export function parseRing(text: string): Array<[lat: number, lng: number]> | null {
  const parts = text.split(";");
  // Cheap bound before any number is parsed: one closing vertex beyond the maximum is allowed.
  if (parts.length > LIST.maxPolygonVertices + 1) return null;
  const ring: Array<[number, number]> = [];
  for (const part of parts) {
    const pair = part.split(",");
    if (pair.length !== 2) return null;
    const lat = v.safeParse(LatitudeParam, pair[0]);
    const lng = v.safeParse(LongitudeParam, pair[1]);
    if (!lat.success || !lng.success) return null;
    ring.push([lat.output, lng.output]);
  }
  const first = ring[0];
  const last = ring[ring.length - 1];
  if (ring.length > 1 && first[0] === last[0] && first[1] === last[1]) ring.pop();
  if (ring.length < LIST.minPolygonVertices || ring.length > LIST.maxPolygonVertices) return null;
  return ring;
}

export const PolygonParam = v.pipe(
  v.string(),
  v.description(
    `${LIST.minPolygonVertices} to ${LIST.maxPolygonVertices} \`lat,lng\` vertices separated by \`;\`, in ring order ` +
      `(latitude first); bounding box at most ${LIST.maxPolygonDiagonalMiles} miles across its diagonal.`,
  ),
);

function parsePolygon(query: URLSearchParams): GeoFilter {
  const text = single(query, "polygon", "invalid_polygon")!;
  const ring = parseRing(text);
  if (!ring) throw new ApiError("invalid_polygon", POLYGON_SHAPE);
  if (ringDiagonalMiles(ring) > LIST.maxPolygonDiagonalMiles) {
    throw new ApiError(
      "invalid_polygon",
      `The polygon's bounding box must be at most ${LIST.maxPolygonDiagonalMiles} miles across its diagonal.`,
    );
  }
  return { kind: "polygon", ring };
}

/** Parses the geo parameters; null when none are given. Throws ApiError with the API's code. */
export function parseGeoParams(query: URLSearchParams): GeoFilter | null {
  const circle = CIRCLE_PARAMS.some((p) => query.has(p)) ? parseCircle(query) : null;
  const polygon = query.has("polygon") ? parsePolygon(query) : null;
  if (circle && polygon) {
    throw new ApiError("conflicting_geo_filters", "Use either `lat`/`lng`/`radius_miles` or `polygon`, not both.");
  }
  return circle ?? polygon;
}
