/**
 * Test mode's request journal (docs/api.md, Test mode): `GET /_test/requests?limit=N` answers the
 * last requests, oldest first, at most 1,000 kept, with their fields and never a key;
 * `DELETE /_test/requests` empties it; each server has its own. In-process and on a spawned Bun
 * server; `marquee/testing` reads it with `requests()`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../server/app.ts";
import { resolveConfig } from "../server/config.ts";
import { createContext } from "../server/context.ts";
import type { JournalEntry } from "../server/request-journal.ts";
import { startMarquee } from "../testing/index.ts";
import { Client, startBunServer, startInProcess, type Target } from "./harness.ts";
import { eventRecord, venueRecord } from "./records.ts";

const NOW = "2030-03-01T12:00:00.000Z";

async function journal(c: Client, query = ""): Promise<JournalEntry[]> {
  const res = await c.fetch(`/_test/requests${query}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { requests: JournalEntry[] }).requests;
}

for (const kind of ["in-process", "bun"] as const) {
  describe(`the request journal [${kind}]`, () => {
    let target: Target;
    let c: Client;
    beforeAll(async () => {
      target = kind === "bun" ? await startBunServer() : await startInProcess();
      c = new Client(target);
      await c.setClock(NOW);
      await c.records([venueRecord(1), eventRecord(1001, 1, "2030-03-10T20:00:00Z")]);
    });
    afterAll(async () => {
      await target.close();
    });

    it("lists the answered requests oldest first, with their fields, and no key or test set-up", async () => {
      const accountId = await c.account({ plan: "business" });
      const issued = (await (await c.postJson(`/_test/accounts/${accountId}/keys`, { kind: "live" })).json()) as {
        id: number;
        key: string;
      };
      const page = await c.get("/v1/events?state=CA&limit=5", issued.key, { "x-request-id": "journal-1" });
      expect(page.status).toBe(200);
      const refused = await target.fetch(`/v1/events?api_key=${issued.key}&state=CA`);
      expect(refused.status).toBe(401);

      const text = await (await c.fetch("/_test/requests")).text();
      expect(text).not.toContain(issued.key);
      const entries = ((JSON.parse(text) as { requests: JournalEntry[] }).requests as JournalEntry[]).slice(-2);
      expect(entries).toEqual([
        {
          time: NOW,
          requestId: "journal-1",
          method: "GET",
          path: "/v1/events",
          query: "state=CA&limit=5",
          status: 200,
          code: null,
          keyId: issued.id,
          accountId,
          rows: 1,
        },
        {
          time: NOW,
          requestId: refused.headers.get("x-request-id"),
          method: "GET",
          path: "/v1/events",
          query: "api_key=[redacted]&state=CA",
          status: 401,
          code: "invalid_api_key",
          keyId: null,
          accountId: null,
          rows: 0,
        },
      ]);
      // The test's own calls to /_test/* are not the code under test's requests.
      expect((await journal(c)).filter((e) => e.path.startsWith("/_test/"))).toEqual([]);
    });

    it("follows the test clock, answers the last N, and empties on DELETE", async () => {
      await c.advance(60);
      for (const state of ["NY", "TX", "WA"]) await target.fetch(`/v1/events?state=${state}`);
      const last = await journal(c, "?limit=2");
      expect(last.map((e) => e.query)).toEqual(["state=TX", "state=WA"]);
      expect(last[0].time).toBe("2030-03-01T12:01:00.000Z");
      for (const bad of ["0", "1001", "x", "-1"]) {
        const res = await c.fetch(`/_test/requests?limit=${bad}`);
        expect(res.status).toBe(400);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_request");
      }
      const cleared = await c.fetch("/_test/requests", { method: "DELETE" });
      expect(cleared.status).toBe(200);
      expect(await journal(c)).toEqual([]);
      await target.fetch("/healthz");
      expect((await journal(c)).map((e) => e.path)).toEqual(["/healthz"]);
      expect((await c.fetch("/_test/requests", { method: "POST" })).status).toBe(404);
    });

    it("keeps the last 1,000", async () => {
      await c.fetch("/_test/requests", { method: "DELETE" });
      for (let i = 0; i < 1005; i++) await target.fetch(`/livez?n=${i}`);
      const kept = await journal(c);
      expect(kept).toHaveLength(1000);
      expect(kept[0].query).toBe("n=5");
      expect(kept.at(-1)!.query).toBe("n=1004");
    }, 60_000);
  });
}

describe("the request journal outside test mode", () => {
  it("is the 404 every /_test/* path is", async () => {
    const dir = mkdtempSync(join(tmpdir(), "marquee-journal-"));
    const ctx = await createContext(resolveConfig({ dbPath: join(dir, "m.db") }, {}));
    try {
      const app = createApp(ctx);
      for (const method of ["GET", "DELETE"])
        expect((await app.request("http://x/_test/requests", { method })).status).toBe(404);
      expect(ctx.requests.journal).toBeNull();
    } finally {
      ctx.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("marquee/testing's requests()", () => {
  it("reads and clears its own instance's journal; another instance has its own", async () => {
    const [a, b] = await Promise.all([startMarquee(), startMarquee()]);
    try {
      const key = await a.createKey();
      await fetch(`${a.url}/v1/events?state=NY`, { headers: { authorization: `Bearer ${key}` } });
      await fetch(`${b.url}/healthz`);
      const seen = await a.requests();
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ method: "GET", path: "/v1/events", query: "state=NY", status: 200, rows: 0 });
      expect(JSON.stringify(seen)).not.toContain(key);
      expect((await b.requests()).map((e) => e.path)).toEqual(["/healthz"]);
      expect(await a.requests({ limit: 1 })).toEqual(seen);
      await a.clearRequests();
      expect(await a.requests()).toEqual([]);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 60_000);
});
