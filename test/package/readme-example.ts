import type { paths } from "marquee/api";
import { type Marquee, startMarquee } from "marquee/testing";
import createClient from "openapi-fetch";
import { afterAll, beforeAll, expect, test } from "vitest";

// Upstream records: a venue and a show a day for five days (without seq, each follows the last).
const place = { timezone: null, latitude: null, longitude: null, geocodePrecision: null, visible: true };
const show = { venueId: 1, endDate: null, source: "box-office", status: "active" };
const records = [
  { type: "venue", venue: { id: 1, name: "The Fillmore", city: "San Francisco", state: "CA", ...place } },
  ...[1, 2, 3, 4, 5].map((id) => ({
    type: "event",
    event: { id, title: `Show ${id}`, slug: `show-${id}`, startDate: `2030-06-0${id}T20:00:00Z`, ...show },
  })),
];

let marquee: Marquee;
beforeAll(async () => {
  marquee = await startMarquee({ records, now: "2030-06-01T12:00:00Z" });
});
afterAll(() => marquee.stop());

// A client typed by the API description every Marquee serves (/v1/openapi.json).
const client = async (plan: "business" | "none") => {
  const headers = { authorization: `Bearer ${await marquee.createKey({ plan })}` };
  return createClient<paths>({ baseUrl: marquee.url, headers });
};

test("pages to the end", async () => {
  const api = await client("business");
  const ids: number[] = [];
  let cursor: string | undefined;
  do {
    const { data, error } = await api.GET("/v1/events", { params: { query: { state: "CA", limit: 2, cursor } } });
    if (error) throw new Error(error.error.code);
    ids.push(...data.data.map((event) => event.id));
    cursor = data.page.nextCursor ?? undefined;
  } while (cursor);
  expect(ids).toEqual([1, 2, 3, 4, 5]);
});

test("a trial runs out after 7 days of the test clock", async () => {
  const api = await client("none"); // no plan: the first request starts a trial
  expect((await api.GET("/v1/events")).response.status).toBe(200);
  await marquee.clock.advance(7 * 24 * 3600 + 1);
  expect((await api.GET("/v1/events")).error?.error.code).toBe("trial_expired");
});

test("an injected fault answers the next request only", async () => {
  const api = await client("business");
  await marquee.fault("rate_limited", 1);
  expect((await api.GET("/v1/events")).response.status).toBe(429);
  expect((await api.GET("/v1/events")).response.status).toBe(200);
});
