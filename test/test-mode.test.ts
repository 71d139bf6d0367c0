import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { H3 } from "h3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../server/app.ts";
import { resolveConfig } from "../server/config.ts";
import { type AppContext, createContext } from "../server/context.ts";
import { describeMatrix } from "./harness.ts";

const TEST_PATHS: Array<[string, string]> = [
  ["GET", "/_test/clock"],
  ["POST", "/_test/clock"],
  ["POST", "/_test/records"],
  ["POST", "/_test/snapshot"],
  ["POST", "/_test/accounts"],
  ["PATCH", "/_test/accounts/1"],
  ["POST", "/_test/accounts/1/keys"],
  ["POST", "/_test/faults"],
  ["GET", "/_test/faults"],
  ["DELETE", "/_test/faults"],
  ["GET", "/_test/accounts/1"],
  ["POST", "/_test/reset"],
  ["GET", "/_test/openapi.json"],
];

describe("test-mode endpoints without --test-mode", () => {
  let dir: string;
  let ctx: AppContext;
  let app: H3;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "marquee-prod-"));
    ctx = await createContext(resolveConfig({ dbPath: join(dir, "m.db") }, {}));
    app = createApp(ctx);
  });
  afterAll(() => {
    ctx.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(TEST_PATHS)("%s %s is the 404 envelope", async (method, path) => {
    const res = await app.request(`http://x${path}`, { method, body: method === "GET" ? undefined : "{}" });
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: { code: string; requestId: string } };
    expect(body.error.code).toBe("not_found");
    expect(body.error.requestId).toBe(res.headers.get("x-request-id"));
  });
});

describeMatrix("test-mode clock", (use) => {
  it("freezes at a set instant and advances only when told", async () => {
    const c = use();
    await c.setClock("2030-05-01T12:00:00Z");
    const a = (await (await c.get("/_test/clock")).json()) as { now: string; frozen: boolean };
    expect(a).toEqual({ now: "2030-05-01T12:00:00.000Z", frozen: true });
    await c.advance(90);
    const b = (await (await c.get("/_test/clock")).json()) as { now: string };
    expect(b.now).toBe("2030-05-01T12:01:30.000Z");
  });

  it("rejects a malformed clock body", async () => {
    const res = await use().postJson("/_test/clock", { set: "yesterday" });
    expect(res.status).toBe(400);
  });

  it("refuses a move out of range with a 400 and stays where it was", async () => {
    const c = use();
    await c.setClock("2030-05-01T12:00:00Z");
    for (const body of [
      { advanceSeconds: 1e15 },
      { advanceSeconds: -1e12 },
      { advanceSeconds: 1e300 },
      { set: "10000-01-01T00:00:00Z" },
      { set: "9999-12-31T23:59:59-23:59" },
      { set: "1969-12-31T23:59:59Z" },
    ]) {
      const res = await c.postJson("/_test/clock", body);
      const err = (await res.json()) as { error: { code: string; message: string } };
      expect({ body, status: res.status, code: err.error.code }).toEqual({
        body,
        status: 400,
        code: "invalid_request",
      });
      const clock = (await (await c.get("/_test/clock")).json()) as { now: string };
      expect(clock.now).toBe("2030-05-01T12:00:00.000Z");
      expect((await c.get("/healthz")).status).toBe(200);
    }
    // The edges themselves are in range.
    await c.setClock("9999-12-31T23:59:59.999Z");
    await c.setClock("1970-01-01T00:00:00Z");
    await c.setClock("2030-05-01T12:00:00Z");
  });

  it("creates accounts and keys, and reset empties the ledger", async () => {
    const c = use();
    const id = await c.account({ email: "a@example.com", plan: "basic" });
    const key = await c.key(id, "builder");
    expect(key).toMatch(/^mq_builder_[0-9A-Za-z]{38}$/);
    expect((await c.fetch(`/_test/accounts/${id}`)).status).toBe(200);
    await c.reset();
    expect((await c.fetch(`/_test/accounts/${id}`)).status).toBe(404);
  });

  it("validates account bodies", async () => {
    const c = use();
    expect((await c.postJson("/_test/accounts", { email: "x@example.com", plan: "gold" })).status).toBe(400);
    expect((await c.postJson("/_test/accounts", { plan: "basic" })).status).toBe(400);
    expect((await c.postJson("/_test/accounts/999999/keys", { kind: "live" })).status).toBe(404);
  });
});
