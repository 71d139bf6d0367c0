/**
 * POST /v1/ticket-handoffs: every code of the API's "Ticket-handoff errors" table, the success
 * object, the per-account limit on the test clock, and fault injection. Runs in-process and
 * against the Bun server.
 */
import { beforeAll, expect, it } from "vitest";
import { type Client, describeMatrix } from "./harness.ts";
import { eventRecord, venueRecord } from "./records.ts";

const NOW = "2030-03-01T12:00:00.000Z";
const NOW_MS = Date.parse(NOW);

interface HandoffBody {
  handoff_id: string;
  event_id: number;
  event_url: string;
  handoff_url: string;
  expires_at: string;
  booking_mode: string;
  requires_user_action: boolean;
}
interface HandoffError {
  error: { code: string; message: string };
  request_id: string;
  event_url?: string;
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

function create(c: Client, key: string | null, body: unknown, headers: Record<string, string> = {}) {
  return c.fetch("/v1/ticket-handoffs", {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? bearer(key) : {}), ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** Asserts the API's handoff error shape and returns the body. */
async function expectError(res: Response, status: number, code: string): Promise<HandoffError> {
  expect(res.status).toBe(status);
  const body = (await res.json()) as HandoffError;
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe("string");
  expect(body.request_id).toBe(res.headers.get("x-request-id"));
  expect(Object.keys(body).sort()).toEqual(
    code === "ticket_link_unavailable" ? ["error", "event_url", "request_id"] : ["error", "request_id"],
  );
  expect(Object.keys(body.error).sort()).toEqual(["code", "message"]);
  return body;
}

const tm = (id: number) => ({ url: `https://www.ticketmaster.com/event/${id}`, seller: "ticketmaster", broken: false });

describeMatrix("ticket handoffs: creation", (use) => {
  beforeAll(async () => {
    const c = use();
    await c.setClock(NOW);
    await c.records([
      venueRecord(1),
      venueRecord(2, { visible: false }),
      eventRecord(100, 1, "2030-03-10T03:00:00Z", {
        slug: "night-show",
        // First usable link of a supported seller wins: broken and unsupported ones are skipped.
        ticketLinks: [
          { url: "https://www.ticketmaster.com/broken", seller: "ticketmaster", broken: true },
          { url: "https://tickets.example.org/100", seller: "boxoffice", broken: false },
          { url: "ftp://axs.com/100", seller: "axs", broken: false },
          { url: "https://www.axs.com/events/100", seller: "AXS", broken: false },
          tm(100),
        ],
      }),
      eventRecord(101, 1, "2030-03-10T03:00:00Z", { isSoldOut: true, ticketLinks: [tm(101)] }),
      eventRecord(102, 1, "2030-02-01T03:00:00Z", { endDate: "2030-03-01T11:59:59Z", ticketLinks: [tm(102)] }),
      // Started a month ago and still running: sales have not ended.
      eventRecord(103, 1, "2030-02-01T03:00:00Z", { endDate: "2030-03-05T00:00:00Z", ticketLinks: [tm(103)] }),
      eventRecord(104, 1, "2030-03-10T03:00:00Z", {
        ticketLinks: [
          { url: "https://tickets.example.org/104", seller: "boxoffice", broken: false },
          { ...tm(104), broken: true },
        ],
      }),
      eventRecord(105, 1, "2030-03-10T03:00:00Z", { ticketed: false, ticketLinks: [tm(105)] }),
      eventRecord(106, 1, "2030-03-10T03:00:00Z", { status: "cancelled" }),
      eventRecord(107, 1, "2030-03-10T03:00:00Z", { duplicateOf: 100 }),
      eventRecord(108, 2, "2030-03-10T03:00:00Z"),
      eventRecord(109, 1, "2030-03-10T03:00:00Z", { status: "spam" }),
      eventRecord(110, 1, "2030-03-10T03:00:00Z", { ticketLinks: [] }),
      eventRecord(111, 1, "2030-03-01T12:00:00Z", { ticketLinks: [tm(111)] }), // ends exactly now
    ]);
  });

  it("creates a handoff with exactly the documented fields and picks the first usable supported seller", async () => {
    const c = use();
    const res = await create(c, await c.keyFor({ plan: "business" }), { event_id: 100 });
    expect(res.status).toBe(201);
    expect(res.headers.get("x-request-id")).toBeTruthy();
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = (await res.json()) as HandoffBody;
    expect(Object.keys(body).sort()).toEqual([
      "booking_mode",
      "event_id",
      "event_url",
      "expires_at",
      "handoff_id",
      "handoff_url",
      "requires_user_action",
    ]);
    expect(body.handoff_id).toMatch(/^ho_[0-9A-Za-z]{22}$/);
    expect(body.event_id).toBe(100);
    expect(body.event_url).toBe(`${c.target.baseUrl}/events/100/night-show`);
    expect(body.handoff_url).toBe(`${c.target.baseUrl}/handoffs/${body.handoff_id}`);
    expect(res.headers.get("location")).toBe(body.handoff_url);
    expect(body.expires_at).toBe("2030-03-01T12:15:00Z");
    expect(Date.parse(body.expires_at)).toBe(NOW_MS + 15 * 60_000);
    expect(body.booking_mode).toBe("external_checkout");
    expect(body.requires_user_action).toBe(true);

    const stored = (await (await c.get(`/_test/handoffs/${body.handoff_id}`)).json()) as Record<string, unknown>;
    expect(stored).toMatchObject({
      seller: "axs",
      sellerUrl: "https://www.axs.com/events/100",
      redeemedMs: null,
      clicks: 0,
    });
  });

  it("issues a different opaque id every time and accepts a builder key", async () => {
    const c = use();
    const key = await c.keyFor({ plan: "none" }, "builder");
    const a = (await (await create(c, key, { event_id: 103 })).json()) as HandoffBody;
    const b = (await (await create(c, key, { event_id: 103 })).json()) as HandoffBody;
    expect(a.handoff_id).not.toBe(b.handoff_id);
  });

  it("accepts a charset parameter on the JSON content type", async () => {
    const c = use();
    const res = await create(
      c,
      await c.keyFor(),
      { event_id: 100 },
      { "content-type": "application/json; charset=UTF-8" },
    );
    expect(res.status).toBe(201);
  });

  it("401 invalid_api_key for missing, malformed, unknown and legacy keys, with WWW-Authenticate", async () => {
    const c = use();
    const legacy = await c.keyFor({ plan: "legacy" }, "legacy");
    const unknown = `mq_live_${"A".repeat(38)}`;
    for (const headers of [{}, bearer("nope"), bearer(unknown), bearer(legacy), { authorization: "Basic abc" }]) {
      const res = await c.fetch("/v1/ticket-handoffs", {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ event_id: 100 }),
      });
      await expectError(res, 401, "invalid_api_key");
      expect(res.headers.get("www-authenticate")).toBe("Bearer");
    }
  });

  it("400 invalid_request for every malformed body", async () => {
    const c = use();
    const cases: Array<[string | null, string]> = [
      ["text/plain", '{"event_id":100}'],
      [null, '{"event_id":100}'],
      ["application/json; charset=latin1", '{"event_id":100}'],
      ["application/jsonx", '{"event_id":100}'],
      ["application/json", "{event_id:100}"],
      ["application/json", ""],
      ["application/json", '{"event_id":"100"}'],
      ["application/json", '{"event_id":0}'],
      ["application/json", '{"event_id":-1}'],
      ["application/json", '{"event_id":2147483648}'],
      ["application/json", '{"event_id":1.5}'],
      ["application/json", '{"event_id":null}'],
      ["application/json", "{}"],
      ["application/json", "[100]"],
      ["application/json", "100"],
      ["application/json", '{"event_id":100,"seller_url":"https://evil.example"}'],
      ["application/json", '{"event_id":100,"partner":"x"}'],
    ];
    for (const [type, body] of cases) {
      const key = await c.keyFor(); // a fresh account each time: every attempt spends a slot
      const headers: Record<string, string> = { ...bearer(key) };
      if (type) headers["content-type"] = type;
      const res = await c.fetch("/v1/ticket-handoffs", { method: "POST", headers, body });
      await expectError(res, 400, "invalid_request");
    }
  });

  it("413 invalid_request for a body over 1024 bytes, also without a Content-Length", async () => {
    const c = use();
    const key = await c.keyFor();
    const exactly = `{"event_id":100${" ".repeat(1024 - 16)}}`;
    expect(new TextEncoder().encode(exactly).byteLength).toBe(1024);
    expect((await create(c, key, exactly)).status).toBe(201);
    await expectError(await create(c, key, exactly.replace("}", " }")), 413, "invalid_request");

    const chunk = new TextEncoder().encode(" ".repeat(600));
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 4; i++) controller.enqueue(chunk);
        controller.close();
      },
    });
    const res = await c.fetch("/v1/ticket-handoffs", {
      method: "POST",
      headers: { "content-type": "application/json", ...bearer(key) },
      body: stream,
      duplex: "half",
    } as RequestInit);
    await expectError(res, 413, "invalid_request");
  });

  it("404 event_unavailable for unknown, cancelled, duplicate, spam and hidden-venue events", async () => {
    const c = use();
    for (const id of [999, 106, 107, 108, 109, 2147483647]) {
      await expectError(await create(c, await c.keyFor(), { event_id: id }), 404, "event_unavailable");
    }
  });

  it("409 ticket_link_unavailable with event_url: sold out, sales ended, no supported seller, not ticketed", async () => {
    const c = use();
    for (const id of [101, 102, 104, 105, 110]) {
      const body = await expectError(
        await create(c, await c.keyFor(), { event_id: id }),
        409,
        "ticket_link_unavailable",
      );
      expect(body.event_url).toBe(`${c.target.baseUrl}/events/${id}/event-${id}`);
    }
    // An event ending exactly now has not ended yet; a running multi-day event is still on sale.
    expect((await create(c, await c.keyFor(), { event_id: 111 })).status).toBe(201);
    expect((await create(c, await c.keyFor(), { event_id: 103 })).status).toBe(201);
  });
});

describeMatrix("ticket handoffs: limit and faults", (use) => {
  beforeAll(async () => {
    const c = use();
    await c.setClock(NOW);
    await c.records([venueRecord(1), eventRecord(200, 1, "2030-03-10T03:00:00Z", { ticketLinks: [tm(200)] })]);
  });

  it("counts 10 attempts a minute per account across keys, invalid ones included, and 429s the 11th", async () => {
    const c = use();
    await c.setClock(NOW);
    const account = await c.account({ plan: "business" });
    const [live, builder] = [await c.key(account, "live"), await c.key(account, "builder")];
    const other = await c.keyFor();
    // Unknown keys are not counted (no account to count them against); a known key that may not
    // create handoffs is, like any authenticated attempt.
    for (let i = 0; i < 3; i++)
      expect((await create(c, `mq_live_${"B".repeat(38)}`, { event_id: 200 })).status).toBe(401);
    const legacy = await c.key(account, "legacy");
    for (let i = 0; i < 2; i++) await expectError(await create(c, legacy, { event_id: 200 }), 401, "invalid_api_key");

    for (let i = 0; i < 2; i++) expect((await create(c, live, { event_id: 200 })).status).toBe(201);
    for (let i = 0; i < 3; i++) expect((await create(c, builder, { event_id: 0 })).status).toBe(400);
    expect((await create(c, builder, { event_id: 999 })).status).toBe(404);
    await c.advance(30);
    for (let i = 0; i < 2; i++) expect((await create(c, live, "not json")).status).toBe(400);

    for (const key of [live, builder]) {
      const res = await create(c, key, { event_id: 200 });
      await expectError(res, 429, "rate_limit_exceeded");
      expect(res.headers.get("retry-after")).toBe("60");
    }
    expect((await create(c, other, { event_id: 200 })).status).toBe(201);

    // Sliding window: at +60 s the first 8 attempts have aged out, the last 2 have not.
    await c.advance(30);
    for (let i = 0; i < 8; i++) expect((await create(c, live, { event_id: 200 })).status).toBe(201);
    await expectError(await create(c, live, { event_id: 200 }), 429, "rate_limit_exceeded");
  });

  it("refuses every key but a builder key or a paid live key with 401, spending the attempt", async () => {
    const c = use();
    await c.setClock(NOW);
    // docs/api.md, Authentication: each refused kind, on an account of its own.
    const refused: Array<[string, Record<string, unknown>, string]> = [
      ["legacy key of a legacy plan", { plan: "legacy" }, "legacy"],
      ["live key of a trial account", { plan: "none" }, "live"],
      ["live key of a past subscription", { plan: "none", hadSubscription: true }, "live"],
      ["live key of an unverified account", { plan: "none", verified: false }, "live"],
      ["live key, policy missing", { plan: "business", policy: "missing" }, "live"],
      ["live key, policy stale", { plan: "basic", policy: "stale" }, "live"],
      ["live key, policy of another account", { plan: "enterprise", policy: "foreign" }, "live"],
    ];
    for (const [name, fields, kind] of refused) {
      const account = await c.account(fields);
      const res = await create(c, await c.key(account, kind), { event_id: 200 });
      await expectError(res, 401, "invalid_api_key");
      expect(res.headers.get("www-authenticate"), name).toBe("Bearer");
      // The refusal spent one of the account's 10 slots: its builder key gets 9 more, whatever the account.
      const builder = await c.key(account, "builder");
      for (let i = 0; i < 9; i++) expect((await create(c, builder, { event_id: 200 })).status, name).toBe(201);
      await expectError(await create(c, builder, { event_id: 200 }), 429, "rate_limit_exceeded");
    }
    const paid: Array<Record<string, unknown>> = [
      { plan: "basic" },
      { plan: "business" },
      { plan: "enterprise" },
      { plan: "legacy" },
      { plan: "legacy", hadSubscription: true },
      { plan: "business", verified: false },
    ];
    for (const fields of paid) {
      const res = await create(c, await c.keyFor(fields, "live"), { event_id: 200 });
      expect(res.status, JSON.stringify(fields)).toBe(201);
    }
  });

  it("rate_limit_unavailable and handoff_unavailable faults: 503, Retry-After 60, nothing stored", async () => {
    const c = use();
    const key = await c.keyFor();
    await c.fault("rate_limit_unavailable", 1);
    let res = await create(c, key, { event_id: 200 });
    await expectError(res, 503, "rate_limit_unavailable");
    expect(res.headers.get("retry-after")).toBe("60");

    await c.fault("handoff_unavailable", 1);
    res = await create(c, key, { event_id: 200 });
    await expectError(res, 503, "handoff_unavailable");
    expect(res.headers.get("retry-after")).toBe("60");

    res = await create(c, key, { event_id: 200 });
    expect(res.status).toBe(201);
  });
});
