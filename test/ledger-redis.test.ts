// The Redis ledger (server/ledger/redis.ts) against a real redis-server: the ledger contract
// (test/ledger-contract.ts), each operation's Redis-side semantics and its exactness under
// concurrency, then what only a shared ledger has: several instances on one server, a stopped
// server, a restarted one, and a Redis Cluster of three primaries.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { HANDOFF, MINUTE_MS, PORTAL, RATE } from "../db/contract.ts";
import type { BucketSpec } from "../db/rate-buckets.ts";
import type { NewKey } from "../server/ledger/ledger.ts";
import { assertNoEviction, assertRedisVersion, openRedisLedger, type RedisLedger } from "../server/ledger/redis.ts";
import { connectRedis } from "../server/ledger/redis-connection.ts";
import { RedisCounters } from "../server/ledger/redis-counters.ts";
import { REDIS_KEYS } from "../server/ledger/redis-keys.ts";
import { ledgerContract } from "./ledger-contract.ts";
import { raceTrialAt990 } from "./redis-races.ts";
import { type RedisCluster, type RedisServer, startRedisCluster, startRedisServer } from "./redis-server.ts";

const T0 = Date.UTC(2026, 5, 1, 12);
let server: RedisServer;
let ledger: RedisLedger;

beforeAll(async () => {
  server = await startRedisServer();
  ledger = await openRedisLedger(server.url);
});
afterAll(async () => {
  await ledger?.close();
  await server?.stop();
});
beforeEach(() => ledger.reset());

// Each contract test gets its own connections to the shared server, emptied as test mode empties it.
ledgerContract("redis", async () => {
  const opened = await openRedisLedger(server.url);
  await opened.reset();
  await opened.test.writeClock(null);
  return { ledger: opened, close: () => opened.close() };
});

describe("on Redis Cluster", () => {
  let cluster: RedisCluster;
  beforeAll(async () => {
    cluster = await startRedisCluster();
  });
  afterAll(() => cluster?.stop());

  ledgerContract("redis cluster", async () => {
    const opened = await openRedisLedger(cluster.url);
    await opened.reset();
    await opened.test.writeClock(null);
    return { ledger: opened, close: () => opened.close() };
  });

  it("keeps accounts on every primary, through a URL that names any one of them", async () => {
    const opened = await openRedisLedger(`redis://127.0.0.1:${cluster.ports[2]}`);
    try {
      await opened.reset();
      const ids: number[] = [];
      for (let i = 0; i < 12; i++) ids.push((await opened.createAccount({ email: `c${i}@example.com` }, T0)).id);
      const holding = cluster.ports.filter((p) => cluster.cli(p, "KEYS", "marquee:{a*").trim() !== "");
      expect(holding.length).toBeGreaterThan(1);
      for (const [i, id] of ids.entries()) expect((await opened.readAccount(id))?.email).toBe(`c${i}@example.com`);
      await opened.reset();
      expect(cluster.ports.map((p) => cluster.cli(p, "KEYS", "marquee:{a*").trim())).toEqual(["", "", ""]);
    } finally {
      await opened.close();
    }
  });

  it("makes the request path's decisions exactly across two connections, for accounts on every primary", async () => {
    const clients = [await connectRedis(cluster.url), await connectRedis(`redis://127.0.0.1:${cluster.ports[1]}`)];
    try {
      const counters = clients.map((c) => new RedisCounters(c));
      const accounts = Array.from({ length: 6 }, (_, i) => 9_000 + i);
      const bucket = (id: number): BucketSpec => ({
        bucket: `key:${id}`,
        capacity: RATE.capacity,
        refillPerSecond: RATE.refillPerSecond,
      });
      // 61 takes of each account, all in one turn, alternating connections: 60 admitted each.
      const verdicts = await Promise.all(
        accounts.flatMap((id) =>
          Array.from({ length: 61 }, (_, i) => counters[i % 2].takeTokens(id, bucket(id), 1, T0)),
        ),
      );
      for (const [n, id] of accounts.entries()) {
        const mine = verdicts.slice(n * 61, (n + 1) * 61);
        expect(
          mine.filter((v) => v.admitted),
          `account ${id}`,
        ).toHaveLength(60);
      }
      // A trial at 990 rows raced by 50 pages over both connections delivers exactly 10.
      const trial = accounts[0];
      const rows = await raceTrialAt990(clients[0], counters, trial, T0);
      expect(rows.reduce((x, y) => x + y, 0)).toBe(10);
      expect(await clients[1].get(REDIS_KEYS.usageTotal(trial))).toBe("10");
      const holding = cluster.ports.filter((p) => cluster.cli(p, "KEYS", "marquee:{a9*").trim() !== "");
      expect(holding.length).toBeGreaterThan(1);
    } finally {
      for (const c of clients) c.disconnect();
    }
  });

  it("refuses a database number, which a cluster does not have", async () => {
    await expect(openRedisLedger(`${cluster.url}/2`)).rejects.toThrow(
      `the Redis ledger at ${cluster.url}/2 is a Redis Cluster: it has database 0 only`,
    );
  });

  it("each node refuses a script whose keys span slots, so the contract above shows each stays in one", () => {
    expect(cluster.cli(cluster.ports[0], "EVAL", "return 1", "2", "x{a1}", "x{a2}")).toMatch(/CROSSSLOT/);
  });
});

let digests = 0;
const newKey = (accountId: number, extra: Partial<NewKey> = {}): NewKey => ({
  accountId,
  kind: "live",
  digest: `d${++digests}`.padEnd(64, "0"),
  prefix: `mq_live_${digests}`,
  ...extra,
});

const until = async (ok: () => boolean, ms: number): Promise<boolean> => {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 10));
  }
  return true;
};

describe("accounts", () => {
  it("creates with the defaults, reads back the same, counts", async () => {
    const a = await ledger.createAccount({ email: "a@example.com", plan: "basic" }, T0);
    expect(a).toEqual({
      id: a.id,
      email: "a@example.com",
      plan: "basic",
      verified: true,
      hadSubscription: false,
      rowBudget: null,
      rateSustained: null,
      rateBurst: null,
      policy: "ok",
      keyLimit: PORTAL.defaultKeyLimit,
      createdMs: T0,
      updatedMs: T0,
    });
    expect(await ledger.readAccount(a.id)).toEqual(a);
    const b = await ledger.createAccount({ email: "b@example.com", verified: false, rowBudget: 500 }, T0);
    expect(b.id).toBeGreaterThan(a.id);
    expect(await ledger.readAccount(b.id)).toMatchObject({ verified: false, rowBudget: 500 });
    expect(await ledger.countAccounts()).toBe(2);
    expect(await ledger.readAccount(999)).toBeUndefined();
  });

  it("updates given fields, clears nulls, and ending a paid plan leaves a prior subscription", async () => {
    const a = await ledger.createAccount({ email: "a@example.com", plan: "business", rateSustained: 60 }, T0);
    const changed = await ledger.updateAccount(a.id, { rowBudget: 10, rateSustained: null, email: undefined }, T0 + 5);
    expect(changed).toEqual({ ...a, rowBudget: 10, rateSustained: null, updatedMs: T0 + 5 });
    expect(await ledger.updateAccount(a.id, { plan: "none" }, T0 + 6)).toMatchObject({
      plan: "none",
      hadSubscription: true,
    });
    const b = await ledger.createAccount({ plan: "basic" }, T0);
    expect(await ledger.updateAccount(b.id, { plan: "none", hadSubscription: false }, T0)).toMatchObject({
      hadSubscription: false,
    });
    expect(await ledger.updateAccount(12345, { plan: "basic" }, T0)).toBeUndefined();
    expect(await ledger.readAccount(12345)).toBeUndefined();
  });
});

describe("keys", () => {
  it("stores digests, lists in id order, finds by digest, and keeps the first revocation time", async () => {
    const a = await ledger.createAccount({}, T0);
    const other = await ledger.createAccount({}, T0);
    const k1 = newKey(a.id);
    const id1 = await ledger.insertKey(k1, T0);
    const id2 = await ledger.insertKey(newKey(a.id, { kind: "builder", origin: { label: "ci" } }), T0 + 1);
    expect(id2).toBeGreaterThan(id1);
    expect(await ledger.findKeyByDigest(k1.digest)).toEqual({
      id: id1,
      accountId: a.id,
      kind: "live",
      prefix: k1.prefix,
      createdMs: T0,
      revokedMs: null,
    });
    expect(await ledger.findKeyByDigest("f".repeat(64))).toBeUndefined();
    const listed = await ledger.listKeys(a.id);
    expect(listed.map((k) => [k.id, k.label, k.issuedBy])).toEqual([
      [id1, null, "operator"],
      [id2, "ci", "operator"],
    ]);
    expect(await ledger.readAccountKey(a.id, id2)).toEqual(listed[1]);
    expect(await ledger.readAccountKey(other.id, id2)).toBeUndefined();

    expect(await ledger.revokeKey(id1, T0 + 10)).toBe(true);
    expect(await ledger.revokeKey(id1, T0 + 20)).toBe(true);
    expect((await ledger.findKeyByDigest(k1.digest))?.revokedMs).toBe(T0 + 10);
    expect(await ledger.revokeKey(99_999, T0)).toBe(false);
    expect(await ledger.ownerKeyCounts(a.id, 0)).toEqual({ activeKeys: 1, issued: { count: 0, oldestMs: null } });
  });

  it("refuses a key for an account that does not exist", async () => {
    await expect(ledger.insertKey(newKey(4242), T0)).rejects.toThrow(/no such account/);
  });

  it("keeps owners within the active-key ceiling first, then the hourly issuance ceiling", async () => {
    const a = await ledger.createAccount({}, T0);
    const ceilings = { keyLimit: 2, perWindow: 3, windowMs: PORTAL.issuanceWindowMs };
    const r1 = await ledger.insertOwnerKey(newKey(a.id), ceilings, T0);
    const r2 = await ledger.insertOwnerKey(newKey(a.id), ceilings, T0 + 1000);
    expect(r1.created && r2.created).toBe(true);
    expect(await ledger.insertOwnerKey(newKey(a.id), ceilings, T0 + 2000)).toEqual({
      created: false,
      refused: "key_limit_reached",
    });
    await ledger.revokeKey((r1 as { id: number }).id, T0 + 3000);
    expect((await ledger.insertOwnerKey(newKey(a.id), ceilings, T0 + 4000)).created).toBe(true);
    await ledger.revokeKey((r2 as { id: number }).id, T0 + 5000);
    // Three created in the hour: the fourth waits for the oldest to leave the window.
    expect(await ledger.insertOwnerKey(newKey(a.id), ceilings, T0 + 6000)).toEqual({
      created: false,
      refused: "key_issuance_rate_limited",
      oldestMs: T0,
    });
    expect(await ledger.ownerKeyCounts(a.id, T0 + 6000 - PORTAL.issuanceWindowMs)).toEqual({
      activeKeys: 1,
      issued: { count: 3, oldestMs: T0 },
    });
    const later = T0 + PORTAL.issuanceWindowMs;
    expect(await ledger.insertOwnerKey(newKey(a.id), ceilings, later)).toMatchObject({ created: true });
    expect((await ledger.listKeys(a.id)).every((k) => k.issuedBy === "owner")).toBe(true);
  });

  it("creates exactly keyLimit keys from 20 concurrent owner requests", async () => {
    const a = await ledger.createAccount({}, T0);
    const ceilings = { keyLimit: 5, perWindow: 100, windowMs: PORTAL.issuanceWindowMs };
    const results = await Promise.all(
      Array.from({ length: 20 }, () => ledger.insertOwnerKey(newKey(a.id), ceilings, T0)),
    );
    expect(results.filter((r) => r.created)).toHaveLength(5);
    expect((await ledger.ownerKeyCounts(a.id, 0)).activeKeys).toBe(5);
  });
});

describe("the developer portal", () => {
  it("a sign-in link works once, only while live; 20 concurrent uses sign in once", async () => {
    const link = { accountId: 7, owner: "owner@example.com" };
    await ledger.insertSignInLink("L1", link, T0, T0 + PORTAL.signInLinkTtlMs);
    const uses = await Promise.all(Array.from({ length: 20 }, () => ledger.useSignInLink("L1", T0 + 1)));
    expect(uses.filter(Boolean)).toEqual([link]);
    expect(await ledger.useSignInLink("L1", T0 + 2)).toBeUndefined();
    await ledger.insertSignInLink("L2", link, T0, T0 + 100);
    expect(await ledger.useSignInLink("L2", T0 + 100)).toBeUndefined();
    expect(await ledger.useSignInLink("nope", T0)).toBeUndefined();
  });

  it("sessions read while live and go when deleted", async () => {
    const session = {
      accountId: 3,
      owner: "o@example.com",
      csrfToken: "c".repeat(32),
      createdMs: T0,
      expiresMs: T0 + 50,
    };
    await ledger.insertSession("S1", session);
    expect(await ledger.readSession("S1", T0 + 49)).toEqual(session);
    expect(await ledger.readSession("S1", T0 + 50)).toBeUndefined();
    await ledger.deleteSession("S1");
    expect(await ledger.readSession("S1", T0)).toBeUndefined();
  });
});

describe("ticket handoffs", () => {
  const handoff = (id: string, accountId = 1) => ({
    id,
    accountId,
    keyId: 2,
    eventId: 1001,
    seller: "ticketmaster",
    sellerUrl: "https://www.ticketmaster.com/event/123",
    createdMs: T0,
    expiresMs: T0 + HANDOFF.lifetimeMs,
  });

  it("admits the limit's worth of attempts in a sliding minute; refused attempts do not count", async () => {
    const admitted = await Promise.all(Array.from({ length: 25 }, () => ledger.admitHandoffAttempt(1, T0)));
    expect(admitted.filter(Boolean)).toHaveLength(HANDOFF.creationsPerMinute);
    expect(await ledger.admitHandoffAttempt(1, T0 + MINUTE_MS - 1)).toBe(false);
    expect(await ledger.admitHandoffAttempt(2, T0)).toBe(true);
    // At exactly a minute the first attempts leave the window, and the refusals never counted.
    const next = await Promise.all(Array.from({ length: 12 }, () => ledger.admitHandoffAttempt(1, T0 + MINUTE_MS)));
    expect(next.filter(Boolean)).toHaveLength(HANDOFF.creationsPerMinute);
  });

  it("redeems once, with one click, of 50 concurrent Continues; then already redeemed, whatever the time", async () => {
    await ledger.insertHandoff(handoff("h1"));
    expect(await ledger.readHandoff("h1")).toEqual({ ...handoff("h1"), redeemedMs: null });
    const outcomes = await Promise.all(Array.from({ length: 50 }, () => ledger.redeemHandoff("h1", T0 + 10)));
    const redeemed = outcomes.filter((o) => o.outcome === "redeemed");
    expect(redeemed).toEqual([{ outcome: "redeemed", handoff: { ...handoff("h1"), redeemedMs: T0 + 10 } }]);
    expect(outcomes.filter((o) => o.outcome === "already_redeemed")).toHaveLength(49);
    expect(await ledger.countHandoffClicks("h1")).toBe(1);
    const late = await ledger.redeemHandoff("h1", T0 + HANDOFF.lifetimeMs * 10);
    expect(late.outcome).toBe("already_redeemed");
  });

  it("an expired handoff does not redeem; an unknown one is missing", async () => {
    await ledger.insertHandoff(handoff("h2"));
    const r = await ledger.redeemHandoff("h2", T0 + HANDOFF.lifetimeMs);
    expect(r).toEqual({ outcome: "expired", handoff: { ...handoff("h2"), redeemedMs: null } });
    expect(await ledger.countHandoffClicks("h2")).toBe(0);
    expect(await ledger.redeemHandoff("h3", T0)).toEqual({ outcome: "missing" });
    expect(await ledger.readHandoff("h3")).toBeUndefined();
  });
});

describe("settings, counters, test mode", () => {
  it("the first writer of a setting wins, also concurrently", async () => {
    let n = 0;
    const values = await Promise.all(Array.from({ length: 10 }, () => ledger.ensureSetting("secret", () => `v${++n}`)));
    expect(new Set(values).size).toBe(1);
    expect(await ledger.ensureSetting("secret", () => "other")).toBe(values[0]);
  });

  it("reads the trial and the rolling delivered rows from the counters' layout", async () => {
    expect(await ledger.readTrial(5)).toBeUndefined();
    expect(await ledger.rowsDelivered(5, MINUTE_MS, T0)).toBe(0);
    server.cli("HSET", REDIS_KEYS.trial(5), "startedMs", String(T0), "rowsUsed", "1000", "exhaustedMs", String(T0 + 9));
    expect(await ledger.readTrial(5)).toEqual({ accountId: 5, startedMs: T0, rowsUsed: 1000, exhaustedMs: T0 + 9 });
    // Deliveries of 10 at T0, 5 at T0+1000 and 7 at T0+2000: running totals 10, 15, 22.
    server.cli("ZADD", REDIS_KEYS.usage(5), String(T0), "10", String(T0 + 1000), "15", String(T0 + 2000), "22");
    server.cli("SET", REDIS_KEYS.usageTotal(5), "22");
    expect(await ledger.rowsDelivered(5, 10_000, T0 + 2000)).toBe(22);
    expect(await ledger.rowsDelivered(5, 2000, T0 + 2000)).toBe(12);
    expect(await ledger.rowsDelivered(5, 1000, T0 + 2000)).toBe(7);
    expect(await ledger.rowsDelivered(5, 1000, T0 + 3000)).toBe(0);
  });

  it("shares the clock and faults; reset empties all but settings and the clock", async () => {
    const t = ledger.test;
    expect(await t.readClock()).toBeNull();
    await t.writeClock(T0);
    expect(await t.readClock()).toBe(T0);
    const scope = { keyId: null, path: null, delayMs: null };
    await t.armFault({ code: "policy_unavailable", times: 2, ...scope });
    const internal = await t.armFault({ code: "internal_error", times: 1, ...scope });
    const request = { path: "/v1/events", keyId: 1, codes: ["policy_unavailable" as const] };
    const takes = await Promise.all(Array.from({ length: 5 }, () => t.takeFault(request)));
    expect(takes.filter((taken) => taken.fault !== null)).toHaveLength(2);
    expect(takes.map((taken) => taken.clockMs)).toEqual(Array(5).fill(T0));
    expect(await t.pendingFaults()).toEqual([internal]);

    await ledger.ensureSetting("reset-secret", () => "kept");
    const a = await ledger.createAccount({}, T0);
    await ledger.insertKey(newKey(a.id), T0);
    await ledger.reset();
    expect(await ledger.countAccounts()).toBe(0);
    expect(await ledger.readAccount(a.id)).toBeUndefined();
    expect(await t.pendingFaults()).toEqual([]);
    expect(await t.readClock()).toBe(T0);
    expect(await ledger.ensureSetting("reset-secret", () => "new")).toBe("kept");
    const left = server.cli("KEYS", "marquee:*").trim().split("\n");
    expect(left).toContain(REDIS_KEYS.setting("reset-secret"));
    expect(left.filter((k) => !k.startsWith(REDIS_KEYS.settingsPrefix))).toEqual([REDIS_KEYS.testClock]);
    await t.writeClock(null);
    expect(await t.readClock()).toBeNull();
  });
});

describe("a shared ledger", () => {
  it("two instances see each other's accounts and keys, and hear each other's changes within a second", async () => {
    const other = await openRedisLedger(server.url);
    try {
      let heard = 0;
      const stop = other.onAccessChange(() => heard++);
      const a = await ledger.createAccount({ email: "x@example.com" }, T0);
      expect(await other.readAccount(a.id)).toEqual(a);
      const k = newKey(a.id);
      const id = await ledger.insertKey(k, T0);
      expect((await other.findKeyByDigest(k.digest))?.id).toBe(id);

      for (const change of [
        () => ledger.updateAccount(a.id, { policy: "stale" }, T0 + 1),
        () => ledger.revokeKey(id, T0 + 2),
        () => ledger.insertKey(newKey(a.id), T0 + 3),
        () => ledger.reset(),
      ]) {
        const before = heard;
        await change();
        // Nothing but the notification calls the listener; a generous deadline keeps a busy machine from failing it.
        expect(await until(() => heard > before, 10_000)).toBe(true);
      }
      stop();
      const before = heard;
      await ledger.createAccount({}, T0);
      await new Promise((r) => setTimeout(r, 200));
      expect(heard).toBe(before);
    } finally {
      await other.close();
    }
  });

  it("a stopped server makes calls reject within the command timeout, and the same ledger recovers", async () => {
    const a = await ledger.createAccount({}, T0);
    server.pause();
    try {
      // Rejected by the command timeout, not left waiting: without it the call would never settle.
      await expect(ledger.readAccount(a.id)).rejects.toThrow();
      await expect(ledger.admitHandoffAttempt(a.id, T0)).rejects.toThrow();
    } finally {
      server.resume();
    }
    let back: unknown;
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline) {
      back = await ledger.readAccount(a.id).catch(() => undefined);
      if (back) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(back).toEqual(a);
  });

  it("an issued key and a redeemed handoff survive a restart; listeners hear the reconnect", async () => {
    const a = await ledger.createAccount({}, T0);
    const k = newKey(a.id);
    const id = await ledger.insertKey(k, T0);
    await ledger.insertHandoff({
      id: "kept",
      accountId: a.id,
      keyId: id,
      eventId: 1,
      seller: "dice",
      sellerUrl: "https://dice.fm/event/1",
      createdMs: T0,
      expiresMs: T0 + HANDOFF.lifetimeMs,
    });
    expect((await ledger.redeemHandoff("kept", T0 + 1)).outcome).toBe("redeemed");
    let heard = 0;
    const stop = ledger.onAccessChange(() => heard++);
    await server.restart();
    const deadline = Date.now() + 5000;
    let found = await ledger.findKeyByDigest(k.digest).catch(() => undefined);
    while (!found && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      found = await ledger.findKeyByDigest(k.digest).catch(() => undefined);
    }
    expect(found?.id).toBe(id);
    // The script cache went with the old process: EVALSHA falls back to EVAL.
    expect((await ledger.redeemHandoff("kept", T0 + 2)).outcome).toBe("already_redeemed");
    expect(await ledger.countHandoffClicks("kept")).toBe(1);
    expect(await until(() => heard > 0, 3000)).toBe(true);
    stop();
  });

  it("names the problem in one line when Redis cannot be reached", async () => {
    await expect(openRedisLedger("redis://127.0.0.1:1")).rejects.toThrow(/^cannot reach the Redis ledger/);
  });

  it("refuses a database the Redis server does not have, rather than writing to database 0", async () => {
    const probe = await connectRedis(server.url);
    try {
      const before = await probe.dbsize();
      await expect(openRedisLedger(`${server.url}/99`)).rejects.toThrow(
        new RegExp(
          `^the Redis ledger at redis://127\\.0\\.0\\.1:${server.port}/99 has no database 99: ERR DB index is out of range$`,
        ),
      );
      expect(await probe.dbsize()).toBe(before);
      // A database it has is used, and database 0 is left alone.
      const other = await openRedisLedger(`${server.url}/3`);
      try {
        await other.createAccount({ email: "db3@example.com", plan: "basic" }, T0);
        expect(await probe.dbsize()).toBe(before);
        await probe.select(3);
        expect(await probe.dbsize()).toBeGreaterThan(0);
        await probe.flushdb();
      } finally {
        await other.close();
      }
    } finally {
      probe.disconnect();
    }
  });

  it("asks for Redis 6.2 or later", () => {
    const info = (v: string) => `# Server\r\nredis_version:${v}\r\nredis_mode:standalone\r\n`;
    for (const ok of ["6.2.0", "7.0.15", "10.0.1"])
      expect(() => assertRedisVersion(info(ok), server.url)).not.toThrow();
    expect(() => assertRedisVersion(info("6.0.16"), "redis://:hunter2@db:6379")).toThrow(
      /^the Redis ledger at redis:\/\/db:6379 runs Redis 6\.0; Marquee needs Redis 6\.2 or later$/,
    );
    expect(() => assertRedisVersion("", server.url)).toThrow(/does not say its version/);
  });

  it("refuses a Redis that evicts keys once full", async () => {
    const memory = (max: number, policy: string) => `# Memory\r\nmaxmemory:${max}\r\nmaxmemory_policy:${policy}\r\n`;
    expect(() => assertNoEviction(memory(0, "allkeys-lru"), server.url)).not.toThrow();
    expect(() => assertNoEviction(memory(1 << 30, "noeviction"), server.url)).not.toThrow();
    expect(() => assertNoEviction(memory(1 << 30, "volatile-lru"), "redis://:hunter2@db:6379")).toThrow(
      /^the Redis ledger at redis:\/\/db:6379 evicts keys when full \(maxmemory-policy volatile-lru\); a ledger must keep every key: set maxmemory-policy noeviction, as deploy\/redis\.conf does$/,
    );
    // The same check on a live server set to evict.
    const probe = await connectRedis(server.url);
    try {
      await probe.config("SET", "maxmemory", "1gb");
      await probe.config("SET", "maxmemory-policy", "allkeys-lru");
      await expect(openRedisLedger(server.url)).rejects.toThrow(
        /evicts keys when full \(maxmemory-policy allkeys-lru\)/,
      );
    } finally {
      await probe.config("SET", "maxmemory-policy", "noeviction");
      await probe.config("SET", "maxmemory", "0");
      probe.disconnect();
    }
    const reopened = await openRedisLedger(server.url);
    await reopened.close();
  });
});
