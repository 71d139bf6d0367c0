/**
 * Geo candidate search over the venue R-tree (spec "GET /v1/events" geo parameters, CONTRACT §5).
 * Placeholder: the geo capability replaces this with the R-tree search.
 */
import type { Db } from "./driver.ts";

export type GeoFilter =
  | { kind: "circle"; lat: number; lng: number; radiusMiles: number }
  | { kind: "polygon"; ring: Array<[lat: number, lng: number]> };

export interface GeoCandidates {
  /** Venue ids admitted by the filter and the precision rule, at most 2,000. */
  venueIds: number[];
  /** Circle only: great-circle miles (unrounded) from the centre to each candidate venue. */
  distanceMiles: Map<number, number> | null;
}

export function findGeoCandidates(_replica: Db, _filter: GeoFilter, _includeCentroids: boolean): GeoCandidates {
  throw new Error("geo search is not implemented yet");
}
