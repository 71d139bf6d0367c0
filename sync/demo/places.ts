/**
 * Real US places for the demo data: every US city of the installed `city-timezones` package
 * (true coordinates and IANA zones, all 50 states and DC), plus New York's other boroughs and
 * its New Jersey waterfront, so the New York metro is as dense as the real market (the geo
 * benchmark runs a 25-mile circle over Manhattan). Local wall times become UTC through the US
 * daylight-saving rule, computed here rather than by Intl so that every runtime writes the same
 * bytes.
 */
import { cityMapping } from "city-timezones";

export interface Place {
  city: string;
  state: string;
  latitude: number;
  longitude: number;
  population: number;
  timezone: string;
}

/** Coordinates of the boroughs and neighbours that city-timezones folds into "New York". */
const NEW_YORK_METRO: Place[] = [
  {
    city: "Brooklyn",
    state: "NY",
    latitude: 40.6782,
    longitude: -73.9442,
    population: 2_590_000,
    timezone: "America/New_York",
  },
  {
    city: "Queens",
    state: "NY",
    latitude: 40.7282,
    longitude: -73.7949,
    population: 2_270_000,
    timezone: "America/New_York",
  },
  {
    city: "Bronx",
    state: "NY",
    latitude: 40.8448,
    longitude: -73.8648,
    population: 1_420_000,
    timezone: "America/New_York",
  },
  {
    city: "Jersey City",
    state: "NJ",
    latitude: 40.7178,
    longitude: -74.0431,
    population: 290_000,
    timezone: "America/New_York",
  },
  {
    city: "Hoboken",
    state: "NJ",
    latitude: 40.744,
    longitude: -74.0324,
    population: 60_000,
    timezone: "America/New_York",
  },
  {
    city: "Yonkers",
    state: "NY",
    latitude: 40.9312,
    longitude: -73.8987,
    population: 210_000,
    timezone: "America/New_York",
  },
];

function loadPlaces(): Place[] {
  const out: Place[] = [];
  for (const c of cityMapping) {
    if (c.iso2 !== "US") continue;
    // The package lists Washington, D.C. without a state code.
    const isDc = c.province === "District of Columbia";
    const state = isDc ? "DC" : c.state_ansi;
    if (!state) continue;
    out.push({
      city: isDc ? "Washington" : c.city,
      state,
      latitude: c.lat,
      longitude: c.lng,
      population: Math.max(1000, Math.round(c.pop)),
      timezone: c.timezone,
    });
  }
  // A fixed order, independent of the package's file order.
  out.push(...NEW_YORK_METRO);
  out.sort((a, b) =>
    a.state === b.state ? (a.city < b.city ? -1 : a.city > b.city ? 1 : 0) : a.state < b.state ? -1 : 1,
  );
  return out;
}

export const PLACES: readonly Place[] = loadPlaces();

/** Venues spread this many miles around a place: wider for big cities; Manhattan stays tight. */
export function spreadMiles(place: Place): number {
  if (place.city === "New York") return 3;
  return 1 + 2.5 * Math.sqrt(Math.sqrt(place.population / 1e6));
}

/** pop^0.75 with square roots only (exact on every engine), so big cities get more venues. */
export function placeWeight(place: Place): number {
  const s = Math.sqrt(place.population);
  return s * Math.sqrt(s);
}

/** cos of an angle in degrees by Taylor series: engine-independent, exact enough for |x| < 90. */
export function cosDeg(degrees: number): number {
  const x = (degrees * Math.PI) / 180;
  const x2 = x * x;
  let term = 1;
  let sum = 1;
  for (let n = 1; n <= 12; n++) {
    term *= -x2 / ((2 * n - 1) * (2 * n));
    sum += term;
  }
  return sum;
}

export const MILES_PER_DEGREE_LAT = 69.0;

/** Rounds to `digits` decimals (coordinates: 6 ≈ 10 cm). */
export function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

// ---- Local time → UTC -------------------------------------------------------------------------

/** Standard UTC offset in hours and whether the zone keeps US daylight-saving time. */
const ZONES: Record<string, { standard: number; dst: boolean }> = {
  "America/New_York": { standard: -5, dst: true },
  "America/Detroit": { standard: -5, dst: true },
  "America/Indiana/Indianapolis": { standard: -5, dst: true },
  "America/Kentucky/Louisville": { standard: -5, dst: true },
  "America/Chicago": { standard: -6, dst: true },
  "America/Menominee": { standard: -6, dst: true },
  "America/Denver": { standard: -7, dst: true },
  "America/Boise": { standard: -7, dst: true },
  "America/Phoenix": { standard: -7, dst: false },
  "America/Los_Angeles": { standard: -8, dst: true },
  "America/Anchorage": { standard: -9, dst: true },
  "America/Juneau": { standard: -9, dst: true },
  "America/Sitka": { standard: -9, dst: true },
  "America/Yakutat": { standard: -9, dst: true },
  "America/Nome": { standard: -9, dst: true },
  "America/Adak": { standard: -10, dst: true },
  "Pacific/Honolulu": { standard: -10, dst: false },
};

export const KNOWN_ZONES = Object.keys(ZONES);

/** Day of month of the n-th Sunday of a month (UTC calendar arithmetic). */
function nthSunday(year: number, month: number, n: number): number {
  const firstDow = new Date(Date.UTC(year, month, 1)).getUTCDay();
  return 1 + ((7 - firstDow) % 7) + (n - 1) * 7;
}

/** [start, end) of daylight time as month * 100 + day, per year. */
function dstSpan(year: number): [number, number] {
  return [2 * 100 + nthSunday(year, 2, 2), 10 * 100 + nthSunday(year, 10, 1)];
}

/**
 * UTC offset in minutes of a local date in a US zone. Daylight time runs from the second Sunday
 * of March to the first Sunday of November; the demo never schedules a start between midnight
 * and 3 a.m., so the hour of the switch itself never matters.
 */
export function utcOffsetMinutes(timezone: string, year: number, month: number, day: number): number {
  const zone = ZONES[timezone];
  if (!zone) throw new Error(`demo data: no offset rule for time zone ${timezone}`);
  let hours = zone.standard;
  if (zone.dst) {
    const key = month * 100 + day;
    const [start, end] = dstSpan(year);
    if (key >= start && key < end) hours += 1;
  }
  return hours * 60;
}

/** Epoch ms of a local wall time (month 0-based; day may overflow, as with Date.UTC). */
export function localToUtcMs(
  timezone: string,
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
): number {
  const wall = Date.UTC(year, month, day, hour, minute);
  const d = new Date(wall);
  return wall - utcOffsetMinutes(timezone, d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) * 60_000;
}
