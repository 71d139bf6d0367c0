/**
 * docs/api.md, Ticket handoffs "exactly one redirect ever, under any concurrency", and durability: the redemption
 * is committed (synchronous=FULL) before the 303 leaves, so it survives a kill -9 right after.
 * Against the real Bun server (bun:sqlite), plus a ledger-lock test in-process: a held write lock
 * yields a 503 after the busy timeout, never a hang or a 500.
 */

import { rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, startBunServer, startInProcess, type Target } from "./harness.ts";
import { eventRecord, venueRecord } from "./records.ts";

const require = createRequire(import.meta.url);
const Database = require("better-sqlite3") as typeof import("better-sqlite3");

const NOW = "2030-03-01T12:00:00.000Z";
const SELLER_URL = "https://www.ticketmaster.com/event/500?aff=mq";

async function seed(c: Client): Promise<{ id: string; path: string; key: string }> {
  await c.setClock(NOW);
  await c.records([
    venueRecord(1),
    eventRecord(500, 1, "2030-03-10T04:00:00Z", {
      ticketLinks: [{ url: SELLER_URL, seller: "ticketmaster", broken: false }],
    }),
  ]);
  const key = await c.keyFor();
  const res = await c.postJson("/v1/ticket-handoffs", { event_id: 500 }, { authorization: `Bearer ${key}` });
  expect(res.status).toBe(201);
  const body = (await res.json()) as { handoff_id: string; handoff_url: string };
  return { id: body.handoff_id, path: new URL(body.handoff_url).pathname, key };
}

describe("handoff Continue under concurrency [bun]", () => {
  let target: Awaited<ReturnType<typeof startBunServer>>;
  beforeAll(async () => {
    target = await startBunServer();
  });
  afterAll(() => {
    if (target.child.exitCode === null && target.child.signalCode === null) target.child.kill("SIGKILL");
    rmSync(target.dir, { recursive: true, force: true });
  });

  it("100 simultaneous Continues: one 303, 99 409s, one click that survives kill -9", async () => {
    const c = new Client(target);
    const h = await seed(c);
    const responses = await Promise.all(
      Array.from({ length: 100 }, () =>
        fetch(`${target.baseUrl}${h.path}/continue`, { method: "POST", redirect: "manual" }).then(async (r) => {
          await r.arrayBuffer();
          return r;
        }),
      ),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 303)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(99);
    expect(responses.find((r) => r.status === 303)!.headers.get("location")).toBe(SELLER_URL);

    // Crash right after the responses: nothing else touches the server before the kill.
    const exited = new Promise((resolve) => target.child.once("exit", resolve));
    target.child.kill("SIGKILL");
    await exited;

    const ledger = new Database(join(target.dir, "marquee.ledger.db"));
    try {
      const clicks = ledger.prepare("SELECT handoff_id, seller_url FROM handoff_clicks").all();
      expect(clicks).toEqual([{ handoff_id: h.id, seller_url: SELLER_URL }]);
      const row = ledger.prepare("SELECT redeemed_ms FROM handoffs WHERE id = ?").get(h.id) as {
        redeemed_ms: number | null;
      };
      expect(row.redeemed_ms).toBe(Date.parse(NOW));
    } finally {
      ledger.close();
    }
  });
});

describe("handoffs with the ledger write-locked [in-process]", () => {
  let target: Target;
  beforeAll(async () => {
    target = await startInProcess();
  });
  afterAll(async () => {
    await target.close();
  });

  it("answers 503 with Retry-After after the busy timeout, then recovers", async () => {
    const c = new Client(target);
    const h = await seed(c);
    const other = new Database(join(target.dir, "marquee.ledger.db"));
    try {
      other.exec("BEGIN IMMEDIATE"); // holds the write lock
      const started = Date.now();
      const created = await c.postJson("/v1/ticket-handoffs", { event_id: 500 }, { authorization: `Bearer ${h.key}` });
      expect(created.status).toBe(503);
      expect(created.headers.get("retry-after")).toBe("60");
      const body = (await created.json()) as { error: { code: string }; request_id: string };
      expect(["rate_limit_unavailable", "handoff_unavailable"]).toContain(body.error.code);

      const continued = await c.fetch(`${h.path}/continue`, { method: "POST" });
      expect(continued.status).toBe(503);
      expect(continued.headers.get("retry-after")).toBe("60");
      expect(continued.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(Date.now() - started).toBeLessThan(20_000);
    } finally {
      other.exec("ROLLBACK");
      other.close();
    }
    const after = await c.fetch(`${h.path}/continue`, { method: "POST" });
    expect(after.status).toBe(303);
  });
});
