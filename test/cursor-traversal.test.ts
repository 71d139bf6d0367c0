/**
 * Keyset traversal over (startDate, id) (docs/api.md, Pagination): a full traversal with
 * random page sizes returns every matching event exactly once, on a data set with heavy startDate
 * ties where short and long events share start times; a current cursor refuses changed filters.
 */
import fc from "fast-check";
import { beforeAll, expect, it } from "vitest";
import { type Client, describeMatrix } from "./harness.ts";
import { eventRecord, venueRecord } from "./records.ts";

const NOW_MS = Date.parse("2030-03-01T00:00:00Z");
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const iso = (ms: number) => new Date(ms).toISOString();

interface Spec {
  id: number;
  venue: number;
  startMs: number;
  endMs: number | null;
  soldOut: boolean;
  source: string;
  status: string;
}

const STATES: Record<number, string> = { 1: "CA", 2: "NY", 3: "CA" };
const SOURCES = ["ticketmaster", "scraper:fillmore", "songkick:us", "eventbrite", "scraper:fill-more"];
// Five distinct start times inside the default window, plus running and ended long events.
const STARTS = [NOW_MS + 2 * DAY, NOW_MS + 2 * DAY + HOUR, NOW_MS + 5 * DAY, NOW_MS + 9 * DAY, NOW_MS + 40 * DAY];

function dataSet(): Spec[] {
  let seed = 7;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const out: Spec[] = [];
  for (let i = 0; i < 300; i++) {
    const startMs = STARTS[rand(STARTS.length)];
    // Every 7th event lasts days: a long snapshot row sharing its start time with short ones.
    const endMs = i % 7 === 0 ? startMs + (2 + rand(5)) * DAY : i % 3 === 0 ? startMs + 3 * HOUR : null;
    out.push({
      id: 1000 + ((i * 7919) % 3000),
      venue: 1 + rand(3),
      startMs,
      endMs,
      soldOut: rand(5) === 0,
      source: SOURCES[rand(SOURCES.length)],
      status: rand(20) === 0 ? "cancelled" : "active",
    });
  }
  // Long events that started before now: two still running, one over.
  out.push({
    id: 50,
    venue: 1,
    startMs: NOW_MS - 4 * DAY,
    endMs: NOW_MS + DAY,
    soldOut: false,
    source: "songkick",
    status: "active",
  });
  out.push({
    id: 51,
    venue: 2,
    startMs: NOW_MS - 10 * DAY,
    endMs: NOW_MS + 2 * DAY,
    soldOut: true,
    source: "axs",
    status: "active",
  });
  out.push({
    id: 52,
    venue: 3,
    startMs: NOW_MS - 10 * DAY,
    endMs: NOW_MS - DAY,
    soldOut: false,
    source: "axs",
    status: "active",
  });
  return out;
}

/** The brute-force answer: servable, in the window, through the filters, by (start, id). */
function expected(specs: Spec[], f: { state?: string; excludeSoldOut?: boolean; source?: string } = {}): number[] {
  const before = NOW_MS + 90 * DAY;
  return specs
    .filter((s) => s.status === "active" && Math.max(s.endMs ?? s.startMs, s.startMs) >= NOW_MS && s.startMs <= before)
    .filter((s) => (f.state ? STATES[s.venue] === f.state : true))
    .filter((s) => (f.excludeSoldOut ? !s.soldOut : true))
    .filter((s) => (f.source ? s.source.startsWith(f.source) : true))
    .sort((a, b) => a.startMs - b.startMs || a.id - b.id)
    .map((s) => s.id);
}

interface Page {
  data: Array<{ id: number }>;
  page: { nextCursor: string | null; hasMore: boolean; count: number };
}

async function page(c: Client, key: string, qs: string): Promise<Page> {
  const res = await c.get(`/v1/events?${qs}`, key);
  if (res.status !== 200) throw new Error(`${qs}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Page;
}

async function traverse(c: Client, key: string, filters: string, limits: number[]): Promise<number[]> {
  const out: number[] = [];
  let cursor: string | null = null;
  for (let i = 0; ; i++) {
    if (i > 400) throw new Error("traversal does not end");
    const limit = limits[i % limits.length];
    const p = await page(c, key, [filters, `limit=${limit}`, cursor && `cursor=${cursor}`].filter(Boolean).join("&"));
    expect(p.page.count).toBe(p.data.length);
    out.push(...p.data.map((e) => e.id));
    if (!p.page.hasMore) {
      expect(p.page.nextCursor).toBeNull();
      return out;
    }
    expect(p.data).toHaveLength(limit); // nothing is dropped in this data set
    cursor = p.page.nextCursor;
  }
}

describeMatrix("cursor traversal", (use) => {
  let key: string;
  const specs = dataSet();
  beforeAll(async () => {
    const c = use();
    await c.setClock(iso(NOW_MS));
    key = await c.keyFor({ plan: "enterprise", rateSustained: 100_000, rateBurst: 100_000 });
    await c.records([
      ...Object.entries(STATES).map(([id, state]) => venueRecord(Number(id), { state, city: `City ${id}` })),
      ...specs.map((s) =>
        eventRecord(s.id, s.venue, iso(s.startMs), {
          endDate: s.endMs === null ? null : iso(s.endMs),
          isSoldOut: s.soldOut,
          source: s.source,
          status: s.status,
        }),
      ),
    ]);
  });

  it("has heavy ties: the data set is what the test claims", () => {
    const all = expected(specs);
    expect(all.length).toBeGreaterThan(230);
    const perStart = new Map<number, number>();
    for (const s of specs) perStart.set(s.startMs, (perStart.get(s.startMs) ?? 0) + 1);
    expect(Math.min(...STARTS.map((t) => perStart.get(t)!))).toBeGreaterThan(40);
  });

  it("returns every matching event exactly once, in order, for random page sizes", async () => {
    const c = use();
    const filterSets: Array<[string, number[]]> = [
      ["", expected(specs)],
      ["state=ca", expected(specs, { state: "CA" })],
      ["exclude_sold_out=true", expected(specs, { excludeSoldOut: true })],
      ["source=scraper:fill", expected(specs, { source: "scraper:fill" })],
      ["state=NY&exclude_sold_out=true", expected(specs, { state: "NY", excludeSoldOut: true })],
    ];
    for (const [filters, want] of filterSets) {
      await fc.assert(
        fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 8 }), async (limits) => {
          expect(await traverse(c, key, filters, limits)).toEqual(want);
        }),
        { numRuns: 4 },
      );
    }
    // Page size 1 walks through every tie one row at a time.
    expect(await traverse(c, key, "", [1, 2, 3])).toEqual(expected(specs));
  });

  it("restarts at page one whenever the cursor is omitted", async () => {
    const c = use();
    const first = await page(c, key, "limit=5");
    expect((await page(c, key, "limit=5")).data).toEqual(first.data);
    expect(first.data.map((e) => e.id)).toEqual(expected(specs).slice(0, 5));
  });

  it("refuses a current cursor replayed with any changed filter or date, not a changed limit", async () => {
    const c = use();
    const base = "state=CA&exclude_sold_out=false";
    const first = await page(c, key, `${base}&limit=3`);
    const cursor = first.page.nextCursor!;
    const next = await page(c, key, `${base}&limit=50&cursor=${cursor}&unknown=1`);
    expect(next.data[0].id).toBe(expected(specs, { state: "CA" })[3]);
    for (const changed of [
      "state=ca&exclude_sold_out=false",
      "exclude_sold_out=false",
      "state=CA",
      "state=CA&exclude_sold_out=true",
      `${base}&city=`,
      `${base}&city=City%201`,
      `${base}&source=ticketmaster`,
      `${base}&exclude_aggregators=false`,
      `${base}&include_centroids=false`,
      `${base}&starts_after=2030-03-01`,
      `${base}&starts_before=2030-05-01`,
      `${base}&lat=37.78&lng=-122.43&radius_miles=5`,
    ]) {
      const res = await c.get(`/v1/events?${changed}&cursor=${cursor}`, key);
      const body = (await res.json()) as { error?: { code: string } };
      expect({ changed, status: res.status, code: body.error?.code }).toEqual({
        changed,
        status: 400,
        code: "invalid_cursor",
      });
    }
  });
});
