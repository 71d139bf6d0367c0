/**
 * GET /v1/events: envelope, Event shape, filters and the date window (docs/api.md, "The Event
 * object"; docs/upstream-records.md; docs/api.md, Listing events), in-process and against the Bun server.
 */
import { beforeAll, expect, it } from "vitest";
import { type Client, describeMatrix } from "./harness.ts";
import { eventRecord, venueRecord } from "./records.ts";

const NOW = "2030-01-01T00:00:00Z";
const DAY = 86_400_000;
const at = (days: number, hours = 20) => new Date(Date.parse(NOW) + days * DAY + hours * 3_600_000).toISOString();

interface Page {
  data: Array<Record<string, any>>;
  page: { nextCursor: string | null; hasMore: boolean; count: number };
}

async function list(c: Client, key: string, qs = ""): Promise<Page> {
  const res = await c.get(`/v1/events${qs}`, key);
  if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
  return (await res.json()) as Page;
}

const ids = (p: Page) => p.data.map((e) => e.id);

const EVENT_KEYS = [
  "id",
  "title",
  "slug",
  "eventUrl",
  "startDate",
  "endDate",
  "cost",
  "isFree",
  "isSoldOut",
  "isLowTickets",
  "age",
  "ticketUrl",
  "website",
  "ticketLinkStatus",
  "imageUrl",
  "categories",
  "venue",
];
const VENUE_KEYS = [
  "id",
  "name",
  "city",
  "state",
  "timezone",
  "latitude",
  "longitude",
  "geocodePrecision",
  "distanceMiles",
];

describeMatrix("GET /v1/events", (use) => {
  let key: string;
  beforeAll(async () => {
    const c = use();
    await c.setClock(NOW);
    key = await c.keyFor({ plan: "enterprise", rateSustained: 100_000, rateBurst: 100_000 });
    await c.records([
      venueRecord(1, { city: "San Francisco", state: "CA" }),
      venueRecord(2, {
        city: "Portland",
        state: "OR",
        timezone: null,
        latitude: null,
        longitude: null,
        geocodePrecision: null,
      }),
      venueRecord(3, { city: "Portland", state: "ME", timezone: "America/New_York" }),
      venueRecord(4, { city: "san francisco", state: "CA" }),
      venueRecord(5, { visible: false }),
      eventRecord(101, 1, at(1), {
        title: "Plain",
        costText: " $25 - $40 ",
        age: "21+",
        imageUrl: "https://img.example/1.jpg",
      }),
      eventRecord(102, 2, at(2), {
        source: "ticketmaster:us",
        isSoldOut: true,
        isFree: null,
        costText: "Free admission",
        categories: ["Bogus", "Comedy", "Music", "Comedy"],
      }),
      eventRecord(103, 3, at(3), {
        source: "scraper:axs:hall",
        isLowTickets: true,
        ticketLinks: [],
        website: null,
        costText: null,
        isFree: null,
      }),
      eventRecord(104, 4, at(4), { source: "songkick", ticketed: false, isFree: true, costText: "$10" }),
      eventRecord(105, 1, at(5), {
        source: "scraper:fillmore",
        isFree: false,
        costText: "free",
        ticketLinks: [{ url: "https://broken.example/x", seller: "tixr", broken: true }],
        website: "https://fillmore.example/e",
        websiteBroken: true,
      }),
      eventRecord(106, 5, at(6)), // hidden venue: never served
      eventRecord(107, 1, at(7), { status: "cancelled" }),
      eventRecord(108, 1, at(8), { status: "spam" }),
      eventRecord(109, 1, at(9), { duplicateOf: 101 }),
      eventRecord(110, 1, at(-3), { endDate: at(2) }), // a festival already running
      eventRecord(111, 1, at(-1), { endDate: at(-1, 23) }), // ended yesterday
      eventRecord(112, 1, at(0, -2), { source: "eventbrite" }), // started two hours before now, no end
      eventRecord(113, 1, at(95)), // beyond the default 90-day window
      eventRecord(114, 1, at(1), { source: "scraper:fill-more", slug: "a b/c" }), // ties 101 on startDate
    ]);
  });

  it("returns the envelope with every Event key, optional fields null, and private no-store", async () => {
    const c = use();
    const res = await c.get("/v1/events", key);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("private, no-store");
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get("x-ratelimit-limit")).not.toBeNull(); // access headers reach the 200
    const body = (await res.json()) as Page;
    expect(Object.keys(body)).toEqual(["data", "page"]);
    expect(body.page).toEqual({ nextCursor: null, hasMore: false, count: 7 });
    for (const e of body.data) {
      expect(Object.keys(e)).toEqual(EVENT_KEYS);
      expect(Object.keys(e.venue)).toEqual(VENUE_KEYS);
      expect(e.venue.distanceMiles).toBeNull();
    }
  });

  it("orders by startDate then id and includes running events, not ended or out-of-window ones", async () => {
    const p = await list(use(), key);
    expect(ids(p)).toEqual([110, 101, 114, 102, 103, 104, 105]);
    // 112 started two hours before now with no end: it has ended by `now`, so it is out.
    expect(ids(p)).not.toContain(112);
  });

  it("shapes fields as docs/upstream-records.md derives them", async () => {
    const c = use();
    const p = await list(c, key);
    const byId = new Map(p.data.map((e) => [e.id, e]));
    const base = c.target.baseUrl;
    expect(byId.get(101)).toMatchObject({
      title: "Plain",
      slug: "event-101",
      eventUrl: `${base}/events/101/event-101`,
      startDate: at(1).replace(".000Z", "Z"),
      endDate: null,
      cost: "$25 - $40",
      isFree: false,
      isSoldOut: false,
      isLowTickets: false,
      age: "21+",
      ticketUrl: `${base}/t/101`,
      website: "https://example.com/e/101",
      ticketLinkStatus: "available",
      imageUrl: "https://img.example/1.jpg",
      categories: ["Music"],
      venue: {
        id: 1,
        name: "Venue 1",
        city: "San Francisco",
        state: "CA",
        timezone: "America/Los_Angeles",
        latitude: 37.784,
        longitude: -122.433,
        geocodePrecision: "street",
        distanceMiles: null,
      },
    });
    expect(byId.get(102)).toMatchObject({
      isSoldOut: true,
      cost: "Free",
      isFree: null,
      categories: ["Comedy", "Music"],
      ticketLinkStatus: "available",
    });
    expect(byId.get(102)!.venue).toMatchObject({
      timezone: null,
      latitude: null,
      longitude: null,
      geocodePrecision: null,
    });
    expect(byId.get(103)).toMatchObject({
      isLowTickets: true,
      cost: null,
      isFree: null,
      ticketLinkStatus: "missing",
      website: null,
    });
    expect(byId.get(103)!.ticketUrl).toBeNull();
    expect(byId.get(104)).toMatchObject({ cost: "Free", isFree: true, ticketUrl: null, ticketLinkStatus: "available" });
    expect(byId.get(105)).toMatchObject({
      cost: null,
      isFree: false,
      website: null,
      ticketLinkStatus: "unavailable",
      ticketUrl: null,
    });
    expect(byId.get(114)!.eventUrl).toBe(`${base}/events/114/a%20b%2Fc`);
    expect(byId.get(110)!.endDate).toBe(at(2).replace(".000Z", "Z"));
  });

  it("links eventUrl to the event page and ticketUrl to a redirect to the ticket destination", async () => {
    const c = use();
    const p = await list(c, key);
    for (const e of p.data) {
      const page = await c.get(new URL(e.eventUrl).pathname);
      expect({ id: e.id, status: page.status }).toEqual({ id: e.id, status: 200 });
      expect(page.headers.get("content-type")).toContain("text/html");
      if (e.ticketUrl) {
        const redirect = await c.fetch(new URL(e.ticketUrl).pathname, { redirect: "manual" });
        expect({ id: e.id, status: redirect.status }).toEqual({ id: e.id, status: 302 });
        expect(redirect.headers.get("location")).toMatch(/^https:\/\//);
      }
    }
  });

  it("includes sold-out events flagged, and hides them with exclude_sold_out=true", async () => {
    const c = use();
    expect(ids(await list(c, key, "?exclude_sold_out=false"))).toContain(102);
    expect(ids(await list(c, key, "?exclude_sold_out=true"))).toEqual([110, 101, 114, 103, 104, 105]);
  });

  it("hides the eight aggregator vendors with exclude_aggregators=true", async () => {
    const c = use();
    // 102 ticketmaster:us and 103 scraper:axs:hall are aggregator vendors (vendor = after `scraper:`, before `:`).
    expect(ids(await list(c, key, "?exclude_aggregators=true"))).toEqual([110, 101, 114, 104, 105]);
    expect(ids(await list(c, key, "?exclude_aggregators=true&exclude_sold_out=true"))).toEqual([
      110, 101, 114, 104, 105,
    ]);
  });

  it("filters state case-insensitively and drops an empty or blank state", async () => {
    const c = use();
    expect(ids(await list(c, key, "?state=ca"))).toEqual([110, 101, 114, 104, 105]);
    expect(ids(await list(c, key, "?state=Me"))).toEqual([103]);
    expect(ids(await list(c, key, "?state=%20or%20"))).toEqual([102]);
    expect(ids(await list(c, key, "?state="))).toHaveLength(7);
    expect(ids(await list(c, key, "?state=%20%20"))).toHaveLength(7);
    expect(ids(await list(c, key, "?state=WY"))).toEqual([]);
  });

  it("filters city exactly and case-sensitively, composes with state, drops an empty city", async () => {
    const c = use();
    expect(ids(await list(c, key, "?city=Portland"))).toEqual([102, 103]);
    expect(ids(await list(c, key, "?city=Portland&state=OR"))).toEqual([102]);
    expect(ids(await list(c, key, "?city=san%20francisco"))).toEqual([104]);
    expect(ids(await list(c, key, "?city=San%20Francisco"))).toEqual([110, 101, 114, 105]);
    expect(ids(await list(c, key, "?city=Portlnd"))).toEqual([]);
    expect(ids(await list(c, key, "?city="))).toHaveLength(7);
    expect(ids(await list(c, key, "?city=Portland&city=Portland"))).toEqual([102, 103]);
    expect((await list(c, key, "?city=Portland&city=Seattle")).page).toEqual({
      nextCursor: null,
      hasMore: false,
      count: 0,
    });
  });

  it("matches source tokens as prefixes with _ as a one-character wildcard, repeatable and comma-separated", async () => {
    const c = use();
    expect(ids(await list(c, key, "?source=ticketmaster"))).toEqual([102]);
    expect(ids(await list(c, key, "?source=scraper:fill"))).toEqual([110, 101, 114, 105]);
    expect(ids(await list(c, key, "?source=scraper:fill_more"))).toEqual([114]);
    expect(ids(await list(c, key, "?source=scraper:fill-more"))).toEqual([114]);
    expect(ids(await list(c, key, "?source=songkick,ticketmaster:us"))).toEqual([102, 104]);
    expect(ids(await list(c, key, "?source=songkick&source=%20ticketmaster%20,"))).toEqual([102, 104]);
    expect(ids(await list(c, key, "?source=s_ngkick"))).toEqual([104]);
    expect(ids(await list(c, key, "?source=nosuchvendor"))).toEqual([]);
    expect(ids(await list(c, key, "?source=,%20,"))).toHaveLength(7);
    expect(ids(await list(c, key, "?source="))).toHaveLength(7);
    // '.' is literal, not a wildcard.
    expect(ids(await list(c, key, "?source=songkic."))).toEqual([]);
  });

  it("opens the window at starts_after and closes it at starts_before", async () => {
    const c = use();
    expect(ids(await list(c, key, `?starts_after=${at(3, 0)}`))).toEqual([103, 104, 105]);
    expect(ids(await list(c, key, `?starts_before=${at(3)}`))).toEqual([110, 101, 114, 102, 103]);
    expect(ids(await list(c, key, `?starts_before=${at(3, 19)}`))).toEqual([110, 101, 114, 102]);
    // Date-only values are midnight UTC; running events are in, ended ones out.
    expect(ids(await list(c, key, "?starts_after=2030-01-01&starts_before=2030-01-03"))).toEqual([110, 101, 114]);
    expect(ids(await list(c, key, "?starts_after=2029-12-31T20:00:00-05:00&starts_before=2030-01-03"))).toEqual([
      110, 101, 114,
    ]);
    // 111 ends at 23:00 and 112 (no end) started at 22:00: only 111 is still running at 22:30.
    expect(ids(await list(c, key, "?starts_after=2029-12-31T22:30:00Z&starts_before=2030-01-03"))).toEqual([
      110, 111, 101, 114,
    ]);
    expect(ids(await list(c, key, "?starts_after=2029-12-31T22:00:00Z&starts_before=2030-01-03"))).toEqual([
      110, 111, 112, 101, 114,
    ]);
    expect(ids(await list(c, key, "?starts_before=2030-07-01"))).toContain(113);
  });
});
