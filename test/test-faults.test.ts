/**
 * Test mode's faults (docs/api.md, Test mode, Faults), on every target (in-process, a Bun server,
 * two Bun servers on one Redis ledger): each code answers byte for byte as the real refusal of the
 * same request does, provoked for real on another account alike (status, headers, envelope, under
 * the frozen clock), and spends nothing; scoped faults hit only their key or path; `delay` answers
 * late and really; `reset` closes the connection without an answer.
 */
import { expect, it } from "vitest";
import { DAY_MS, HANDOFF, TRIAL } from "../db/contract.ts";
import { type Client, describeMatrix } from "./harness.ts";
import { eventRecord, venueRecord } from "./records.ts";

const NOW = "2030-03-01T12:00:00.000Z";
const NOW_MS = Date.parse(NOW);
const VENUE = 8_100;
/** Enough events in the default window for a trial to run out (40 pages of 25). */
const EVENTS = Array.from({ length: TRIAL.rows }, (_, i) => 8_100_000 + i);
const UNSELLABLE = 8_200_000;

interface Issued {
  accountId: number;
  keyId: number;
  key: string;
}

async function issue(c: Client, fields: Record<string, unknown> = {}, kind = "live"): Promise<Issued> {
  const accountId = await c.account(fields);
  const res = await c.postJson(`/_test/accounts/${accountId}/keys`, { kind });
  const { id, key } = (await res.json()) as { id: number; key: string };
  return { accountId, keyId: id, key };
}

async function arm(c: Client, fault: Record<string, unknown>): Promise<{ id: number }> {
  const res = await c.postJson("/_test/faults", fault);
  if (res.status !== 201) throw new Error(`arm ${JSON.stringify(fault)}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: number };
}

const pending = async (c: Client) => ((await (await c.get("/_test/faults")).json()) as { faults: unknown[] }).faults;
const state = async (c: Client, accountId: number) =>
  (await (await c.get(`/_test/accounts/${accountId}`)).json()) as {
    trial: { state: string; rowsUsed: number } | null;
    rowsUsed24h: number;
    requestRate: Array<{ tokens: number; capacity: number }>;
  };

/** A response as compared: everything but what differs by request (its id, the date). */
async function seen(res: Response) {
  const id = res.headers.get("x-request-id") ?? "";
  const headers = Object.fromEntries(
    [...res.headers].filter(([name]) => name !== "x-request-id" && name !== "date").sort(),
  );
  return { status: res.status, headers, body: (await res.text()).replaceAll(id, "<request id>") };
}

const list = (c: Client, key: string, query = "") => c.get(`/v1/events${query}`, key);
const handoff = (c: Client, key: string, body: unknown) =>
  c.postJson("/v1/ticket-handoffs", body, { authorization: `Bearer ${key}` });

describeMatrix("test-mode faults", (use) => {
  it("seeds the replica and freezes the clock", async () => {
    const c = use();
    await c.setClock(NOW);
    await c.records([
      venueRecord(VENUE, { latitude: 40.71, longitude: -74.0, city: "New York", state: "NY" }),
      ...EVENTS.map((id, i) => eventRecord(id, VENUE, new Date(NOW_MS + DAY_MS + i * 60_000).toISOString())),
      eventRecord(UNSELLABLE, VENUE, new Date(NOW_MS + 2 * DAY_MS).toISOString(), {
        ticketLinks: [{ url: "https://tickets.example.com/x", seller: "nobody", broken: false }],
      }),
    ]);
  });

  it("a faulted list refusal is the real one, for every code that can be provoked for real", async () => {
    const c = use();
    // The account the refusal is provoked for, the faulted one's (the same unless given), and how.
    const cases: Array<{
      code: string;
      real: Record<string, unknown>;
      faulted?: Record<string, unknown>;
      provoke: (c: Client, key: string) => Promise<Response>;
    }> = [
      {
        code: "rate_limited",
        real: { plan: "enterprise", rateSustained: 60, rateBurst: 2 },
        provoke: async (c, key) => {
          await list(c, key);
          await list(c, key);
          return list(c, key);
        },
      },
      {
        code: "row_budget_exhausted",
        real: { plan: "enterprise", rowBudget: 1 },
        provoke: async (c, key) => {
          expect((await list(c, key, "?limit=1")).status).toBe(200);
          return list(c, key);
        },
      },
      {
        code: "subscription_required",
        real: { plan: "none", hadSubscription: true },
        faulted: { plan: "business" },
        provoke: (c, key) => list(c, key),
      },
      {
        code: "email_verification_required",
        real: { plan: "none", verified: false },
        faulted: { plan: "business" },
        provoke: (c, key) => list(c, key),
      },
      {
        code: "account_not_provisioned",
        real: { plan: "business", policy: "missing" },
        faulted: { plan: "business" },
        provoke: (c, key) => list(c, key),
      },
      {
        code: "feature_not_in_plan",
        real: { plan: "basic" },
        provoke: (c, key) => list(c, key, "?polygon=40,-74;40.1,-74;40,-74.1"),
      },
      {
        code: "lookahead_not_in_plan",
        real: { plan: "basic" },
        provoke: (c, key) => list(c, key, `?starts_before=${new Date(NOW_MS + 40 * DAY_MS).toISOString()}`),
      },
      { code: "invalid_limit", real: { plan: "business" }, provoke: (c, key) => list(c, key, "?limit=0") },
      { code: "invalid_limit", real: { plan: "none" }, provoke: (c, key) => list(c, key, "?limit=0") },
      { code: "unsupported_pagination", real: { plan: "business" }, provoke: (c, key) => list(c, key, "?page=2") },
      { code: "invalid_cursor", real: { plan: "business" }, provoke: (c, key) => list(c, key, "?cursor=%21") },
      { code: "invalid_state", real: { plan: "none" }, provoke: (c, key) => list(c, key, "?state=ZZ") },
      {
        code: "invalid_api_key",
        real: { plan: "business" },
        provoke: (c) => list(c, "mq_live_0000000000000000000000000000000000000"),
      },
    ];
    for (const { code, real, faulted = real, provoke } of cases) {
      const r = await issue(c, real);
      const f = await issue(c, faulted);
      const expected = await seen(await provoke(c, r.key));
      await arm(c, { code, keyId: f.keyId });
      const got = await seen(await list(c, f.key));
      expect({ code, ...got }).toEqual({ code, ...expected });
      expect(await pending(c)).toEqual([]);
      // Nothing spent: the bucket is full, no row counted, no trial started.
      const after = await state(c, f.accountId);
      expect(after.requestRate.map((b) => b.tokens)).toEqual(after.requestRate.map((b) => b.capacity));
      expect(after.rowsUsed24h).toBe(0);
      if (after.trial) expect(after.trial.state).toBe("not_started");
    }
  });

  it("trial_expired and trial_exhausted carry the trial's headers as a real one does", async () => {
    const c = use();
    await c.setClock(NOW);
    const real = await issue(c, { plan: "none" });
    const faulted = await issue(c, { plan: "none" });
    // Both trials start at the same frozen instant with one row delivered.
    for (const k of [real, faulted]) expect((await list(c, k.key, "?limit=1")).status).toBe(200);
    await arm(c, { code: "trial_expired", keyId: faulted.keyId });
    const fault = await seen(await list(c, faulted.key));
    expect((await state(c, faulted.accountId)).trial).toMatchObject({ state: "active", rowsUsed: 1 });
    await c.advance(TRIAL.days * 86_400);
    expect({ ...fault }).toEqual(await seen(await list(c, real.key)));

    await c.setClock(NOW);
    const spent = await issue(c, { plan: "none" });
    const spender = await issue(c, { plan: "none" });
    for (let page = 0; page < TRIAL.rows / TRIAL.maxRowsPerPage; page++) {
      expect((await list(c, spent.key, "?limit=25")).status).toBe(200);
      if (page === 0) expect((await list(c, spender.key, "?limit=25")).status).toBe(200);
    }
    await arm(c, { code: "trial_exhausted", keyId: spender.keyId });
    expect(await seen(await list(c, spender.key))).toEqual(await seen(await list(c, spent.key)));
    expect((await state(c, spender.accountId)).trial).toMatchObject({ state: "active", rowsUsed: 25 });
  });

  it("the codes no request can provoke at will answer with the documented status and headers", async () => {
    const c = use();
    await c.setClock(NOW);
    const paid = await issue(c, { plan: "business" });
    const trial = await issue(c, { plan: "none" });
    const expectations: Array<[string, Issued, number, Record<string, string | null>]> = [
      ["policy_unavailable", paid, 503, { "retry-after": "1", "x-ratelimit-limit": "60" }],
      ["rate_limit_unavailable", paid, 503, { "retry-after": "1", "x-ratelimit-limit": "60" }],
      ["internal_error", paid, 500, { "retry-after": null, "x-ratelimit-limit": "60" }],
      ["trial_unavailable", trial, 503, { "retry-after": "5", "x-trial-rowbudget-remaining": String(TRIAL.rows) }],
      [
        "trial_capacity_reserved",
        trial,
        429,
        { "retry-after": "5", "x-trial-rowbudget-remaining": "0", "x-dataapi-access": "trial" },
      ],
    ];
    for (const [code, who, status, headers] of expectations) {
      await arm(c, { code, keyId: who.keyId });
      const res = await list(c, who.key, "?limit=1");
      expect(res.status).toBe(status);
      for (const [name, value] of Object.entries(headers))
        expect([code, name, res.headers.get(name)]).toEqual([code, name, value]);
      const body = (await res.json()) as { data?: unknown; error: { code: string; requestId: string } };
      expect(body.error).toMatchObject({ code, requestId: res.headers.get("x-request-id") });
      expect(body.data).toBeUndefined();
    }
    expect((await state(c, trial.accountId)).trial?.state).toBe("not_started");
    expect((await state(c, paid.accountId)).requestRate[0].tokens).toBe(60);
  });

  it("handoff faults answer as the route refuses, and spend no handoff slot", async () => {
    const c = use();
    await c.setClock(NOW);
    const event = { event_id: EVENTS[0] };
    const cases: Array<[string, Record<string, unknown>, (key: string) => Promise<Response>]> = [
      [
        "rate_limit_exceeded",
        {},
        async (key) => {
          for (let i = 0; i < HANDOFF.creationsPerMinute; i++) await handoff(c, key, event);
          return handoff(c, key, event);
        },
      ],
      ["invalid_request", {}, (key) => handoff(c, key, { event_id: 0 })],
      ["event_unavailable", {}, (key) => handoff(c, key, { event_id: 999_999_999 })],
    ];
    for (const [code, fields, provoke] of cases) {
      const real = await issue(c, fields);
      const faulted = await issue(c, fields);
      const expected = await seen(await provoke(real.key));
      await arm(c, { code, keyId: faulted.keyId, path: "/v1/ticket-handoffs" });
      expect({ code, ...(await seen(await handoff(c, faulted.key, event))) }).toEqual({ code, ...expected });
      // The faulted attempt was not counted: the account still has its whole minute.
      for (let i = 0; i < HANDOFF.creationsPerMinute; i++)
        expect((await handoff(c, faulted.key, event)).status).toBe(201);
    }
    // A real ticket_link_unavailable for an event without a supported seller, and a faulted one for a sellable event.
    const real = await issue(c);
    const faulted = await issue(c);
    const expected = await seen(await handoff(c, real.key, { event_id: UNSELLABLE }));
    await arm(c, { code: "ticket_link_unavailable", keyId: faulted.keyId });
    const got = await seen(await handoff(c, faulted.key, event));
    const url = (id: number) => `${c.target.baseUrl}/events/${id}/event-${id}`;
    expect(got).toEqual({ ...expected, body: expected.body.replace(url(UNSELLABLE), url(EVENTS[0])) });
    for (const [code, status] of [
      ["rate_limit_unavailable", 503],
      ["handoff_unavailable", 503],
      ["internal_error", 500],
    ] as const) {
      await arm(c, { code, keyId: faulted.keyId });
      const res = await handoff(c, faulted.key, event);
      expect([res.status, res.headers.get("retry-after")]).toEqual([status, status === 503 ? "60" : null]);
      expect(await res.json()).toMatchObject({ error: { code }, request_id: res.headers.get("x-request-id") });
    }
  });

  it("scoped faults hit only their key or their path; unscoped ones the next request that can get them", async () => {
    const c = use();
    const a = await issue(c);
    const b = await issue(c);
    await arm(c, { code: "policy_unavailable", keyId: a.keyId, times: 2 });
    expect((await list(c, b.key)).status).toBe(200);
    expect((await list(c, a.key)).status).toBe(503);
    await arm(c, { code: "rate_limit_unavailable", path: "/v1/ticket-handoffs" });
    expect((await list(c, b.key)).status).toBe(200);
    expect((await handoff(c, b.key, { event_id: EVENTS[0] })).status).toBe(503);
    expect((await list(c, a.key)).status).toBe(503);
    // A code only the trial's path raises waits for a trial account's request.
    await arm(c, { code: "trial_unavailable" });
    expect((await list(c, b.key)).status).toBe(200);
    // A request without a usable key takes no code fault.
    expect((await list(c, "mq_live_0000000000000000000000000000000000000")).status).toBe(401);
    const trial = await issue(c, { plan: "none" });
    expect((await list(c, trial.key)).status).toBe(503);
    expect(await pending(c)).toEqual([]);
  });

  it("lists, clears and validates faults", async () => {
    const c = use();
    const first = await arm(c, { code: "internal_error", times: 3, path: "/v1/events" });
    const second = await arm(c, { code: "delay", delayMs: 100, keyId: 12 });
    expect(await pending(c)).toEqual([
      { id: first.id, code: "internal_error", times: 3, keyId: null, path: "/v1/events", delayMs: null },
      { id: second.id, code: "delay", times: 1, keyId: 12, path: null, delayMs: 100 },
    ]);
    const cleared = await c.fetch("/_test/faults", { method: "DELETE" });
    expect(await cleared.json()).toEqual({ cleared: 2 });
    expect(await pending(c)).toEqual([]);
    for (const bad of [
      { code: "nope" },
      { code: "delay" },
      { code: "internal_error", delayMs: 10 },
      { code: "internal_error", times: 0 },
      { code: "internal_error", path: "events" },
      { code: "internal_error", path: "/_test/clock" },
      { code: "event_unavailable", path: "/v1/events" },
      { code: "internal_error", extra: 1 },
    ]) {
      const res = await c.postJson("/_test/faults", bad);
      expect([JSON.stringify(bad), res.status]).toEqual([JSON.stringify(bad), 400]);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_request");
    }
    expect(await pending(c)).toEqual([]);
  });

  it("delay answers late with the real answer; reset closes the connection without one", async () => {
    const c = use();
    const k = await issue(c);
    await arm(c, { code: "delay", delayMs: 400, path: "/v1/events" });
    const started = performance.now();
    const res = await list(c, k.key, "?limit=2");
    expect(performance.now() - started).toBeGreaterThanOrEqual(390);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { page: { count: number } }).page.count).toBe(2);

    await arm(c, { code: "reset", keyId: k.keyId });
    // A HEAD request has no body to cut off: it is never reset.
    expect(
      (await c.fetch("/v1/events", { method: "HEAD", headers: { authorization: `Bearer ${k.key}` } })).status,
    ).toBe(200);
    // The connection itself is closed: no status, no headers (not an answer the contract check refuses).
    await expect(c.target.fetch("/v1/events", { headers: { authorization: `Bearer ${k.key}` } })).rejects.toThrow();
    expect((await list(c, k.key)).status).toBe(200);
    // Any path: the portal's, the pages'.
    await arm(c, { code: "reset", path: "/healthz" });
    await expect(c.target.fetch("/healthz")).rejects.toThrow();
    expect((await c.target.fetch("/healthz")).status).toBe(200);
  });

  it("reset disarms every fault", async () => {
    const c = use();
    await arm(c, { code: "internal_error", times: 5 });
    await c.reset();
    expect(await pending(c)).toEqual([]);
  });
});
