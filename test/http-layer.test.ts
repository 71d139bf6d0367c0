/**
 * What the HTTP layer refuses (docs/api.md, What the HTTP layer refuses): a request head over
 * 16 KiB is a 431 in the route's envelope with x-request-id, a method no route takes a 404 in the
 * envelope; in-process and on Bun. On Bun, what its parser answers before Marquee's code runs is
 * pinned too, as documented, so a Bun upgrade that changes it is noticed.
 */
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HTTP_LIMITS } from "../db/contract.ts";
import { describeMatrix, startBunServer, type Target } from "./harness.ts";

const polygon = (vertices: number) =>
  Array.from({ length: vertices }, (_, i) => `${(40 + i / 1e5).toFixed(5)},${(-74 + i / 1e5).toFixed(5)}`).join(";");

async function expectEnvelope(res: Response, status: number, code: string, envelope: "list" | "handoff" = "list") {
  const id = res.headers.get("x-request-id");
  expect(id).toBeTruthy();
  expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
  const body = (await res.json()) as {
    error: { code: string; message: string; requestId?: string };
    request_id?: string;
  };
  expect({ status: res.status, code: body.error.code }).toEqual({ status, code });
  expect(typeof body.error.message).toBe("string");
  expect(envelope === "list" ? body.error.requestId : body.request_id).toBe(id);
}

describeMatrix("the HTTP layer's refusals", (use) => {
  let key: string;
  beforeAll(async () => {
    key = await use().keyFor({ plan: "business" });
  });
  const raw = (path: string, init: RequestInit = {}) => use().target.fetch(path, init);
  const auth = () => ({ authorization: `Bearer ${key}` });

  it("answers a 20 kB header with 431 in the envelope, on every kind of route", async () => {
    const big = { "x-padding": "a".repeat(20_000) };
    // Through the conformance client: the document lists both 431s with their headers.
    const list = await use().fetch("/v1/events", { headers: { ...auth(), ...big } });
    // docs/api.md, Headers: every list response reports a rate limit; here the published one.
    expect(list.headers.get("x-ratelimit-limit")).toBe("60");
    await expectEnvelope(list, 431, "request_header_too_large");
    await expectEnvelope(await raw("/healthz", { headers: big }), 431, "request_header_too_large");
    await expectEnvelope(await raw("/no/such/path", { headers: big }), 431, "request_header_too_large");
    await expectEnvelope(
      await use().fetch("/v1/ticket-handoffs", {
        method: "POST",
        headers: { ...auth(), ...big, "content-type": "application/json" },
        body: '{"event_id":1}',
      }),
      431,
      "invalid_request",
      "handoff",
    );
  });

  it("answers a 100 kB query and a 10,000-vertex polygon with 431 in the envelope", async () => {
    await expectEnvelope(
      await raw(`/v1/events?city=${"x".repeat(100_000)}`, { headers: auth() }),
      431,
      "request_header_too_large",
    );
    const ring = encodeURIComponent(polygon(10_000));
    expect(ring.length).toBeGreaterThan(200_000);
    await expectEnvelope(await raw(`/v1/events?polygon=${ring}`, { headers: auth() }), 431, "request_header_too_large");
  });

  it("serves a head just under the limit", async () => {
    const padding = "a".repeat(HTTP_LIMITS.maxHeadBytes - 2_000);
    expect((await raw("/v1/events?limit=1", { headers: { ...auth(), "x-padding": padding } })).status).toBe(200);
    // 33 vertices: the API's own refusal, not the head limit.
    const ring = encodeURIComponent(polygon(33));
    await expectEnvelope(await raw(`/v1/events?polygon=${ring}`, { headers: auth() }), 400, "invalid_polygon");
  });

  it("answers a method no route takes with 404 in the envelope", async () => {
    for (const method of ["PUT", "DELETE", "OPTIONS", "PATCH", "PROPFIND", "PURGE"]) {
      await expectEnvelope(await raw("/v1/events", { method, headers: auth() }), 404, "not_found");
    }
    await expectEnvelope(await raw("/healthz", { method: "POST" }), 404, "not_found");
  });
});

/** Sends raw bytes and returns what came back before the server closed the connection. */
function exchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    let out = "";
    socket.on("data", (d) => (out += d));
    socket.on("close", () => resolve(out));
    socket.on("error", reject);
    socket.write(bytes);
    // A server that waits for more would keep the socket open: end our side after a moment.
    setTimeout(() => socket.end(), 1_000);
  });
}

describe("what Bun's HTTP parser answers before Marquee's code runs", () => {
  let bun: Target;
  let port: number;
  beforeAll(async () => {
    bun = await startBunServer();
    port = Number(new URL(bun.baseUrl).port);
  });
  afterAll(() => bun.close());

  it("closes the connection on a method it does not know, without an answer", async () => {
    expect(await exchange(port, "FOO /v1/events HTTP/1.1\r\nHost: x\r\n\r\n")).toBe("");
    expect(await exchange(port, "get /v1/events HTTP/1.1\r\nHost: x\r\n\r\n")).toBe("");
  });

  it("answers a bare 400 to a NUL byte in a header and to chunked plus Content-Length", async () => {
    const bare400 = /^HTTP\/1\.1 400 Bad Request\r\n/;
    expect(await exchange(port, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\0b\r\n\r\n")).toMatch(bare400);
    expect(
      await exchange(
        port,
        "POST /v1/ticket-handoffs HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
      ),
    ).toMatch(bare400);
  });

  it("answers a head over its own 512 KiB with a bare 431, and one under it reaches Marquee", async () => {
    const over = await exchange(
      port,
      `GET /healthz HTTP/1.1\r\nHost: x\r\nX-P: ${"a".repeat(HTTP_LIMITS.parserHeadBytes)}\r\n\r\n`,
    );
    expect(over).toMatch(/^HTTP\/1\.1 431 /);
    expect(over).not.toMatch(/x-request-id/i);
    const under = await exchange(
      port,
      `GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-P: ${"a".repeat(400_000)}\r\n\r\n`,
    );
    expect(under).toMatch(/^HTTP\/1\.1 431 /);
    expect(under).toMatch(/x-request-id: /i);
    expect(under).toContain('"code":"request_header_too_large"');
  });
});

describe("Bun's parser limit", () => {
  it("is the same wherever Marquee starts Bun", async () => {
    const { BUN_SERVE_ARGS } = await import("../bin/find-bun.js");
    const flag = `--max-http-header-size=${HTTP_LIMITS.parserHeadBytes}`;
    expect(BUN_SERVE_ARGS).toEqual([flag]);
    const { readFileSync } = await import("node:fs");
    const scripts = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).scripts;
    expect(scripts.start).toContain(`bun ${flag} `);
    expect(scripts.build).toContain(`--compile-exec-argv=${flag} `);
  });
});
