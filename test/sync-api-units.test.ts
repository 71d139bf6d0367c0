/**
 * The parts of `sync --from-api` that need no upstream (docs/upstream-records.md, A replica of
 * another deployment): the windows a pass walks, the stored source of an event delivered under
 * several tokens, the scope URL's checks, and already-resolved fields in the record format,
 * served as given.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DAY_MS } from "../db/contract.ts";
import { sourceMatches } from "../db/page-filter.ts";
import { parseApiScope } from "../server/api-scope.ts";
import { mergedSource } from "../sync/api/records.ts";
import { requestQuery } from "../sync/api/scope.ts";
import { WindowPlan } from "../sync/api/windows.ts";
import { Client, startInProcess, type Target } from "./harness.ts";
import { eventRecord, venueRecord } from "./records.ts";

const R = Date.UTC(2027, 0, 1);
const HOUR = 3_600_000;

describe("the windows of a pass", () => {
  it("asks for 365 days, then, once refused, lets the upstream cap each window at the horizon", () => {
    const plan = new WindowPlan(R, false);
    const first = plan.first();
    expect(first).toEqual({ startsAfterMs: null, startsBeforeMs: R + 365 * DAY_MS });
    const capped = plan.refused(first)!;
    expect(capped).toEqual({ startsAfterMs: null, startsBeforeMs: null });
    const second = plan.next(capped)!;
    expect(second).toEqual({ startsAfterMs: R + 90 * DAY_MS - HOUR, startsBeforeMs: null });
    expect(plan.refused(second)).toBeNull(); // its start is past the horizon: the walk is done
    expect(new WindowPlan(R, false, plan.capped).first().startsBeforeMs).toBeNull();
  });

  it("reads an account without a horizon 730 days ahead, in windows that overlap by an hour", () => {
    const plan = new WindowPlan(R, false);
    const first = plan.first();
    const second = plan.next(first)!;
    expect(second).toEqual({ startsAfterMs: R + 365 * DAY_MS - HOUR, startsBeforeMs: R + 730 * DAY_MS - HOUR });
    expect(plan.next(second)).toBeNull();
  });

  it("walks geo windows of at most 90 days, 30 when capped", () => {
    const plan = new WindowPlan(R, true);
    const first = plan.first();
    expect(first.startsBeforeMs).toBe(R + 90 * DAY_MS);
    const capped = plan.refused(first)!;
    const windows = [capped];
    for (let w = plan.next(capped); w && windows.length < 40; w = plan.next(w)) windows.push(w);
    expect(windows[1]).toEqual({ startsAfterMs: R + 30 * DAY_MS - HOUR, startsBeforeMs: null });
    expect(windows.at(-1)!.startsAfterMs! + 30 * DAY_MS).toBeGreaterThanOrEqual(R + 730 * DAY_MS); // bounded
  });
});

describe("the stored source of an event delivered under several tokens", () => {
  const char = fc.constantFrom(..."abc:_.-");
  const token = fc.array(char, { minLength: 1, maxLength: 6 }).map((cs) => `a${cs.join("")}`);

  it("is matched by every token it was delivered under, and by another only when the real source is", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(..."abc:.-"), { minLength: 1, maxLength: 10 }).map((cs) => `a${cs.join("")}`),
        fc.array(token, { minLength: 1, maxLength: 5 }),
        (real, recorded) => {
          const delivered = recorded.filter((t) => sourceMatches([t], real));
          fc.pre(delivered.length > 0);
          const stored = mergedSource(delivered);
          for (const t of recorded)
            expect(sourceMatches([t], stored), `${t} on ${stored}`).toBe(sourceMatches([t], real));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("is the token itself when there is one", () => {
    expect(mergedSource(["scraper:fillmore"])).toBe("scraper:fillmore");
    expect(mergedSource(["ab_d", "a_cde"])).toBe("abcde");
  });
});

describe("the scope URL", () => {
  it("keeps the filters as given, each source token apart, and knows geo and exclusions", () => {
    const scope = parseApiScope(
      "https://events.example.com/v1/events?state=ny&city=New%20York&source=ticketmaster,+scraper:&source=dice&exclude_aggregators=true",
    );
    expect(scope).toMatchObject({
      endpoint: "https://events.example.com/v1/events",
      sources: ["ticketmaster", "scraper:", "dice"],
      geo: false,
      excludesAggregators: true,
    });
    const q = requestQuery(scope, {
      source: "dice",
      startsAfterMs: null,
      startsBeforeMs: R,
      limit: 100,
      cursor: "abc",
    });
    expect(q.toString()).toBe(
      "state=ny&city=New+York&exclude_aggregators=true&source=dice&starts_before=2027-01-01T00%3A00%3A00.000Z&limit=100&cursor=abc",
    );
    expect(parseApiScope("http://127.0.0.1:9/v1/events?lat=40.7&lng=-74&radius_miles=3").geo).toBe(true);
    expect(parseApiScope("http://127.0.0.1:9/v1/events").sources).toBeNull();
  });

  it.each([
    ["ftp://h/v1/events", /not http/],
    ["https://h/v2/things", /not the list endpoint/],
    ["https://h/v1/events?cursor=x", /leave `cursor` out/],
    ["https://h/v1/events?source=Ticketmaster", /invalid_source/],
    ["https://h/v1/events?city=A&city=B", /two cities/],
    [
      "https://h/v1/events?lat=40&lng=-74&radius_miles=3&polygon=40.70,-74.01;40.71,-74.01;40.71,-74.00",
      /conflicting_geo_filters/,
    ],
    ["https://user:pw@h/v1/events", /never in the URL/],
  ])("refuses %s", (url, message) => {
    expect(() => parseApiScope(url)).toThrow(message);
  });
});

describe("already-resolved fields in records", () => {
  let target: Target;
  let client: Client;
  let key: string;
  beforeAll(async () => {
    target = await startInProcess();
    client = new Client(target);
    key = await client.keyFor({ plan: "enterprise" });
    await client.setClock("2027-01-01T00:00:00Z");
  });
  afterAll(() => target.close());

  it("are served as delivered: the upstream's URLs, cost and ticket status, and the aggregator mark", async () => {
    const resolved = (fields: Record<string, unknown>) => ({
      eventUrl: "https://up.example/events/1/x",
      ticketUrl: "https://up.example/t/1",
      cost: "Free",
      ticketLinkStatus: "unavailable",
      aggregator: true,
      ...fields,
    });
    await client.records([
      venueRecord(1),
      eventRecord(1, 1, "2027-01-10T20:00:00Z", { costText: "$25", isFree: false, resolved: resolved({}) }),
      eventRecord(2, 1, "2027-01-11T20:00:00Z", {
        source: "ticketmaster",
        resolved: resolved({ eventUrl: "javascript:alert(1)", ticketUrl: null, aggregator: false, cost: null }),
      }),
      eventRecord(3, 1, "2027-01-12T20:00:00Z"),
    ]);
    const body = (await (await client.get("/v1/events", key)).json()) as { data: Array<Record<string, unknown>> };
    const [one, two, three] = body.data;
    expect(one).toMatchObject({
      eventUrl: "https://up.example/events/1/x",
      ticketUrl: "https://up.example/t/1",
      cost: "Free",
      ticketLinkStatus: "unavailable",
    });
    // An unsafe URL is not served: the event gets this service's own page instead.
    expect(two).toMatchObject({ eventUrl: `${target.baseUrl}/events/2/event-2`, ticketUrl: null, cost: null });
    expect(three).toMatchObject({ eventUrl: `${target.baseUrl}/events/3/event-3`, ticketUrl: `${target.baseUrl}/t/3` });
    const kept = (await (await client.get("/v1/events?exclude_aggregators=true", key)).json()) as {
      data: Array<{ id: number }>;
    };
    // 1 is marked an aggregator's; 2 is marked not one although its source names one; 3 comes from a scraper.
    expect(kept.data.map((e) => e.id)).toEqual([2, 3]);
  });

  it("are checked like any field of a record", async () => {
    const res = await client.fetch("/_test/records", {
      method: "POST",
      body: JSON.stringify(eventRecord(9, 1, "2027-01-10T20:00:00Z", { resolved: { ticketLinkStatus: "maybe" } })),
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/resolved\.ticketLinkStatus/);
  });
});
