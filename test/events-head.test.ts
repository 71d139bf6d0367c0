/**
 * HEAD /v1/events (docs/api.md, Listing events): GET's checks, status and headers without a
 * body, charging the request-rate units only: no rows, no trial start, no reservation.
 * In-process and on Bun, where `Bun.serve`'s router would otherwise answer HEAD with the GET route.
 */
import { beforeAll, expect, it } from "vitest";
import { describeMatrix } from "./harness.ts";
import { eventRecord, venueRecord } from "./records.ts";

const NOW = "2030-01-01T00:00:00Z";

describeMatrix("HEAD /v1/events", (use) => {
  beforeAll(async () => {
    const c = use();
    await c.setClock(NOW);
    await c.records([
      venueRecord(1),
      ...Array.from({ length: 30 }, (_, i) => eventRecord(100 + i, 1, `2030-01-0${2 + (i % 5)}T20:00:00Z`)),
    ]);
  });

  const head = (key: string, qs = "") =>
    use().fetch(`/v1/events${qs}`, { method: "HEAD", headers: { authorization: `Bearer ${key}` } });

  it("spends no trial rows and does not start the trial; each HEAD costs one rate unit", async () => {
    const c = use();
    const key = await c.keyFor({ plan: "none", verified: true });
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await head(key);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-request-id")).toBeTruthy();
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      expect(await res.text()).toBe("");
      expect(res.headers.get("x-trial-rowbudget-remaining")).toBe("1000");
      remaining.push(res.headers.get("x-ratelimit-remaining")!);
    }
    expect(remaining).toEqual(["59", "58", "57"]);
    // The trial starts with the first GET, a day later: its 7 days run from then.
    await c.advance(24 * 3600);
    const get = await c.get("/v1/events?limit=5", key);
    expect(get.status).toBe(200);
    expect(get.headers.get("x-trial-rowbudget-remaining")).toBe("995");
    expect(get.headers.get("x-trial-expires-at")).toBe("2030-01-09T00:00:00Z");
    expect((await head(key)).headers.get("x-trial-rowbudget-remaining")).toBe("995");
  });

  it("spends no row budget", async () => {
    const key = await use().keyFor({ plan: "basic" });
    for (let i = 0; i < 3; i++) {
      const res = await head(key, "?limit=100");
      expect(res.status).toBe(200);
      expect(res.headers.get("x-rowbudget-remaining")).toBe("100000");
    }
  });

  it("answers GET's refusals with their status", async () => {
    const key = await use().keyFor({ plan: "basic" });
    expect((await head(key, "?state=XX")).status).toBe(400);
    expect((await head(key, "?polygon=1,1;1,2;2,2")).status).toBe(403);
    expect((await head("mq_live_nope")).status).toBe(401);
  });
});
