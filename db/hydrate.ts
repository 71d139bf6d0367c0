/**
 * Hydration of a selected page (CONTRACT §4): the page's ids are read from the LIVE `events` and
 * `venues` rows in one query, and rows that are no longer servable — cancelled, deleted, spam,
 * demoted to a duplicate, venue hidden or gone — are dropped. A row whose live fields no longer
 * satisfy the request (rescheduled out of the window, now sold out under exclude_sold_out, …)
 * is dropped too, so a page never contradicts its own filters. Survivors keep snapshot order.
 *
 * Served fields were derived at apply time (sync/derive.ts); this module only shapes them into
 * the spec's Event (every key present, optional ones null, `venue` always an object).
 *
 * Hot path: live rows and their serialized Event are kept by event id (`HydratedEvents`, owned by
 * the list path's caches) for exactly one state of the replica. The state is `PRAGMA
 * data_version` (moves when ANOTHER connection commits: `marquee sync`, a snapshot refresh
 * elsewhere) plus `total_changes()` (moves when THIS connection writes: test-mode records,
 * in-process sync); either moving drops every kept row. Read inside `readConsistently`, after the
 * page selection has taken the read snapshot, the pair names the state the kept rows were read
 * from. A page over events seen before, by any query, is then a concatenation of their JSON.
 */
import { LRUCache } from "lru-cache";
import { AGGREGATOR_VENDORS, eventUrlFor, HOT_PATH, ticketUrlFor } from "./contract.ts";
import type { Db } from "./driver.ts";
import { venueSetOf, type PageFilter, type PagePosition } from "./events-query.ts";
import { SERVABLE_SQL } from "./snapshot.ts";

export interface Venue {
  id: number;
  name: string;
  city: string;
  state: string;
  timezone: string | null;
  latitude: number | null;
  longitude: number | null;
  geocodePrecision: string | null;
  distanceMiles: number | null;
}

export interface Event {
  id: number;
  title: string;
  slug: string;
  eventUrl: string;
  startDate: string;
  endDate: string | null;
  cost: string | null;
  isFree: boolean | null;
  isSoldOut: boolean;
  isLowTickets: boolean;
  age: string | null;
  ticketUrl: string | null;
  website: string | null;
  ticketLinkStatus: string;
  imageUrl: string | null;
  categories: string[];
  venue: Venue;
}

interface Row {
  id: number;
  title: string;
  slug: string;
  start_date: string;
  start_ms: number;
  end_date: string | null;
  end_ms: number | null;
  cost: string | null;
  is_free: number | null;
  is_sold_out: number;
  is_low_tickets: number;
  age: string | null;
  ticket_destination: string | null;
  website: string | null;
  ticket_link_status: string;
  image_url: string | null;
  categories: string;
  source: string;
  vendor: string;
  venue_id: number;
  venue_name: string;
  city: string;
  state: string;
  timezone: string | null;
  latitude: number | null;
  longitude: number | null;
  geocode_precision: string | null;
}

const HYDRATE_SQL = `
SELECT e.id, e.title, e.slug, e.start_date, e.start_ms, e.end_date, e.end_ms, e.cost, e.is_free, e.is_sold_out,
       e.is_low_tickets, e.age, e.ticket_destination, e.website, e.ticket_link_status, e.image_url, e.categories,
       e.source, e.vendor, v.id AS venue_id, v.name AS venue_name, v.city, v.state, v.timezone, v.latitude,
       v.longitude, v.geocode_precision
FROM json_each($ids) j
JOIN events e ON e.id = j.value
JOIN venues v ON v.id = e.venue_id
WHERE ${SERVABLE_SQL}`;

const aggregators = new Set<string>(AGGREGATOR_VENDORS);

/** `_` matches any one character, everything else itself (CONTRACT §5), as a prefix. */
export function sourceMatcher(tokens: readonly string[]): (source: string) => boolean {
  const pattern = tokens.map((t) => t.replace(/[.]/g, "\\.").replaceAll("_", ".")).join("|");
  const re = new RegExp(`^(?:${pattern})`);
  return (source) => re.test(source);
}

function stillMatches(r: Row, f: PageFilter, venues: ReadonlySet<number> | null, source: ((s: string) => boolean) | null): boolean {
  const end = Math.max(r.end_ms ?? r.start_ms, r.start_ms);
  return (
    end >= f.afterMs &&
    r.start_ms <= f.beforeMs &&
    (f.state === null || r.state === f.state) &&
    (f.city === null || r.city === f.city) &&
    !(f.excludeSoldOut && r.is_sold_out === 1) &&
    !(f.excludeAggregators && aggregators.has(r.vendor)) &&
    (venues === null || venues.has(r.venue_id)) &&
    (source === null || source(r.source))
  );
}

export interface Hydration {
  baseUrl: string;
  /** Circle queries: unrounded miles per venue id. */
  distanceMiles: ReadonlyMap<number, number> | null;
}

function toEvent(r: Row, h: Hydration): Event {
  const distance = h.distanceMiles?.get(r.venue_id);
  return {
    id: r.id,
    title: r.title,
    slug: r.slug,
    eventUrl: eventUrlFor(h.baseUrl, r),
    startDate: r.start_date,
    endDate: r.end_date,
    cost: r.cost,
    isFree: r.is_free === null ? null : r.is_free === 1,
    isSoldOut: r.is_sold_out === 1,
    isLowTickets: r.is_low_tickets === 1,
    age: r.age,
    ticketUrl: r.ticket_destination === null ? null : ticketUrlFor(h.baseUrl, r.id),
    website: r.website,
    ticketLinkStatus: r.ticket_link_status,
    imageUrl: r.image_url,
    categories: JSON.parse(r.categories) as string[],
    venue: {
      id: r.venue_id,
      name: r.venue_name,
      city: r.city,
      state: r.state,
      timezone: r.timezone,
      latitude: r.latitude,
      longitude: r.longitude,
      geocodePrecision: r.geocode_precision,
      distanceMiles: distance === undefined ? null : Math.round(distance * 100) / 100,
    },
  };
}

/** A live row and its Event as JSON with `venue.distanceMiles` null; `false`: not servable now. */
type Cached = { row: Row; json: string } | false;

/** Rough bytes a kept row holds: its JSON, the row's strings (about as long) and object overhead. */
const cachedBytes = (c: Cached) => (c ? 2 * c.json.length + 256 : 16);

/**
 * Live rows and their JSON, by event id, for one state of the replica and one base URL, bounded by
 * bytes. `rowsFor` hands out the rows of the state it is given and drops them all when it moves.
 */
export class HydratedEvents {
  readonly #rows: LRUCache<number, Cached>;
  #state = "";

  constructor(
    readonly baseUrl: string,
    maxBytes: number,
  ) {
    this.#rows = new LRUCache<number, Cached>({ maxSize: maxBytes, sizeCalculation: cachedBytes });
  }

  rowsFor(state: string): LRUCache<number, Cached> {
    if (state !== this.#state) {
      this.#rows.clear();
      this.#state = state;
    }
    return this.#rows;
  }

  /** Bytes held now (by the estimate above). */
  get bytes(): number {
    return this.#rows.calculatedSize;
  }

  clear(): void {
    this.#rows.clear();
    this.#state = "";
  }
}

const STATE_SQL = "SELECT (SELECT data_version FROM pragma_data_version) AS dv, total_changes() AS tc";

/**
 * The replica's state as this connection sees it: equal strings, equal data. Inside a read
 * transaction it is the transaction's state (the pragma takes the read lock like any read).
 */
export function readReplicaState(db: Db): string {
  const v = db.prepare<{ dv: number; tc: number }>(STATE_SQL).get()!;
  return `${v.dv}:${v.tc}`;
}

/**
 * `readReplicaState` as read at most `maxLagMs` ago, outside a transaction: another
 * connection's commit is seen that late at most, and this process's own writes at once, since
 * every writer of the serving process clears the list path's caches, this included
 * (server/context.ts `notifyReplicaChange`). For the page cache's hit path, which then reads
 * nothing from the database.
 */
export class RecentReplicaState {
  #recent: { state: string; atMs: number } | null = null;

  constructor(
    private readonly db: Db,
    private readonly maxLagMs: number,
  ) {}

  read(): string {
    const now = performance.now();
    if (!this.#recent || now - this.#recent.atMs >= this.maxLagMs) this.#recent = { state: readReplicaState(this.db), atMs: now };
    return this.#recent.state;
  }

  clear(): void {
    this.#recent = null;
  }
}

/** The page's live rows (false: not servable), from the kept rows or one query for the misses. */
function liveRows(db: Db, kept: LRUCache<number, Cached>, keys: readonly PagePosition[], baseUrl: string): Cached[] {
  const out: (Cached | undefined)[] = keys.map((k) => kept.get(k.id));
  const missing = keys.filter((_, i) => out[i] === undefined).map((k) => k.id);
  if (missing.length > 0) {
    // Placing rows by id is cheaper than sorting in SQL.
    const byId = new Map<number, Row>();
    for (const r of db.prepare<Row>(HYDRATE_SQL).all({ ids: JSON.stringify(missing) })) byId.set(r.id, r);
    for (let i = 0; i < keys.length; i++) {
      if (out[i] !== undefined) continue;
      const row = byId.get(keys[i].id);
      out[i] = row ? { row, json: JSON.stringify(toEvent(row, { baseUrl, distanceMiles: null })) } : false;
      kept.set(keys[i].id, out[i]!);
    }
  }
  return out as Cached[];
}

/**
 * How far the page's window may move before the live re-check could decide differently
 * (server/list/page-cache.ts): every survivor still ends at or after a window opening no later
 * than `latestAfterMs`; a row dropped for starting after the window's close could come back
 * only if the close moves (`droppedAfterClose`). Rows dropped for anything else stay dropped
 * while the replica's state is the same, as do rows that ended before the window opened.
 */
export interface LiveBounds {
  latestAfterMs: number;
  droppedAfterClose: boolean;
}

/** The survivors' rows, in page order (page order is snapshot order). */
function survivors(
  db: Db, kept: LRUCache<number, Cached>, keys: readonly PagePosition[], filter: PageFilter, baseUrl: string, bounds?: LiveBounds,
): Array<{ row: Row; json: string }> {
  if (keys.length === 0) return [];
  const venues = venueSetOf(filter);
  const source = filter.sources === null ? null : sourceMatcher(filter.sources);
  const out: Array<{ row: Row; json: string }> = [];
  for (const c of liveRows(db, kept, keys, baseUrl)) {
    if (c && stillMatches(c.row, filter, venues, source)) {
      out.push(c);
      if (bounds) bounds.latestAfterMs = Math.min(bounds.latestAfterMs, Math.max(c.row.end_ms ?? c.row.start_ms, c.row.start_ms));
    } else if (c && bounds && c.row.start_ms > filter.beforeMs) {
      bounds.droppedAfterClose = true;
    }
  }
  return out;
}

/** Reads the page's live rows and shapes the survivors, in page order (nothing kept). */
export function hydratePage(db: Db, keys: readonly PagePosition[], filter: PageFilter, h: Hydration): Event[] {
  return survivors(db, new LRUCache({ max: Math.max(1, keys.length) }), keys, filter, h.baseUrl).map((c) => toEvent(c.row, h));
}

const NULL_DISTANCE_TAIL = "null}}";

/**
 * The same page as `hydratePage`, each Event already serialized: byte for byte
 * `JSON.stringify(event)`, from `events` kept for `state` (read in the same transaction).
 * `venue.distanceMiles` is the Event's last key, so a circle query's distance replaces the kept
 * fragment's closing `null}}`.
 */
export function hydratePageJson(
  db: Db, events: HydratedEvents, state: string, keys: readonly PagePosition[], filter: PageFilter, h: Hydration, bounds?: LiveBounds,
): string[] {
  return survivors(db, events.rowsFor(state), keys, filter, events.baseUrl, bounds).map(({ row, json }) => {
    const distance = h.distanceMiles?.get(row.venue_id);
    if (distance === undefined) return json;
    return `${json.slice(0, -NULL_DISTANCE_TAIL.length)}${JSON.stringify(Math.round(distance * 100) / 100)}}}`;
  });
}
