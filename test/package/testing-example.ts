import type { paths } from "marquee/api";
import { type Marquee, startMarquee } from "marquee/testing";
import createClient from "openapi-fetch";
import { afterAll, beforeAll, expect, test } from "vitest";

// One venue and 30 concerts over the ten days after the frozen "now".
const venue = {
  type: "venue",
  seq: 1,
  venue: {
    id: 1,
    name: "The Fillmore",
    city: "San Francisco",
    state: "CA",
    timezone: "America/Los_Angeles",
    latitude: 37.784,
    longitude: -122.433,
    geocodePrecision: "street",
    visible: true,
  },
};
const concerts = Array.from({ length: 30 }, (_, i) => ({
  type: "event",
  seq: 2 + i,
  event: {
    id: 100 + i,
    venueId: 1,
    title: `Concert ${i}`,
    slug: `concert-${i}`,
    startDate: `2030-06-${String(2 + (i % 10)).padStart(2, "0")}T04:00:00Z`,
    endDate: null,
    costText: "$25",
    isFree: false,
    isSoldOut: false,
    isLowTickets: false,
    age: null,
    website: null,
    websiteBroken: false,
    imageUrl: null,
    categories: ["Music"],
    source: "scraper:fillmore",
    status: "active",
    duplicateOf: null,
    ticketed: true,
    ticketLinks: [{ url: `https://www.ticketmaster.com/event/${i}`, seller: "ticketmaster", broken: false }],
  },
}));

let marquee: Marquee;
beforeAll(async () => {
  marquee = await startMarquee({ records: [venue, ...concerts], now: "2030-06-01T12:00:00Z" });
});
afterAll(() => marquee.stop());

// The typed client, generated from the document the server publishes at /v1/openapi.json.
const client = (key: string) =>
  createClient<paths>({ baseUrl: marquee.url, headers: { authorization: `Bearer ${key}` } });

test("pages to the end with a typed client", async () => {
  const api = client(await marquee.createKey({ plan: "business" }));
  const ids: number[] = [];
  let cursor: string | undefined;
  do {
    const { data, error } = await api.GET("/v1/events", { params: { query: { state: "CA", limit: 10, cursor } } });
    if (error) throw new Error(error.error.code);
    ids.push(...data.data.map((event) => event.id));
    cursor = data.page.hasMore ? (data.page.nextCursor ?? undefined) : undefined;
  } while (cursor);
  expect(ids.sort()).toEqual(concerts.map((c) => c.event.id));
});

test("a trial runs out after 7 days", async () => {
  const api = client(await marquee.createKey({ plan: "none" })); // no plan: the first request starts a trial
  expect((await api.GET("/v1/events", { params: { query: { limit: 5 } } })).response.status).toBe(200);
  await marquee.clock.advance(7 * 24 * 3600 + 1);
  const { error, response } = await api.GET("/v1/events", { params: { query: { limit: 5 } } });
  expect(response.status).toBe(402);
  expect(error?.error.code).toBe("trial_expired");
});

test("a rate limit answers 429 with Retry-After", async () => {
  const api = client(await marquee.createKey({ plan: "enterprise", rateSustained: 60, rateBurst: 2 }));
  await api.GET("/v1/events");
  await api.GET("/v1/events");
  const { error, response } = await api.GET("/v1/events");
  expect(response.status).toBe(429);
  expect(error?.error.code).toBe("rate_limited");
  const wait = Number(response.headers.get("retry-after"));
  expect(wait).toBeGreaterThan(0);
  await marquee.clock.advance(wait); // the test clock refills the bucket, no sleeping
  expect((await api.GET("/v1/events")).response.status).toBe(200);
});

test("an injected fault fails the next request only", async () => {
  const api = client(await marquee.createKey({ plan: "business" }));
  await marquee.fault("rate_limit_unavailable", 1);
  const { error, response } = await api.GET("/v1/events");
  expect(response.status).toBe(503);
  expect(error?.error.code).toBe("rate_limit_unavailable");
  expect((await api.GET("/v1/events")).response.status).toBe(200);
});

test("a 429 injected for one key: the other key keeps working, and nothing is spent", async () => {
  const mine = await marquee.createAccount({ plan: "business" }); // { accountId, keyId, key }
  const other = client(await marquee.createKey({ plan: "business" }));
  await marquee.faults.add({ code: "rate_limited", keyId: mine.keyId, path: "/v1/events" });
  expect(await marquee.faults.list()).toMatchObject([{ code: "rate_limited", keyId: mine.keyId, times: 1 }]);
  expect((await other.GET("/v1/events")).response.status).toBe(200);
  const { error, response } = await client(mine.key).GET("/v1/events");
  expect(response.status).toBe(429);
  expect(error?.error.code).toBe("rate_limited");
  expect(response.headers.get("retry-after")).toBe("1"); // as an empty bucket answers
  const state = await marquee.account(mine.accountId);
  expect(state.requestRate[0].tokens).toBe(60); // the faulted request spent no rate units
  expect(state.rowsUsed24h).toBe(0);
  await marquee.faults.add({ code: "delay", delayMs: 200, times: 5 });
  expect(await marquee.faults.clear()).toBe(1);
});

test("records without seq append after the watermark; stale ones are refused, never skipped", async () => {
  const encore = { ...concerts[0].event, id: 200, slug: "encore" };
  expect(await marquee.applyRecords([{ type: "event", event: encore }])).toMatchObject({ applied: 1 });
  await expect(marquee.applyRecords([{ ...concerts[0], seq: 2 }])).rejects.toThrow(/409 stale_records/);
});

test("a ticket handoff expires when the clock passes expires_at", async () => {
  await marquee.clock.set("2030-06-01T12:00:00Z");
  const api = client(await marquee.createKey({ plan: "business", kind: "builder" }));
  const { data: handoff } = await api.POST("/v1/ticket-handoffs", { body: { event_id: 105 } });
  expect(handoff?.handoff_url).toMatch(marquee.url);
  const expiresIn = (Date.parse(handoff!.expires_at) - Date.parse("2030-06-01T12:00:00Z")) / 1000;
  await marquee.clock.advance(expiresIn + 1);
  const res = await fetch(`${handoff!.handoff_url}/continue`, { method: "POST", redirect: "manual" });
  expect(res.status).toBe(410);
});

test("reset empties accounts and keys, and keeps the events", async () => {
  const key = await marquee.createKey({ plan: "business" });
  await marquee.reset();
  expect((await client(key).GET("/v1/events")).response.status).toBe(401);
  const { data } = await client(await marquee.createKey()).GET("/v1/events", { params: { query: { limit: 1 } } });
  expect(data?.page.count).toBe(1);
});

test("reset({ replica: true }) empties the events too, and the same records apply again", async () => {
  await marquee.reset({ replica: true });
  const api = client(await marquee.createKey());
  expect((await api.GET("/v1/events")).data?.page.count).toBe(0);
  await marquee.applyRecords([venue, ...concerts]);
  expect((await api.GET("/v1/events", { params: { query: { limit: 100 } } })).data?.page.count).toBe(30);
});
