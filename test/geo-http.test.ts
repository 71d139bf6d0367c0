/**
 * Geo search over HTTP, in-process and against the Bun server: pages through circle and polygon
 * results and compares the delivered events and `venue.distanceMiles` to the brute-force
 * reference; checks composition with other filters, the geo window, check order around
 * `feature_not_in_plan`, and the 5-unit rate cost (docs/api.md, Geo search).
 */
import { beforeAll, expect, it } from "vitest";
import { DAY_MS } from "../db/contract.ts";
import {
  type Circle,
  generateVenues,
  PLACES,
  type Reference,
  type RefVenue,
  type Ring,
  referenceCircle,
  referencePolygon,
  rng,
  venueLines,
} from "./geo-reference.ts";
import { type Client, describeMatrix } from "./harness.ts";
import { nextSeq } from "./records.ts";

const NOW = Date.UTC(2030, 0, 1, 12);
const HOUR = 3_600_000;

interface RefEvent {
  id: number;
  venueId: number;
  startMs: number;
  endMs: number | null;
  status: "active" | "cancelled" | "spam";
  soldOut: boolean;
}

/** Events at about 40% of venues (the rest have none), start times on the hour so they tie. */
function generateEvents(venues: RefVenue[]): RefEvent[] {
  const r = rng(11);
  const out: RefEvent[] = [];
  for (const v of venues) {
    if (r() > 0.4) continue;
    const n = 1 + Math.floor(r() * 3);
    for (let i = 0; i < n; i++) {
      const startMs = NOW + Math.floor(-72 + r() * 100 * 24) * HOUR;
      const kind = r();
      out.push({
        id: 100_000 + out.length,
        venueId: v.id,
        startMs,
        endMs: kind < 0.7 ? null : kind < 0.9 ? startMs + 3 * HOUR : startMs + 4 * DAY_MS,
        status: r() < 0.95 ? "active" : r() < 0.5 ? "cancelled" : "spam",
        soldOut: r() < 0.1,
      });
    }
  }
  return out;
}

function eventLine(e: RefEvent): object {
  return {
    type: "event",
    seq: nextSeq(),
    event: {
      id: e.id,
      venueId: e.venueId,
      title: `Event ${e.id}`,
      slug: `event-${e.id}`,
      startDate: new Date(e.startMs).toISOString(),
      endDate: e.endMs === null ? null : new Date(e.endMs).toISOString(),
      isSoldOut: e.soldOut,
      source: "scraper:geo",
      status: e.status,
    },
  };
}

const venues = generateVenues();
const events = generateEvents(venues);
const MANHATTAN_25: Circle = { kind: "circle", lat: PLACES.manhattan[0], lng: PLACES.manhattan[1], radiusMiles: 25 };
const MANHATTAN_SQUARE: Ring = [
  [40.7, -74.05],
  [40.7, -73.92],
  [40.82, -73.92],
  [40.82, -74.05],
];

// Every venue ranked just inside or just outside the 2,000 cap gets an event in the default
// window, so an off-by-one cap, or a cap that skipped venues without events, changes the pages.
for (const centroids of [false, true]) {
  for (const ref of [
    referenceCircle(venues, MANHATTAN_25, centroids),
    referencePolygon(venues, MANHATTAN_SQUARE, centroids),
  ]) {
    for (const venueId of ref.allIds.slice(1990, 2010)) {
      const startMs = NOW + (1 + (venueId % 20)) * DAY_MS;
      events.push({ id: 100_000 + events.length, venueId, startMs, endMs: null, status: "active", soldOut: false });
    }
  }
}
const venueById = new Map(venues.map((v) => [v.id, v]));

interface Expected {
  id: number;
  distanceMiles: number | null;
}

/** Servable events at the reference venues in [after, before], by (startDate, id). */
function expectedEvents(
  ref: Reference,
  window: { after: number; before: number },
  keep: (e: RefEvent) => boolean = () => true,
): Expected[] {
  const distance = new Map(
    ref.venueIds.map((id, i) => [id, ref.distances ? Math.round(ref.distances[i] * 100) / 100 : null]),
  );
  return events
    .filter((e) => distance.has(e.venueId) && e.status === "active" && keep(e))
    .filter((e) => (e.endMs ?? e.startMs) >= window.after && e.startMs <= window.before)
    .sort((a, b) => a.startMs - b.startMs || a.id - b.id)
    .map((e) => ({ id: e.id, distanceMiles: distance.get(e.venueId)! }));
}

const DEFAULT_GEO_WINDOW = { after: NOW, before: NOW + 30 * DAY_MS };

interface Body {
  data: Array<{ id: number; venue: { id: number; distanceMiles: number | null } }>;
  page: { nextCursor: string | null; hasMore: boolean; count: number };
  error?: { code: string };
}

/** Follows nextCursor to the end with random page sizes; returns every delivered event. */
async function pageAll(c: Client, key: string, query: string, seed = 1): Promise<Expected[]> {
  const r = rng(seed);
  const out: Expected[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 500; pages++) {
    const limit = 1 + Math.floor(r() * 100);
    const res = await c.get(
      `/v1/events?${query}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      key,
    );
    const body = (await res.json()) as Body;
    expect(res.status, JSON.stringify(body.error)).toBe(200);
    for (const e of body.data) out.push({ id: e.id, distanceMiles: e.venue.distanceMiles });
    if (!body.page.hasMore) return out;
    cursor = body.page.nextCursor;
  }
  throw new Error("did not finish paging");
}

const circleQuery = (c: Circle) => `lat=${c.lat}&lng=${c.lng}&radius_miles=${c.radiusMiles}`;
const ringText = (ring: Ring) => encodeURIComponent(ring.map(([lat, lng]) => `${lat},${lng}`).join(";"));
const KANSAS_CITY: Circle = { kind: "circle", lat: 39.1, lng: -94.6, radiusMiles: 10 };
const UNLIMITED = { rateSustained: 1_000_000_000, rateBurst: 1_000_000_000 };

describeMatrix("geo search over HTTP", (use) => {
  let key = "";

  beforeAll(async () => {
    const c = use();
    await c.setClock(new Date(NOW).toISOString());
    const lines = [...venueLines(venues, nextSeq), ...events.map(eventLine)];
    for (let i = 0; i < lines.length; i += 5000) await c.records(lines.slice(i, i + 5000));
    key = await c.keyFor({ plan: "enterprise", ...UNLIMITED });
  });

  it("a 25-mile circle over the 2,000-venue cap pages to exactly the reference, with distances", async () => {
    for (const centroids of [false, true]) {
      const ref = referenceCircle(venues, MANHATTAN_25, centroids);
      expect(ref.matched).toBeGreaterThan(2000);
      const want = expectedEvents(ref, DEFAULT_GEO_WINDOW);
      expect(want.length).toBeGreaterThan(150);
      const got = await pageAll(
        use(),
        key,
        `${circleQuery(MANHATTAN_25)}${centroids ? "&include_centroids=true" : ""}`,
      );
      expect(got).toEqual(want);
    }
  });

  it("a polygon over the cap pages to exactly the reference; distanceMiles is null", async () => {
    for (const centroids of [false, true]) {
      const ref = referencePolygon(venues, MANHATTAN_SQUARE, centroids);
      expect(ref.matched).toBeGreaterThan(2000);
      const want = expectedEvents(ref, DEFAULT_GEO_WINDOW);
      expect(want.length).toBeGreaterThan(150);
      const got = await pageAll(
        use(),
        key,
        `polygon=${ringText(MANHATTAN_SQUARE)}${centroids ? "&include_centroids=true" : ""}`,
        2,
      );
      expect(got).toEqual(want);
    }
  });

  it("composes with state across a state line, with exclude_sold_out, and in Alaska, Hawaii and across ±180°", async () => {
    const c = use();
    const kc = referenceCircle(venues, KANSAS_CITY, false);
    for (const state of ["KS", "MO"]) {
      const want = expectedEvents(kc, DEFAULT_GEO_WINDOW, (e) => venueById.get(e.venueId)!.state === state);
      expect(want.length).toBeGreaterThan(0);
      expect(await pageAll(c, key, `${circleQuery(KANSAS_CITY)}&state=${state.toLowerCase()}`, 3)).toEqual(want);
    }
    const square = referencePolygon(venues, MANHATTAN_SQUARE, false);
    const unsold = expectedEvents(square, DEFAULT_GEO_WINDOW, (e) => !e.soldOut);
    expect(await pageAll(c, key, `polygon=${ringText(MANHATTAN_SQUARE)}&exclude_sold_out=true`, 4)).toEqual(unsold);
    for (const place of [PLACES.anchorage, PLACES.honolulu, PLACES.aleutians]) {
      const circle: Circle = { kind: "circle", lat: place[0], lng: place[1], radiusMiles: 25 };
      const want = expectedEvents(referenceCircle(venues, circle, true), DEFAULT_GEO_WINDOW);
      expect(want.length).toBeGreaterThan(0);
      expect(await pageAll(c, key, `${circleQuery(circle)}&include_centroids=true`, 5)).toEqual(want);
    }
  });

  it("geo windows: 30 days by default, clamped at 90", async () => {
    const after = NOW + 2 * DAY_MS;
    const ref = referenceCircle(venues, MANHATTAN_25, true);
    const want = expectedEvents(ref, { after, before: after + 90 * DAY_MS });
    // The data reaches past both bounds, so the default and the clamp both cut something.
    expect(want.some((e) => events.find((x) => x.id === e.id)!.startMs > after + 60 * DAY_MS)).toBe(true);
    expect(expectedEvents(ref, { after, before: after + 200 * DAY_MS }).length).toBeGreaterThan(want.length);
    const q = `${circleQuery(MANHATTAN_25)}&include_centroids=true&starts_after=${new Date(after).toISOString()}`;
    expect(await pageAll(use(), key, `${q}&starts_before=${new Date(after + 200 * DAY_MS).toISOString()}`, 6)).toEqual(
      want,
    );
    expect(await pageAll(use(), key, q, 7)).toEqual(expectedEvents(ref, { after, before: after + 30 * DAY_MS }));
  });

  it("distanceMiles is null without a geo filter", async () => {
    const res = await use().get("/v1/events?state=NY&limit=5", key);
    const body = (await res.json()) as Body;
    expect(body.data.length).toBeGreaterThan(0);
    for (const e of body.data) expect(e.venue.distanceMiles).toBeNull();
  });

  it("a cursor is bound to the geo filter and to include_centroids", async () => {
    const c = use();
    const q = circleQuery(MANHATTAN_25);
    const first = (await (await c.get(`/v1/events?${q}&limit=5`, key)).json()) as Body;
    const cursor = `&cursor=${encodeURIComponent(first.page.nextCursor!)}`;
    expect((await c.get(`/v1/events?${q}&limit=5${cursor}`, key)).status).toBe(200);
    for (const changed of [
      `${q}&include_centroids=true`,
      `${q}&include_centroids=false`,
      q.replace("radius_miles=25", "radius_miles=24"),
    ]) {
      const res = await c.get(`/v1/events?${changed}&limit=5${cursor}`, key);
      expect(((await res.json()) as Body).error?.code).toBe("invalid_cursor");
    }
  });

  it("geo errors come after the other parameters and before include_centroids and the date range", async () => {
    const c = use();
    const code = async (q: string) => ((await (await c.get(`/v1/events?${q}`, key)).json()) as Body).error?.code;
    expect(await code("state=XX&lat=91&lng=0&radius_miles=1")).toBe("invalid_state");
    expect(await code("limit=0&polygon=bad")).toBe("invalid_limit");
    expect(await code("cursor=%40%40&lat=91&lng=0&radius_miles=1")).toBe("invalid_cursor");
    expect(await code("lat=91&lng=0&radius_miles=1&include_centroids=yes")).toBe("invalid_coordinates");
    expect(await code("lat=40&lng=0&radius_miles=26")).toBe("invalid_radius");
    expect(await code(`polygon=${ringText(MANHATTAN_SQUARE)}&lat=40&lng=-74&radius_miles=5`)).toBe(
      "conflicting_geo_filters",
    );
    expect(await code("polygon=1,2;3,4&starts_after=2030-02-01&starts_before=2030-01-15")).toBe("invalid_polygon");
    expect(await code(`polygon=${ringText(MANHATTAN_SQUARE)}&include_centroids=1`)).toBe("invalid_include_centroids");
  });
});

describeMatrix("geo search: plans and rate cost", (use) => {
  it("feature_not_in_plan comes before the ring is parsed and before every parameter, after unsupported_pagination", async () => {
    const c = use();
    await c.setClock(new Date(NOW).toISOString());
    const basic = await c.keyFor({ plan: "basic", ...UNLIMITED });
    const trial = await c.keyFor({ plan: "none", verified: true });
    const get = async (k: string, q: string) => {
      const res = await c.get(`/v1/events?${q}`, k);
      return [res.status, ((await res.json()) as Body).error?.code ?? "ok"];
    };
    for (const q of ["polygon=", "polygon=not-a-ring", "polygon=1,2;3,4;5,6&lat=91", "state=XX&polygon=1,2;3,4;5,6"]) {
      expect(await get(basic, q)).toEqual([403, "feature_not_in_plan"]);
    }
    expect(await get(basic, "page=2&polygon=x")).toEqual([400, "unsupported_pagination"]);
    expect(await get(basic, circleQuery(MANHATTAN_25))).toEqual([200, "ok"]);
    expect(await get(trial, "polygon=40.7,-74;40.8,-74;40.8,-73.9")).toEqual([403, "feature_not_in_plan"]);
    expect(await get(trial, circleQuery(MANHATTAN_25))).toEqual([200, "ok"]);
  });

  it("a geo request costs 5 rate units, even when malformed", async () => {
    const c = use();
    const k = await c.keyFor({ plan: "business" });
    const remaining = async (q: string) => (await c.get(`/v1/events?${q}`, k)).headers.get("x-ratelimit-remaining");
    expect(await remaining("state=NY")).toBe("59");
    expect(await remaining(circleQuery(MANHATTAN_25))).toBe("54");
    expect((await c.get("/v1/events?lat=91", k)).status).toBe(400);
    expect((await c.get("/v1/events?polygon=", k)).status).toBe(400);
    expect((await c.get("/v1/events?radius_miles=", k)).status).toBe(400);
    expect(await remaining(`polygon=${ringText(MANHATTAN_SQUARE)}`)).toBe("34");
    expect(await remaining("state=NY")).toBe("33");
  });
});
