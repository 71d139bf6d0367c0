/**
 * Demo venues: one in the largest place of every state and DC first, the rest spread over real
 * places in proportion to population^0.75, jittered deterministically around the place. Each
 * geocode precision appears (docs/upstream-records.md, docs/api.md), plus venues without coordinates,
 * without a resolved time zone, and hidden ones.
 */
import { US_STATES } from "../../db/contract.ts";
import { cosDeg, MILES_PER_DEGREE_LAT, PLACES, type Place, placeWeight, round, spreadMiles } from "./places.ts";
import { Random, WeightedIndex } from "./random.ts";
import { AGGREGATOR_SOURCES, PLATFORM_SOURCES } from "./sellers.ts";
import { slugify, VENUE_KINDS, venueName } from "./words.ts";

export interface DemoVenue {
  id: number;
  name: string;
  place: Place;
  /** The zone the venue really is in; `timezone` (what upstream reports) may be null. */
  zone: string;
  timezone: string | null;
  latitude: number | null;
  longitude: number | null;
  geocodePrecision: "street" | "zip" | "city" | "unknown" | null;
  visible: boolean;
  kind: (typeof VENUE_KINDS)[number];
  slug: string;
  /** How many events the venue draws relative to others. */
  popularity: number;
  /** Sources that list this venue's events, with weights. */
  sources: Array<readonly [number, string]>;
}

/** Upstream venue object of a record (docs/upstream-records.md). */
export function venueBody(v: DemoVenue) {
  return {
    id: v.id,
    name: v.name,
    city: v.place.city,
    state: v.place.state,
    timezone: v.timezone,
    latitude: v.latitude,
    longitude: v.longitude,
    geocodePrecision: v.geocodePrecision,
    visible: v.visible,
  };
}

/** Chooses aggregators by venue size: arenas sell through the majors, clubs through smaller sellers. */
function sourcesFor(r: Random, v: Omit<DemoVenue, "sources">): Array<readonly [number, string]> {
  const big = ["Arena", "Stadium", "Amphitheater", "Opera House"].includes(v.kind.kind);
  const out: Array<readonly [number, string]> = [];
  if (r.chance(0.45)) out.push([4, `scraper:${slugify(v.name, 36)}-${slugify(v.place.city, 16)}`]);
  out.push([big ? 5 : 2, r.pick(AGGREGATOR_SOURCES)]);
  if (r.chance(0.5)) out.push([2, r.pick(PLATFORM_SOURCES)]);
  if (r.chance(0.35)) out.push([1, `scraper:${slugify(v.place.city, 24)}-${v.place.state.toLowerCase()}-calendar`]);
  if (r.chance(0.2)) out.push([1, r.pick(AGGREGATOR_SOURCES)]);
  return out;
}

function precisionAndPoint(r: Random, place: Place): Pick<DemoVenue, "latitude" | "longitude" | "geocodePrecision"> {
  const [dx, dy] = r.disc();
  const miles = spreadMiles(place);
  const lat = place.latitude + (dy * miles) / MILES_PER_DEGREE_LAT;
  const lng = place.longitude + (dx * miles) / (MILES_PER_DEGREE_LAT * cosDeg(place.latitude));
  const precision = r.weighted<DemoVenue["geocodePrecision"] | "none">([
    [72, "street"],
    [9, "zip"],
    [7, "city"],
    [5, "unknown"],
    [4, null],
    [3, "none"],
  ]);
  switch (precision) {
    case "none":
      return { latitude: null, longitude: null, geocodePrecision: null };
    case "city": // a city centroid: the place itself
      return { latitude: round(place.latitude, 6), longitude: round(place.longitude, 6), geocodePrecision: "city" };
    case "zip": // a ZIP centroid: near, not at, the door
      return { latitude: round(lat, 2), longitude: round(lng, 2), geocodePrecision: "zip" };
    default:
      return { latitude: round(lat, 6), longitude: round(lng, 6), geocodePrecision: precision };
  }
}

function makeVenue(r: Random, id: number, place: Place): DemoVenue {
  const kind = r.weighted(VENUE_KINDS.map((k) => [k.weight, k] as const));
  const name = venueName(r, kind.kind, place.city);
  const base = {
    id,
    name,
    place,
    zone: place.timezone,
    timezone: r.chance(0.01) ? null : place.timezone,
    ...precisionAndPoint(r, place),
    visible: !r.chance(0.015),
    kind,
    slug: slugify(name, 40),
    popularity: 1 / (0.05 + r.next()),
  };
  return { ...base, sources: sourcesFor(r, base) };
}

/** `count` venues (at least one per state and DC), ids 1..count. */
export function buildVenues(seed: string, count: number): DemoVenue[] {
  const r = new Random(seed, 0x7e17e5);
  const venues: DemoVenue[] = [];
  for (const state of US_STATES) {
    const largest = PLACES.filter((p) => p.state === state).reduce((a, b) => (b.population > a.population ? b : a));
    venues.push(makeVenue(r, venues.length + 1, largest));
  }
  const places = new WeightedIndex(PLACES.map(placeWeight));
  while (venues.length < count) venues.push(makeVenue(r, venues.length + 1, PLACES[places.pick(r)]));
  return venues;
}
