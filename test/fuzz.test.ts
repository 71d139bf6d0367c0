/**
 * Fuzzing the two inputs a client controls most (docs/api.md, Errors): raw query strings on
 * GET /v1/events (any bytes, percent-escapes valid or not, any parameter, repeats, non-ASCII) and
 * request bodies on POST /v1/ticket-handoffs (any JSON, any bytes, any Content-Type). Whatever
 * arrives: never a 500, and every answer in its envelope with its request id. In-process and on Bun.
 */
import fc from "fast-check";
import { beforeAll, expect, it } from "vitest";
import { LIST_PARAMETERS } from "../server/params.ts";
import { describeMatrix } from "./harness.ts";
import { eventRecord, venueRecord } from "./records.ts";

const NOW = "2030-01-01T00:00:00Z";
/** Every list parameter, and one the API refuses (offset pagination). */
const NAMES = [...LIST_PARAMETERS.map((p) => p.name), "page"];

/** Query-string text as a client might send it: escapes of any bytes, malformed escapes, raw characters. */
const queryText = fc
  .array(
    fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 8 }).map(encodeURIComponent),
      fc.uint8Array({ maxLength: 4 }).map((b) => [...b].map((x) => `%${x.toString(16).padStart(2, "0")}`).join("")),
      fc.constantFrom("%", "%z", "%C4", "%C4%B1", "%C5%BF", "%00", "+", "&", "=", ";", ",", "%3B", "..", "-1", "1e400"),
      fc.stringMatching(/^[A-Za-z0-9._~:,-]{0,10}$/),
    ),
    { maxLength: 6 },
  )
  .map((parts) => parts.join(""));

const query = fc
  .array(fc.tuple(fc.oneof(fc.constantFrom(...NAMES), queryText), queryText), { maxLength: 6 })
  .map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join("&"));

const handoffBody = fc.oneof(
  fc.json(),
  fc.record({ event_id: fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(null), fc.jsonValue()) }),
  fc
    .dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 })
    .map((o) => JSON.stringify({ event_id: 1, ...o })),
  fc.string({ unit: "binary", maxLength: 1_200 }),
  fc.uint8Array({ maxLength: 1_100 }),
);
const contentType = fc.constantFrom(
  "application/json",
  "application/json; charset=utf-8",
  "APPLICATION/JSON",
  "text/plain",
  "application/json; charset=latin1",
  "",
);

function expectListEnvelope(status: number, requestId: string | null, body: unknown) {
  expect(status).toBeLessThan(500);
  expect(requestId).toBeTruthy();
  const b = body as { error?: { code: unknown; message: unknown; requestId: unknown }; data?: unknown; page?: unknown };
  if (status === 200) {
    expect(Array.isArray(b.data)).toBe(true);
    expect(b.page).toBeTypeOf("object");
  } else {
    expect(typeof b.error?.code).toBe("string");
    expect(typeof b.error?.message).toBe("string");
    expect(b.error?.requestId).toBe(requestId);
  }
}

describeMatrix("fuzz", (use) => {
  let key: string;
  beforeAll(async () => {
    const c = use();
    await c.setClock(NOW);
    await c.records([venueRecord(1), eventRecord(1, 1, "2030-01-05T20:00:00Z")]);
    // Rate units and the handoff limit do not run out during the runs: negotiated, generous.
    key = await c.keyFor({ plan: "enterprise", rateSustained: 1_000_000, rateBurst: 1_000_000 });
  });

  it("GET /v1/events: any query string, never a 500, always the envelope", async () => {
    await fc.assert(
      fc.asyncProperty(query, async (qs) => {
        const res = await use().target.fetch(`/v1/events?${qs}`, { headers: { authorization: `Bearer ${key}` } });
        const text = await res.text();
        let body: unknown;
        expect(() => (body = JSON.parse(text)), `${qs} → ${res.status} ${text.slice(0, 200)}`).not.toThrow();
        expectListEnvelope(res.status, res.headers.get("x-request-id"), body);
      }),
      { numRuns: 200 },
    );
  });

  it("POST /v1/ticket-handoffs: any body, never a 500, always the handoff envelope", async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(handoffBody, contentType, async (payload, type) => {
        // Ten creations a minute per account: a fresh minute for every tenth attempt.
        if (++n % 10 === 0) await use().advance(61);
        const res = await use().target.fetch("/v1/ticket-handoffs", {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, ...(type ? { "content-type": type } : {}) },
          body: typeof payload === "string" || payload instanceof Uint8Array ? payload : JSON.stringify(payload),
        });
        const text = await res.text();
        expect(res.status, text).toBeLessThan(500);
        const body = JSON.parse(text) as { error?: { code: string; message: string }; request_id?: string };
        if (res.status === 201) return;
        expect(res.status).not.toBe(429);
        expect(typeof body.error?.code).toBe("string");
        expect(typeof body.error?.message).toBe("string");
        expect(body.request_id).toBe(res.headers.get("x-request-id"));
      }),
      { numRuns: 150 },
    );
  });
});
