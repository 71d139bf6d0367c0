/**
 * Acceptance: a client generated from the published document with openapi-typescript
 * and openapi-fetch type-checks (`tsc` runs over this file, including the @ts-expect-error
 * lines, which fail the build if the generated types ever grow looser) and pages through
 * /v1/events, in-process and against the Bun server.
 */
import { readFileSync } from "node:fs";
import createClient from "openapi-fetch";
import { beforeAll, expect, it } from "vitest";
import { GENERATED_TYPES_PATH, generateClientTypes } from "./client-types.ts";
import type { components, paths } from "./generated/marquee-api.d.ts";
import { describeMatrix } from "./harness.ts";
import { eventRecord, venueRecord } from "./records.ts";

type Event = components["schemas"]["Event"];

it("the committed client types match the current document (regenerate: bun test/client-types.ts)", async () => {
  expect(readFileSync(GENERATED_TYPES_PATH, "utf8")).toBe(await generateClientTypes());
});

describeMatrix("generated client", (use) => {
  let key: string;

  beforeAll(async () => {
    const c = use();
    await c.setClock("2030-09-01T12:00:00Z");
    await c.records([
      venueRecord(701, { city: "Portland", state: "OR" }),
      ...Array.from({ length: 11 }, (_, i) => eventRecord(7001 + i, 701, `2030-09-0${2 + (i % 4)}T19:00:00Z`)),
    ]);
    key = await c.keyFor({ plan: "business" });
  });

  const client = () => {
    const target = use().target;
    return createClient<paths>({
      baseUrl: target.baseUrl,
      headers: { authorization: `Bearer ${key}` },
      // Over real HTTP to the Bun server; in-process, straight into the app.
      fetch:
        target.kind === "bun"
          ? undefined
          : async (request: Request) =>
              target.fetch(request.url, {
                method: request.method,
                headers: request.headers,
                body: request.method === "GET" ? undefined : await request.text(),
              }),
    });
  };

  it("pages through /v1/events with typed parameters and results", async () => {
    const api = client();
    const seen: Event[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 20; pages++) {
      const { data, error, response } = await api.GET("/v1/events", {
        params: { query: { city: "Portland", state: "OR", limit: 3, exclude_sold_out: false, cursor } },
      });
      expect(error).toBeUndefined();
      expect(response.status).toBe(200);
      seen.push(...data!.data);
      if (!data!.page.hasMore) break;
      cursor = data!.page.nextCursor ?? undefined;
    }
    const ids = seen.map((e) => e.id);
    expect(new Set(ids).size).toBe(11);
    expect(seen.every((e) => e.venue?.city === "Portland")).toBe(true);
    const starts = seen.map((e) => e.startDate);
    expect([...starts].sort()).toEqual(starts);
  });

  it("sends user-typed states and comma-separated sources as the document allows", async () => {
    const api = client();
    // The generated type of the query: `state: "ny"` and `source: "a,b"` must compile against it.
    const ids = async (query: NonNullable<paths["/v1/events"]["get"]["parameters"]["query"]>) => {
      const { data, response } = await api.GET("/v1/events", { params: { query: { limit: 100, ...query } } });
      expect(response.status, JSON.stringify(query)).toBe(200);
      return data!.data.map((e) => e.id);
    };
    const all = await ids({ state: "OR" });
    expect(all).toHaveLength(11);
    // Case-insensitive, and a whitespace-only state is dropped (docs/api.md, Parameters).
    expect(await ids({ state: "or" })).toEqual(all);
    expect(await ids({ state: "Or" })).toEqual(all);
    expect(await ids({ state: "  ", city: "Portland" })).toEqual(all);
    // Comma-separated in one value, or repeated: the same filter; a value of only commas is dropped.
    expect(await ids({ city: "Portland", source: "ticketmaster,scraper:fillmore" })).toEqual(all);
    expect(await ids({ city: "Portland", source: ["ticketmaster", "scraper:fillmore"] })).toEqual(all);
    expect(await ids({ city: "Portland", source: ",," })).toEqual(all);
    expect(await ids({ state: "ny", source: "ticketmaster,axs" })).toEqual([]);
    expect(await ids({ city: "Portland", source: "ticketmaster,axs" })).toEqual([]);
  });

  it("gets typed error envelopes and creates a handoff", async () => {
    const api = client();
    const filtered = await api.GET("/v1/events", {
      params: { query: { limit: 100, state: "OR", source: ["scraper:fillmore", "x_y"] } },
    });
    expect(filtered.response.status).toBe(200);
    const created = await api.POST("/v1/ticket-handoffs", { body: { event_id: 7001 } });
    expect(created.response.status).toBe(201);
    expect(created.data?.booking_mode).toBe("external_checkout");
    const missing = await api.POST("/v1/ticket-handoffs", { body: { event_id: 1 } });
    expect(missing.error?.error.code).toBe("event_unavailable");
  });
});

// Compile-time checks: the generated types carry the document's constraints. Exported so that
// nothing calls it and tsc still checks it.
// biome-ignore lint/suspicious/noExportsInTest: a compile-time check, not a test helper
export function typeChecks(api: ReturnType<typeof createClient<paths>>) {
  // User-typed states and comma-separated sources are what the document accepts.
  void api.GET("/v1/events", { params: { query: { state: "ny", source: "ticketmaster,axs" } } });
  void api.GET("/v1/events", { params: { query: { state: "  ", source: ["ticketmaster", "scraper:x"] } } });
  // @ts-expect-error source tokens are strings
  void api.GET("/v1/events", { params: { query: { source: 5 } } });
  // @ts-expect-error limit is an integer, not a string
  void api.GET("/v1/events", { params: { query: { limit: "3" } } });
  // @ts-expect-error exclude_sold_out is a boolean
  void api.GET("/v1/events", { params: { query: { exclude_sold_out: "yes" } } });
  // @ts-expect-error no offset pagination in the contract
  void api.GET("/v1/events", { params: { query: { offset: 10 } } });
  // @ts-expect-error event_id is an integer
  void api.POST("/v1/ticket-handoffs", { body: { event_id: "1" } });
  const status: Event["ticketLinkStatus"] = "available";
  // @ts-expect-error ticketLinkStatus is one of three values
  const wrong: Event["ticketLinkStatus"] = "maybe";
  return [status, wrong];
}
