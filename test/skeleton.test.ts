import { expect, it } from "vitest";
import { describeMatrix } from "./harness.ts";
import { eventRecord, venueRecord } from "./records.ts";

describeMatrix("server skeleton", (use) => {
  it("reports the replica on /healthz with a request id", async () => {
    const c = use();
    // A frozen clock: the snapshot's age is then what the test makes it, however busy the machine.
    await c.setClock("2029-12-01T12:00:00Z");
    await c.records([venueRecord(1), eventRecord(10, 1, "2030-01-01T20:00:00Z")]);
    const res = await c.get("/healthz");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body.events).toBe(1);
    expect(body.snapshotEvents).toBe(1);
    expect(body.watermark).toBeGreaterThan(0);
    expect(body.snapshotAgeSeconds).toBe(0);
    await c.advance(90);
    expect(((await (await c.get("/healthz")).json()) as Record<string, unknown>).snapshotAgeSeconds).toBe(90);
  });

  it("/healthz counts again after every change to the replica (the counts are kept between changes)", async () => {
    const c = use();
    await c.records([venueRecord(1), eventRecord(10, 1, "2030-01-01T20:00:00Z")]);
    const read = async () =>
      (await (await c.get("/healthz")).json()) as { events: number; watermark: number; snapshotEvents: number };
    const first = await read();
    expect(first.events).toBe(1);
    expect(await read()).toEqual({ ...first, now: expect.any(String) } as never);
    await c.records([eventRecord(11, 1, "2030-01-02T20:00:00Z"), eventRecord(12, 1, "2030-01-03T20:00:00Z")]);
    const second = await read();
    expect(second.events).toBe(3);
    expect(second.snapshotEvents).toBe(3);
    expect(second.watermark).toBeGreaterThan(first.watermark);
  });

  it("answers unknown paths with the 404 envelope", async () => {
    const res = await use().get("/nope?x=1");
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: { code: string; requestId: string } };
    expect(body.error.code).toBe("not_found");
    expect(body.error.requestId).toBe(res.headers.get("x-request-id"));
  });

  it("answers unsupported methods and malformed paths with the 404 envelope", async () => {
    for (const [method, path] of [
      ["POST", "/healthz"],
      ["GET", "/%ZZ"],
      ["DELETE", "/v1/events"],
    ]) {
      const res = await use().fetch(path, { method });
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("not_found");
      expect(res.headers.get("x-request-id")).toBeTruthy();
    }
  });

  it("rejects a malformed record batch with its line number and applies none of it", async () => {
    const c = use();
    const before = (await (await c.get("/healthz")).json()) as { events: number };
    const res = await c.fetch("/_test/records", {
      method: "POST",
      body: [JSON.stringify(eventRecord(11, 1, "2030-01-02T20:00:00Z")), "{not json"].join("\n"),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain("line 2");
    const after = (await (await c.get("/healthz")).json()) as { events: number };
    expect(after.events).toBe(before.events);
  });
});
