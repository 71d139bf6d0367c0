/**
 * Geo parameters (lat, lng, radius_miles, polygon). Placeholder: the geo capability replaces
 * this with full validation in the documented order.
 */
import type { GeoFilter } from "../db/geo.ts";

/** Names whose presence makes a request a geo request (5 rate units, decided before validation). */
export const GEO_PARAMS = ["lat", "lng", "radius_miles", "polygon"] as const;

export function isGeoRequest(query: URLSearchParams): boolean {
  return GEO_PARAMS.some((p) => query.has(p));
}

/** Parses the geo parameters; null when none are given. Throws ApiError with the spec's code. */
export function parseGeoParams(_query: URLSearchParams): GeoFilter | null {
  return null;
}
