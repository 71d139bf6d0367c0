/**
 * Hydration of a selected page (docs/architecture.md, "From record to response bytes"): the page's ids read from the
 * LIVE rows; one no longer servable or no longer matching the request (db/page-filter.ts `rowMatcher`, db/geo.ts
 * `LiveGeo`) is dropped, so a page never contradicts its own filters. Survivors keep snapshot order.
 */
import type { Db } from "./driver.ts";
import type { Venue } from "./event.ts";
import type { LiveGeo } from "./geo.ts";
import {
  type FilterRow,
  isAggregator,
  type PageFilter,
  type PagePosition,
  rowMatcher,
  servedEndMs,
} from "./page-filter.ts";
import { SeenOnce } from "./seen-once.ts";
import { jsonBase, withBase } from "./served-json.ts";
import { EVENT_SERVABLE_SQL } from "./snapshot.ts";
import { TwoGenerations } from "./two-generations.ts";

/** EVENTS_SQL's columns by type: the stored served JSON (db/served-json.ts), and what the live re-check reads. */
type EventRow = Record<"id" | "start_ms" | "is_sold_out" | "venue_id", number> &
  Record<"served_json" | "source" | "vendor", string> & { end_ms: number | null };

/** VENUES_SQL's columns by type. */
type VenueRow = Record<"id" | "visible", number> &
  Record<"name" | "city" | "state", string> &
  Record<"timezone", string | null> &
  Record<"latitude" | "longitude", number | null> & { geocode_precision: Venue["geocodePrecision"] };

const EVENTS_SQL = `SELECT e.id, e.served_json, e.start_ms, e.end_ms, e.is_sold_out, e.source, e.vendor, e.venue_id
FROM json_each($ids) j JOIN events e ON e.id = j.value WHERE ${EVENT_SERVABLE_SQL}`;
const VENUES_SQL = `SELECT v.id, v.name, v.city, v.state, v.timezone, v.latitude, v.longitude, v.geocode_precision, v.visible
FROM json_each($ids) j JOIN venues v ON v.id = j.value`;

export interface Hydration {
  baseUrl: string;
  /** Geo queries: the live re-check of the candidates and, for a circle, the miles to a venue. */
  geo: LiveGeo | null;
}

/** An event's JSON up to and including `"venue":`, and what the live re-check reads of it. */
type LiveEvent = Omit<FilterRow, "state" | "city"> & { part: string };

const liveEvent = (r: EventRow, base: string): LiveEvent => ({
  part: withBase(r.served_json, base),
  startMs: r.start_ms,
  endMs: servedEndMs(r.start_ms, r.end_ms),
  soldOut: r.is_sold_out === 1,
  aggregator: isAggregator(r.vendor),
  source: r.source,
  venueId: r.venue_id,
});

/** A kept event; `false`: not servable now (cancelled, spam, a duplicate, deleted). */
type KeptEvent = LiveEvent | false;

/** What the live re-check reads of a venue: the filter's state and city, a geo filter's coordinate and precision. */
type LiveVenue = Pick<VenueRow, "state" | "city" | "latitude" | "longitude" | "geocode_precision">;

/** A kept venue: its JSON with `distanceMiles` null, and what servability and the re-check read. `false`: gone. */
type KeptVenue = (LiveVenue & { json: string; visible: boolean }) | false;

/** Whether a servable event at its venue still matches the request: the filter, and a geo filter's live re-check. */
const stillMatches = (matches: (row: FilterRow) => boolean, geo: LiveGeo | null, e: LiveEvent, v: LiveVenue) =>
  matches({ ...e, state: v.state, city: v.city }) &&
  (geo === null || geo.admits(e.venueId, v.latitude, v.longitude, v.geocode_precision));

/** Bytes kept, conservatively (two a JSON character), measured against RSS (test/bench/RESULTS.md, "Unique traffic"). */
const eventBytes = (e: KeptEvent) => (e ? 2 * (e.part.length + e.source.length) + 240 : 32);
const venueBytes = (v: KeptVenue) => (v ? 2 * (v.json.length + v.city.length) + 184 : 32);

/**
 * Events and venues as served, each bounded by its own bytes, for one replica state and base URL (docs/architecture.md,
 * "Caches"). An event is kept from its second reading (db/seen-once.ts, a table of 4 Mi bits by id: 512 KiB).
 */
export class HydratedEvents {
  readonly #events: TwoGenerations<number, KeptEvent>;
  readonly #venues: TwoGenerations<number, KeptVenue>;
  readonly #seen = new SeenOnce(1 << 22);
  /** The base URL as it reads inside the served JSON. */
  readonly #base: string;
  #state = "";

  constructor(
    readonly baseUrl: string,
    budget: { eventBytes: number; venueBytes: number },
  ) {
    this.#base = jsonBase(baseUrl);
    this.#events = new TwoGenerations({ size: budget.eventBytes, sizeOf: eventBytes });
    this.#venues = new TwoGenerations({ size: budget.venueBytes, sizeOf: venueBytes });
  }

  /** The page's events and venues as kept for `state` (all dropped when it moved), reading the ones not kept. */
  read(db: Db, state: string, keys: readonly PagePosition[]): Array<[KeptEvent, KeptVenue]> {
    if (state !== this.#state) {
      this.#events.clear();
      this.#venues.clear();
      this.#state = state;
    }
    const found: KeptEvent[] = keys.map((k) => this.#events.get(k.id) ?? (undefined as unknown as KeptEvent));
    const missing = keys.filter((_, i) => found[i] === undefined).map((k) => k.id);
    if (missing.length > 0) {
      // Placing rows by id is cheaper than sorting in SQL.
      const byId = new Map<number, EventRow>();
      for (const r of db.prepare<EventRow>(EVENTS_SQL).all({ ids: JSON.stringify(missing) })) byId.set(r.id, r);
      for (let i = 0; i < keys.length; i++) {
        if (found[i] !== undefined) continue;
        const r = byId.get(keys[i].id);
        found[i] = r ? liveEvent(r, this.#base) : false;
        if (this.admit(keys[i].id)) this.#events.set(keys[i].id, found[i]);
      }
    }
    const venues = found.map((e) => (e ? this.#venues.get(e.venueId) : false));
    const venueIds = new Set<number>();
    for (let i = 0; i < found.length; i++) if (venues[i] === undefined) venueIds.add((found[i] as LiveEvent).venueId);
    if (venueIds.size > 0) {
      const read = new Map<number, KeptVenue>();
      for (const v of db.prepare<VenueRow>(VENUES_SQL).all({ ids: JSON.stringify([...venueIds]) }))
        read.set(v.id, keptVenue(v));
      for (const id of venueIds) this.#venues.set(id, read.get(id) ?? false);
      for (let i = 0; i < found.length; i++) venues[i] ??= read.get((found[i] as LiveEvent).venueId) ?? false;
    }
    return found.map((e, i) => [e, venues[i] as KeptVenue]);
  }

  /** Whether event `id` is kept for `state` now (for the bench's share of kept events). */
  has(state: string, id: number): boolean {
    return state === this.#state && this.#events.has(id);
  }

  /** Whether to keep event `id`, read now and not kept: true when it was read before. */
  admit(id: number): boolean {
    return this.#seen.admit(id);
  }

  /** Bytes held now (by the estimates above). */
  get bytes(): number {
    return this.#events.held + this.#venues.held;
  }

  /** Events kept now. */
  get size(): number {
    return this.#events.size;
  }

  clear(): void {
    this.#events.clear();
    this.#venues.clear();
    this.#seen.clear();
    this.#state = "";
  }
}

const STATE_SQL = "SELECT (SELECT data_version FROM pragma_data_version) AS dv, total_changes() AS tc";

/**
 * The replica's state as this connection sees it, equal strings for equal data: `data_version` moves when another
 * connection commits, `total_changes()` when this one writes. Inside a read transaction, the transaction's state.
 */
export function readReplicaState(db: Db): string {
  const v = db.prepare<{ dv: number; tc: number }>(STATE_SQL).get()!;
  return `${v.dv}:${v.tc}`;
}

/**
 * `readReplicaState` read at most `maxLagMs` ago, outside a transaction, for the page cache's hit path: this
 * process's own writes clear it at once (server/list/caches.ts `ReplicaWrites`), another's are seen that late at most.
 */
export class RecentReplicaState {
  #recent: { state: string; atMs: number } | null = null;

  constructor(
    private readonly db: Db,
    private readonly maxLagMs: number,
  ) {}

  read(): string {
    const now = performance.now();
    if (!this.#recent || now - this.#recent.atMs >= this.maxLagMs)
      this.#recent = { state: readReplicaState(this.db), atMs: now };
    return this.#recent.state;
  }

  clear(): void {
    this.#recent = null;
  }
}

/**
 * How far the page's window may move before the live re-check could decide differently (server/list/page-cache.ts):
 * every survivor ends at or after a window opening up to `latestAfterMs`; a row dropped for starting after the close
 * can come back only if the close moves. Rows dropped for anything else stay dropped while the replica state stands.
 */
export interface LiveBounds {
  latestAfterMs: number;
  droppedAfterClose: boolean;
}

/** A venue's JSON in key order with `distanceMiles` (its last key) null, and what servability and the re-check read. */
function keptVenue(v: VenueRow): KeptVenue {
  const { id, name, city, state, timezone, latitude, longitude, geocode_precision } = v;
  const geocodePrecision = geocode_precision;
  const venue: Venue = { id, name, city, state, timezone, latitude, longitude, geocodePrecision, distanceMiles: null };
  return { json: JSON.stringify(venue), visible: v.visible === 1, state, city, latitude, longitude, geocode_precision };
}

/**
 * The page's Events as their JSON, byte for byte JSON.stringify of the API's Event (test/hydrate-reference.ts), from
 * what `events` keeps for `state` (read in the same transaction): an event's kept part, its venue's JSON and `}`, a
 * circle's distance replacing the venue's closing `null}` (`distanceMiles` is its last key).
 */
export function hydratePageJson(
  db: Db,
  events: HydratedEvents,
  state: string,
  keys: readonly PagePosition[],
  filter: PageFilter,
  h: Hydration,
  bounds?: LiveBounds,
): string[] {
  if (keys.length === 0) return [];
  const matches = rowMatcher(filter);
  const out: string[] = [];
  for (const [e, v] of events.read(db, state, keys)) {
    // An event whose venue is gone or hidden is not servable.
    const servable = e !== false && v !== false && v.visible;
    if (servable && stillMatches(matches, h.geo, e, v)) {
      if (bounds) bounds.latestAfterMs = Math.min(bounds.latestAfterMs, e.endMs);
      // `venue.distanceMiles`: a circle's miles to the venue's live coordinate, rounded to 0.01.
      const miles =
        h.geo && v.latitude !== null && v.longitude !== null ? h.geo.miles(v.latitude, v.longitude) : undefined;
      out.push(
        miles === undefined
          ? `${e.part}${v.json}}`
          : `${e.part}${v.json.slice(0, -NULL_DISTANCE_TAIL.length)}${JSON.stringify(Math.round(miles * 100) / 100)}}}`,
      );
    } else if (servable && bounds && e.startMs > filter.beforeMs) {
      bounds.droppedAfterClose = true;
    }
  }
  return out;
}

const NULL_DISTANCE_TAIL = "null}";
