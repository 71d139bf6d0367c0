/**
 * Traffic a server has not seen: lists of request paths in which no URL repeats, drawn from the
 * replica the way real clients spread (many states and cities, their own date windows, points
 * from a phone, their own polygons), a list of cursor walks, and a mix whose queries repeat with
 * a Zipf distribution. wrk sends them with test/bench/rotate-urls.lua and walk-cursors.lua.
 *
 * Every random choice comes from one seeded generator, so a run sends the same lists as the last.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { DAY_MS, LIST, US_STATES } from "../../../db/contract.ts";
import type { Db } from "../../../db/driver.ts";
import { ringDiagonalMiles } from "../../../db/geo.ts";
import { filterFingerprint } from "../../../server/cursor.ts";
import { RUN_DIR } from "./fixture.ts";

export type UniqueClass = "state" | "state-city" | "source" | "circle" | "polygon";

export interface UniqueLists {
  /** One file of paths per class, none repeated within a file. */
  paths: Record<UniqueClass, string>;
  /** "<fingerprint>\t<path>" per walk. */
  walks: string;
  /** Paths of the Zipf mix (repeats by design) and the share of requests that repeat an earlier one. */
  zipf: { file: string; repeatShare: number; queries: number };
  /** One representative path per class, for capturing the body the ceiling replays. */
  sample: Record<UniqueClass | "walk" | "zipf", string>;
}

/** mulberry32: small, fast and good enough to spread queries. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Picks from `items` in proportion to `weights` (a prefix-sum table built once). */
function weighted<T>(items: T[], weights: number[], rand: () => number): () => T {
  const sums = new Float64Array(weights.length);
  let total = 0;
  for (let i = 0; i < weights.length; i++) sums[i] = total += weights[i];
  return () => {
    const x = rand() * total;
    let lo = 0;
    let hi = sums.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sums[mid] > x) hi = mid;
      else lo = mid + 1;
    }
    return items[lo];
  };
}

const MILES_PER_DEG_LAT = 69.05;

export interface UniqueOptions {
  /** Paths per class: more than a server answers in the time it is loaded with them. */
  perClass: number;
  walks: number;
  zipfRequests: number;
  zipfQueries: number;
  seed: number;
  nowMs: number;
}

export function writeUniqueLists(replica: Db, o: UniqueOptions): UniqueLists {
  const rand = random(o.seed);
  const int = (n: number) => Math.floor(rand() * n);
  const venues = replica
    .prepare<{ lat: number; lng: number; state: string; city: string; n: number }>(
      `SELECT v.latitude AS lat, v.longitude AS lng, v.state, v.city, c.events AS n
       FROM snapshot_venue_events c JOIN venues v ON v.id = c.venue_id
       WHERE v.latitude IS NOT NULL AND v.longitude IS NOT NULL AND c.events > 0`,
    )
    .all();
  const venue = weighted(
    venues,
    venues.map((v) => v.n),
    rand,
  );
  const states = replica
    .prepare<{ state: string; n: number }>("SELECT state, count(*) AS n FROM snapshot GROUP BY state")
    .all();
  const state = weighted(
    states.filter((s) => (US_STATES as readonly string[]).includes(s.state)).map((s) => s.state),
    states.filter((s) => (US_STATES as readonly string[]).includes(s.state)).map((s) => s.n),
    rand,
  );
  const sources = replica
    .prepare<{ source: string; events: number }>("SELECT source, events FROM snapshot_sources")
    .all();
  const source = weighted(
    sources.map((s) => s.source),
    sources.map((s) => s.events),
    rand,
  );

  // A window opening anywhere in the next 120 days, to the second: clients send their own.
  const startsAfter = () => new Date(o.nowMs + int((120 * DAY_MS) / 1000) * 1000).toISOString().replace(".000Z", "Z");
  const e = encodeURIComponent;
  const makers: Record<UniqueClass, () => string> = {
    state: () => `state=${state()}&starts_after=${startsAfter()}`,
    "state-city": () => {
      const v = venue();
      return `state=${v.state}&city=${e(v.city)}&starts_after=${startsAfter()}`;
    },
    source: () => {
      const s = source();
      const vendor = s.replace(/^scraper:/, "").split(":")[0];
      // Half send the whole source, half its bare vendor name (a prefix).
      return `source=${e(rand() < 0.5 ? s : vendor)}&starts_after=${startsAfter()}`;
    },
    circle: () => {
      const v = venue();
      const lat = v.lat + (rand() - 0.5) * (4 / MILES_PER_DEG_LAT);
      const lng = v.lng + (rand() - 0.5) * (4 / (MILES_PER_DEG_LAT * Math.cos((v.lat * Math.PI) / 180)));
      const radius = (1 + rand() * (LIST.maxRadiusMiles - 1)).toFixed(2);
      return `lat=${lat.toFixed(5)}&lng=${lng.toFixed(5)}&radius_miles=${radius}`;
    },
    polygon: () => {
      for (;;) {
        const v = venue();
        const r = 3 + rand() * 14;
        const sides = 4 + int(5);
        const ring: string[] = [];
        const raw: Array<[number, number]> = [];
        for (let k = 0; k < sides; k++) {
          const angle = ((k + rand() * 0.5) / sides) * 2 * Math.PI;
          const d = r * (0.6 + rand() * 0.4);
          const lat = v.lat + (d * Math.sin(angle)) / MILES_PER_DEG_LAT;
          const lng = v.lng + (d * Math.cos(angle)) / (MILES_PER_DEG_LAT * Math.cos((v.lat * Math.PI) / 180));
          raw.push([Number(lat.toFixed(5)), Number(lng.toFixed(5))]);
          ring.push(`${lat.toFixed(5)},${lng.toFixed(5)}`);
        }
        if (ringDiagonalMiles(raw) <= LIST.maxPolygonDiagonalMiles) return `polygon=${e(ring.join(";"))}`;
      }
    },
  };

  const distinct = (make: () => string, n: number): string[] => {
    const seen = new Set<string>();
    while (seen.size < n) seen.add(`/v1/events?${make()}`);
    return [...seen];
  };
  const write = (name: string, lines: string[]) => {
    const file = join(RUN_DIR, name);
    writeFileSync(file, `${lines.join("\n")}\n`);
    return file;
  };

  const paths = {} as Record<UniqueClass, string>;
  const sample = {} as UniqueLists["sample"];
  for (const cls of Object.keys(makers) as UniqueClass[]) {
    const list = distinct(makers[cls], o.perClass);
    paths[cls] = write(`unique-${cls}.paths`, list);
    sample[cls] = list[0];
  }

  // Walks: a state and its own window opening, paged by cursor.
  const walkPaths = distinct(makers.state, o.walks);
  const walkLines = walkPaths.map((p) => `${filterFingerprint(new URL(p, "http://x").searchParams)}\t${p}`);
  const walks = write("walks.tsv", walkLines);
  sample.walk = walkPaths[0];

  // The mix: queries of every class, drawn by Zipf (s = 1) over their popularity rank.
  const classes = Object.keys(makers) as UniqueClass[];
  const queries = distinct(() => makers[classes[int(classes.length)]](), o.zipfQueries);
  const zipfPick = weighted(
    queries,
    queries.map((_, rank) => 1 / (rank + 1)),
    rand,
  );
  const seen = new Set<string>();
  let repeats = 0;
  const mix: string[] = [];
  for (let i = 0; i < o.zipfRequests; i++) {
    const p = zipfPick();
    if (seen.has(p)) repeats++;
    else seen.add(p);
    mix.push(p);
  }
  sample.zipf = queries[0];
  return {
    paths,
    walks,
    zipf: { file: write("zipf.paths", mix), repeatShare: repeats / o.zipfRequests, queries: o.zipfQueries },
    sample,
  };
}
