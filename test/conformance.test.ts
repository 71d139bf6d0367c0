/**
 * Conformance proof: a representative request set — list pages incl. geo and trial,
 * every error class of both tables, handoff 201 and errors, the document, the reference page
 * and the MCP endpoint — driven in-process and against the Bun server, each response checked
 * against the document the server publishes at /v1/openapi.json (status, headers, body).
 */
import { beforeAll, expect, it } from "vitest";
import { HANDOFF, LIST } from "../db/contract.ts";
import type { OpenApiDocument } from "../server/openapi.ts";
import { type Client, describeMatrix } from "./harness.ts";
import { ContractValidator } from "./openapi-validator.ts";
import { eventRecord, venueRecord } from "./records.ts";

const NOW = "2030-06-01T12:00:00Z";
const SF = { lat: 37.784, lng: -122.433 };
const POLYGON = "37.70,-122.52;37.83,-122.52;37.83,-122.35;37.70,-122.35";

interface Case {
  name: string;
  method: "GET" | "POST";
  path: string;
  status: number;
  code?: string;
  send(c: Client): Promise<Response>;
}

const list = (query: string, key?: string) => (c: Client) => c.get(`/v1/events${query}`, key);
const handoff =
  (body: string, key?: string, type = "application/json") =>
  (c: Client) =>
    c.fetch("/v1/ticket-handoffs", {
      method: "POST",
      headers: { "content-type": type, ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body,
    });

describeMatrix("responses conform to /v1/openapi.json", (use) => {
  let validator: ContractValidator;
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    const c = use();
    await c.setClock(NOW);
    await c.records([
      venueRecord(901, { latitude: SF.lat, longitude: SF.lng, geocodePrecision: "street" }),
      venueRecord(902, { city: "Los Angeles", latitude: 34.05, longitude: -118.25, geocodePrecision: "zip" }),
      ...Array.from({ length: 6 }, (_, i) => eventRecord(9001 + i, 901, `2030-06-0${2 + i}T20:00:00Z`)),
      eventRecord(9010, 902, "2030-06-03T03:00:00Z", {
        endDate: "2030-06-03T06:00:00Z",
        categories: ["Comedy", "Nightlife"],
      }),
      eventRecord(9011, 901, "2030-06-04T20:00:00Z", {
        isSoldOut: true,
        ticketLinks: [],
        isFree: null,
        costText: "free",
      }),
      eventRecord(9012, 901, "2030-06-04T21:00:00Z", { ticketed: false, website: null }),
    ]);
    const res = await c.get("/v1/openapi.json");
    expect(res.status).toBe(200);
    const doc = (await res.clone().json()) as OpenApiDocument;
    validator = new ContractValidator(doc);
    expect((await validator.check("GET", "/v1/openapi.json", res)).problems).toEqual([]);

    const plans: Record<string, Record<string, unknown>> = {
      business: { plan: "business" },
      basic: { plan: "basic" },
      trial: { plan: "none", verified: true },
      trialUnverified: { plan: "none", verified: false },
      lapsed: { plan: "none", hadSubscription: true },
      unprovisioned: { plan: "business", policy: "missing" },
      throttled: { plan: "enterprise", rateSustained: 1, rateBurst: 1 },
      metered: { plan: "enterprise", rowBudget: 1 },
    };
    for (const [name, fields] of Object.entries(plans))
      keys[name] = await c.keyFor({ email: `${name}@example.com`, ...fields });
    keys.legacy = await c.keyFor({ email: "legacy@example.com", plan: "legacy" }, "legacy");
  });

  /** A business key of its own for each call, so request-rate buckets never interfere. */
  const fresh = async (c: Client) => c.keyFor({ email: "fresh@example.com", plan: "business" });
  const with400 = (code: string, query: string): Case => ({
    name: `400 ${code}`,
    method: "GET",
    path: "/v1/events",
    status: 400,
    code,
    send: async (c) => list(query, await fresh(c))(c),
  });

  const cases: Case[] = [
    {
      name: "200 page",
      method: "GET",
      path: "/v1/events",
      status: 200,
      send: (c) => list("?limit=3", keys.business)(c),
    },
    {
      name: "200 every field shape",
      method: "GET",
      path: "/v1/events",
      status: 200,
      send: (c) => list(`?limit=${LIST.maxLimit}&exclude_aggregators=false`, keys.business)(c),
    },
    {
      name: "200 empty page",
      method: "GET",
      path: "/v1/events",
      status: 200,
      send: (c) => list("?city=Nowhere", keys.business)(c),
    },
    {
      name: "200 circle",
      method: "GET",
      path: "/v1/events",
      status: 200,
      send: async (c) => list(`?lat=${SF.lat}&lng=${SF.lng}&radius_miles=5`, await fresh(c))(c),
    },
    {
      name: "200 polygon",
      method: "GET",
      path: "/v1/events",
      status: 200,
      send: async (c) => list(`?polygon=${encodeURIComponent(POLYGON)}&include_centroids=true`, await fresh(c))(c),
    },
    { name: "200 trial", method: "GET", path: "/v1/events", status: 200, send: (c) => list("?limit=2", keys.trial)(c) },
    {
      name: "200 row-metered",
      method: "GET",
      path: "/v1/events",
      status: 200,
      send: (c) => list("?limit=1", keys.metered)(c),
    },
    with400("invalid_state", "?state=ZZ"),
    with400("invalid_date", "?starts_after=tomorrow"),
    with400("invalid_date_range", "?starts_after=2030-06-10&starts_before=2030-06-05"),
    with400("invalid_source", "?source=Bad!"),
    with400("invalid_exclude_aggregators", "?exclude_aggregators=yes"),
    with400("invalid_exclude_sold_out", "?exclude_sold_out=1"),
    with400("invalid_include_centroids", "?include_centroids=TRUE"),
    with400("invalid_limit", "?limit=101"),
    with400("invalid_cursor", "?cursor=not-a-cursor"),
    with400("unsupported_pagination", "?page=2"),
    with400("invalid_coordinates", "?lat=91&lng=0&radius_miles=1"),
    with400("invalid_radius", `?lat=${SF.lat}&lng=${SF.lng}&radius_miles=26`),
    with400("invalid_polygon", "?polygon=1,2;3,4"),
    with400(
      "conflicting_geo_filters",
      `?lat=${SF.lat}&lng=${SF.lng}&radius_miles=1&polygon=${encodeURIComponent(POLYGON)}`,
    ),
    { name: "401 no key", method: "GET", path: "/v1/events", status: 401, code: "invalid_api_key", send: list("") },
    {
      name: "401 malformed key",
      method: "GET",
      path: "/v1/events",
      status: 401,
      code: "invalid_api_key",
      send: list("", "mq_live_short"),
    },
    {
      name: "402 subscription_required",
      method: "GET",
      path: "/v1/events",
      status: 402,
      code: "subscription_required",
      send: (c) => list("", keys.lapsed)(c),
    },
    {
      name: "403 email_verification_required",
      method: "GET",
      path: "/v1/events",
      status: 403,
      code: "email_verification_required",
      send: (c) => list("", keys.trialUnverified)(c),
    },
    {
      name: "403 account_not_provisioned",
      method: "GET",
      path: "/v1/events",
      status: 403,
      code: "account_not_provisioned",
      send: (c) => list("", keys.unprovisioned)(c),
    },
    {
      name: "403 feature_not_in_plan",
      method: "GET",
      path: "/v1/events",
      status: 403,
      code: "feature_not_in_plan",
      send: (c) => list(`?polygon=${encodeURIComponent(POLYGON)}`, keys.basic)(c),
    },
    {
      name: "403 lookahead_not_in_plan",
      method: "GET",
      path: "/v1/events",
      status: 403,
      code: "lookahead_not_in_plan",
      send: (c) => list("?starts_before=2031-01-01", keys.basic)(c),
    },
    {
      name: "429 rate_limited",
      method: "GET",
      path: "/v1/events",
      status: 429,
      code: "rate_limited",
      send: async (c) => {
        await list("?limit=1", keys.throttled)(c);
        return list("?limit=1", keys.throttled)(c);
      },
    },
    {
      name: "429 row_budget_exhausted",
      method: "GET",
      path: "/v1/events",
      status: 429,
      code: "row_budget_exhausted",
      send: (c) => list("?limit=1", keys.metered)(c),
    },
    ...(["policy_unavailable", "rate_limit_unavailable"] as const).map(
      (code): Case => ({
        name: `503 ${code}`,
        method: "GET",
        path: "/v1/events",
        status: 503,
        code,
        send: async (c) => {
          await c.fault(code);
          return list("", keys.business)(c);
        },
      }),
    ),
    {
      name: "503 trial_unavailable",
      method: "GET",
      path: "/v1/events",
      status: 503,
      code: "trial_unavailable",
      send: async (c) => {
        await c.fault("trial_unavailable");
        return list("?limit=1", keys.trial)(c);
      },
    },
    {
      name: "500 internal_error",
      method: "GET",
      path: "/v1/events",
      status: 500,
      code: "internal_error",
      send: async (c) => {
        await c.fault("internal_error");
        return list("", keys.business)(c);
      },
    },
    {
      name: "handoff 201",
      method: "POST",
      path: "/v1/ticket-handoffs",
      status: 201,
      send: (c) => handoff(JSON.stringify({ event_id: 9001 }), keys.business)(c),
    },
    {
      name: "handoff 400",
      method: "POST",
      path: "/v1/ticket-handoffs",
      status: 400,
      code: "invalid_request",
      send: (c) => handoff(JSON.stringify({ event_id: "9001" }), keys.business)(c),
    },
    {
      name: "handoff 400 content type",
      method: "POST",
      path: "/v1/ticket-handoffs",
      status: 400,
      code: "invalid_request",
      send: (c) => handoff("event_id=1", keys.business, "text/plain")(c),
    },
    {
      name: "handoff 401",
      method: "POST",
      path: "/v1/ticket-handoffs",
      status: 401,
      code: "invalid_api_key",
      send: handoff(JSON.stringify({ event_id: 9001 })),
    },
    {
      name: "handoff 401 legacy key",
      method: "POST",
      path: "/v1/ticket-handoffs",
      status: 401,
      code: "invalid_api_key",
      send: (c) => handoff(JSON.stringify({ event_id: 9001 }), keys.legacy)(c),
    },
    {
      name: "handoff 404",
      method: "POST",
      path: "/v1/ticket-handoffs",
      status: 404,
      code: "event_unavailable",
      send: (c) => handoff(JSON.stringify({ event_id: 424242 }), keys.business)(c),
    },
    {
      name: "handoff 409",
      method: "POST",
      path: "/v1/ticket-handoffs",
      status: 409,
      code: "ticket_link_unavailable",
      send: (c) => handoff(JSON.stringify({ event_id: 9011 }), keys.business)(c),
    },
    {
      name: "handoff 413",
      method: "POST",
      path: "/v1/ticket-handoffs",
      status: 413,
      code: "invalid_request",
      send: (c) => handoff(JSON.stringify({ event_id: 9001, pad: "x".repeat(HANDOFF.maxBodyBytes) }), keys.business)(c),
    },
    ...(["handoff_unavailable", "rate_limit_unavailable"] as const).map(
      (code): Case => ({
        name: `handoff 503 ${code}`,
        method: "POST",
        path: "/v1/ticket-handoffs",
        status: 503,
        code,
        send: async (c) => {
          await c.fault(code);
          return handoff(JSON.stringify({ event_id: 9001 }), await c.keyFor({ email: "h503@example.com" }))(c);
        },
      }),
    ),
    {
      name: "handoff 429",
      method: "POST",
      path: "/v1/ticket-handoffs",
      status: 429,
      code: "rate_limit_exceeded",
      send: async (c) => {
        const key = await c.keyFor({ email: "handoffs@example.com" });
        for (let i = 0; i < HANDOFF.creationsPerMinute; i++) await handoff(JSON.stringify({ event_id: 9001 }), key)(c);
        return handoff(JSON.stringify({ event_id: 9001 }), key)(c);
      },
    },
    {
      name: "openapi.json",
      method: "GET",
      path: "/v1/openapi.json",
      status: 200,
      send: (c) => c.get("/v1/openapi.json"),
    },
    { name: "docs", method: "GET", path: "/docs", status: 200, send: (c) => c.get("/docs") },
    {
      name: "mcp 200",
      method: "POST",
      path: "/mcp",
      status: 200,
      send: (c) =>
        c.fetch("/mcp", {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            authorization: `Bearer ${keys.business}`,
          },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
          }),
        }),
    },
    {
      name: "mcp 401",
      method: "POST",
      path: "/mcp",
      status: 401,
      code: "invalid_api_key",
      send: (c) => c.postJson("/mcp", { jsonrpc: "2.0", id: 1, method: "tools/list" }),
    },
  ];

  for (const tc of cases) {
    it(tc.name, async () => {
      const res = await tc.send(use());
      const checked = await validator.check(tc.method, tc.path, res);
      expect({ status: checked.status, problems: checked.problems }).toEqual({ status: tc.status, problems: [] });
      if (tc.code) expect((checked.body as { error: { code: string } }).error.code).toBe(tc.code);
    });
  }

  it("402 trial_expired after the trial's seven days, with the trial headers", async () => {
    const c = use();
    await c.advance(8 * 86_400);
    const res = await list("", keys.trial)(c);
    const checked = await validator.check("GET", "/v1/events", res);
    expect({ status: checked.status, problems: checked.problems }).toEqual({ status: 402, problems: [] });
    expect((checked.body as { error: { code: string } }).error.code).toBe("trial_expired");
    expect(res.headers.get("x-trial-expires-at")).not.toBeNull();
  });
});
