/**
 * The test-mode API for client test suites (docs/api.md, Test mode) on every target: records
 * that never vanish silently, a reset that can empty the replica, an account's state on either
 * ledger, and `/_test/openapi.json`, against which every answer here is checked.
 */
import { expect, it } from "vitest";
import { DAY_MS } from "../db/contract.ts";
import type { OpenApiDocument } from "../server/openapi.ts";
import { Client, describeMatrix, type Target } from "./harness.ts";
import { ContractValidator } from "./openapi-validator.ts";
import { eventRecord, venueRecord } from "./records.ts";

const NOW = "2031-05-01T12:00:00.000Z";
const NOW_MS = Date.parse(NOW);
const at = (days: number) => new Date(NOW_MS + days * DAY_MS).toISOString();

/** Each target's test-mode document, and a check of an answer against it. */
const described = new WeakMap<Client, Promise<ContractValidator>>();
async function conforms(c: Client, method: string, path: string, res: Response): Promise<Response> {
  let validator = described.get(c);
  if (!validator) {
    validator = c
      .fetch("/_test/openapi.json")
      .then((r) => r.json())
      .then((doc) => new ContractValidator(doc as OpenApiDocument));
    described.set(c, validator);
  }
  const { problems } = await (await validator).check(method, path, res.clone());
  expect({ method, path, status: res.status, problems }).toEqual({ method, path, status: res.status, problems: [] });
  return res;
}

async function post(c: Client, path: string, body: unknown, template = path): Promise<Response> {
  return conforms(c, "POST", template, await c.postJson(path, body));
}

async function records(c: Client, lines: object[]): Promise<Response> {
  const res = await c.fetch("/_test/records", {
    method: "POST",
    headers: { "content-type": "application/x-ndjson" },
    body: lines.map((l) => JSON.stringify(l)).join("\n"),
  });
  return conforms(c, "POST", "/_test/records", res);
}

const stripSeq = ({ seq: _, ...record }: { seq: number; [field: string]: unknown }) => record;
const count = async (c: Client, key: string, query = "") => {
  const n = await count0(c, key, query);
  if (query.includes("lat")) console.error("COUNT", query, n);
  return n;
};
const count0 = async (c: Client, key: string, query = "") =>
  ((await (await c.get(`/v1/events${query}`, key)).json()) as { page: { count: number } }).page.count;

describeMatrix("test-mode API", (use) => {
  it("answers the clock, snapshot and account endpoints as /_test/openapi.json describes them", async () => {
    const c = use();
    await conforms(c, "GET", "/_test/clock", await c.get("/_test/clock"));
    await post(c, "/_test/clock", { set: NOW });
    await post(c, "/_test/clock", { set: "yesterday" });
    await post(c, "/_test/snapshot", {});
    const created = await post(c, "/_test/accounts", { email: "doc@example.com", plan: "basic" });
    const { id } = (await created.json()) as { id: number };
    await post(c, `/_test/accounts/${id}/keys`, { kind: "builder" }, "/_test/accounts/{id}/keys");
    await post(c, `/_test/accounts/${id}/keys`, { kind: "gold" }, "/_test/accounts/{id}/keys");
    await post(c, `/_test/accounts/${id}/sign-in-link`, {}, "/_test/accounts/{id}/sign-in-link");
    await conforms(c, "GET", "/_test/accounts/{id}", await c.get(`/_test/accounts/${id}`));
    await conforms(c, "GET", "/_test/accounts/{id}", await c.get("/_test/accounts/99999999"));
    await post(c, "/_test/faults", { code: "internal_error", path: "/v1/events" });
    await conforms(c, "GET", "/_test/faults", await c.get("/_test/faults"));
    await conforms(c, "DELETE", "/_test/faults", await c.fetch("/_test/faults", { method: "DELETE" }));
    await post(c, "/_test/faults", { code: "nope" });
    await post(c, "/_test/reset", { replica: "yes" });
  });

  it("a record without seq gets the next one; a stale one refuses the whole body, naming the watermark", async () => {
    const c = use();
    await post(c, "/_test/reset", { replica: true });
    const key = await c.keyFor({ plan: "enterprise" });
    const venue = venueRecord(9_001);
    const first = eventRecord(900_001, 9_001, at(1));
    let res = await records(c, [stripSeq(venue), stripSeq(first)]);
    expect(await res.json()).toMatchObject({ applied: 2, skipped: 0, watermark: 2, snapshotEvents: 1 });
    // An explicit seq is kept; the next record without one follows it.
    res = await records(c, [
      { ...eventRecord(900_002, 9_001, at(2)), seq: 10 },
      stripSeq(eventRecord(900_003, 9_001, at(3))),
    ]);
    expect(await res.json()).toMatchObject({ applied: 2, watermark: 11 });

    res = await records(c, [
      stripSeq(eventRecord(900_004, 9_001, at(4))),
      { ...eventRecord(900_005, 9_001, at(5)), seq: 11 },
    ]);
    expect(res.status).toBe(409);
    const body = (await res.json()) as {
      error: { code: string; message: string; watermark: number; line: number; seq: number };
    };
    expect(body.error).toMatchObject({ code: "stale_records", watermark: 11, line: 2, seq: 11 });
    expect(body.error.message).toMatch(/line 2: seq 11 .* watermark 11.*nothing was applied/);
    // Nothing of the body was applied, not even the good line before the stale one.
    expect(await count(c, key, "?limit=100")).toBe(3);
    // A bad line is still a 400 naming it.
    res = await records(c, [stripSeq(eventRecord(900_006, 9_001, at(6))), { type: "event" }]);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/^line 2: /);
    expect(await count(c, key, "?limit=100")).toBe(3);
  });

  it('reset {"replica": true} empties venues, events, snapshot and watermark; the default keeps them', async () => {
    const c = use();
    // On a pair, one server writes and the other reads: what the reader keeps about the replica
    // must not outlive the emptying it did not do itself.
    const servers = (c.target as { servers?: Target[] }).servers;
    const writer = servers ? new Client(servers[0]) : c;
    const reader = servers ? new Client(servers[1]) : c;
    await post(writer, "/_test/reset", { replica: true });
    await c.setClock(NOW);
    await records(writer, [
      stripSeq(venueRecord(9_101, { latitude: 40.7128, longitude: -74.006, city: "New York", state: "NY" })),
      stripSeq(eventRecord(910_001, 9_101, at(1))),
    ]);
    const key = await c.keyFor({ plan: "business" });
    const near = "?lat=40.7128&lng=-74.006&radius_miles=5";
    const la = "?lat=34.0522&lng=-118.2437&radius_miles=5";
    expect(await count(reader, key, near)).toBe(1);

    let res = await post(writer, "/_test/reset", {});
    expect(await res.json()).toEqual({ ok: true, replica: "kept" });
    const kept = await c.keyFor({ plan: "business" });
    expect(await count(reader, kept, near)).toBe(1);

    res = await post(writer, "/_test/reset", { replica: true });
    expect(await res.json()).toEqual({ ok: true, replica: "emptied" });
    const fresh = await c.keyFor({ plan: "business" });
    const health = (await (await reader.get("/healthz")).json()) as {
      events: number;
      venues: number;
      watermark: number;
    };
    expect(health).toMatchObject({ events: 0, venues: 0, watermark: 0 });
    expect(await count(reader, fresh)).toBe(0);
    // The same seqs apply again and describe another place.
    const again = await records(writer, [
      stripSeq(venueRecord(9_102, { latitude: 34.0522, longitude: -118.2437, city: "Los Angeles" })),
      stripSeq(eventRecord(910_002, 9_102, at(1))),
    ]);
    expect(await again.json()).toMatchObject({ watermark: 2, snapshotEvents: 1 });
    expect(await count(reader, fresh, near)).toBe(0);
    expect(await count(reader, fresh, la)).toBe(1);
  });

  it("an account's state: plan, trial, rows of the last 24 hours, request-rate tokens and keys, never a key", async () => {
    const c = use();
    await c.setClock(NOW);
    await records(c, [
      stripSeq(venueRecord(9_201)),
      ...Array.from({ length: 30 }, (_, i) => stripSeq(eventRecord(920_000 + i, 9_201, at(1 + i / 10)))),
    ]);
    const trialId = await c.account({ plan: "none" });
    const trialKey = await c.key(trialId);
    const secondKey = await c.key(trialId, "builder");
    const read = async (id: number) => {
      const res = await conforms(c, "GET", "/_test/accounts/{id}", await c.get(`/_test/accounts/${id}`));
      return (await res.json()) as Record<string, any>;
    };
    let s = await read(trialId);
    expect(s).toMatchObject({
      id: trialId,
      plan: "none",
      access: "trial",
      trial: { state: "not_started", startedAt: null, expiresAt: null, rowsUsed: 0, rowsLeft: 1000 },
      rowsUsed24h: 0,
      rowsLeft24h: null,
      requestRate: [{ bucket: `account:${trialId}`, keyId: null, capacity: 60, tokens: 60 }],
    });
    expect(s.keys.map((k: { kind: string }) => k.kind)).toEqual(["live", "builder"]);
    expect(JSON.stringify(s)).not.toContain(trialKey);
    expect(JSON.stringify(s)).not.toContain(secondKey);
    expect(await count(c, trialKey, "?limit=10")).toBe(10);
    s = await read(trialId);
    expect(s).toMatchObject({
      trial: {
        state: "active",
        startedAt: "2031-05-01T12:00:00Z",
        expiresAt: "2031-05-08T12:00:00Z",
        rowsUsed: 10,
        rowsLeft: 990,
      },
      rowsUsed24h: 10,
      requestRate: [{ tokens: 59 }],
    });

    const paidId = await c.account({ plan: "basic" });
    const paidKeys = [await c.key(paidId), await c.key(paidId)];
    expect(await count(c, paidKeys[1], "?limit=7")).toBe(7);
    s = await read(paidId);
    expect(s).toMatchObject({ access: "basic", trial: null, rowsUsed24h: 7, rowsLeft24h: 100_000 - 7 });
    expect(s.requestRate.map((b: { tokens: number }) => b.tokens)).toEqual([60, 59]);
    expect(s.requestRate[1].fullAt).toBe("2031-05-01T12:00:01Z");
    await c.advance(DAY_MS / 1000);
    expect(await read(paidId)).toMatchObject({ rowsUsed24h: 0, rowsLeft24h: 100_000 });
  });
});
