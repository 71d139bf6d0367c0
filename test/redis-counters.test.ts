/**
 * The request path's counters on a real redis-server (server/ledger/redis-counters.ts): the
 * SQLite meter's decisions (docs/api.md, Plans and access) made exactly across several
 * connections, as several serving processes make them.
 */

import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ACCESS, RATE, TRIAL } from "../db/contract.ts";
import { type BucketSpec, spendTokens } from "../db/rate-buckets.ts";
import { openRedisLedger, type RedisLedger } from "../server/ledger/redis.ts";
import { connectRedis, type RedisClient } from "../server/ledger/redis-connection.ts";
import { COUNTER_KEYS, RedisCounters } from "../server/ledger/redis-counters.ts";
import { REDIS_KEYS } from "../server/ledger/redis-keys.ts";
import { NOW_MS } from "./access-fixtures.ts";
import { raceTrialAt990 } from "./redis-races.ts";
import { type RedisServer, startRedisServer } from "./redis-server.ts";

const DAY = ACCESS.rowBudgetWindowMs;
const keyBucket = (keyId: number): BucketSpec => ({
  bucket: `key:${keyId}`,
  capacity: RATE.capacity,
  refillPerSecond: RATE.refillPerSecond,
});

describe("Redis counters", () => {
  let server: RedisServer;
  let redis: [RedisClient, RedisClient];
  let counters: [RedisCounters, RedisCounters];
  /** Reads the trial and the delivered rows as the portal does. */
  let ledger: RedisLedger;
  let nextAccount = 1;

  beforeAll(async () => {
    server = await startRedisServer();
    redis = [await connectRedis(server.url), await connectRedis(server.url)];
    counters = [new RedisCounters(redis[0]), new RedisCounters(redis[1])];
    ledger = await openRedisLedger(server.url);
  });
  afterAll(async () => {
    await ledger?.close();
    for (const r of redis ?? []) r.disconnect();
    await server?.stop();
  });
  let account: number;
  beforeEach(() => {
    account = nextAccount++;
  });

  it("admits exactly 60 of 61 takes across two connections in one clock second, and refills 1 a second", async () => {
    const spec = keyBucket(account);
    const verdicts = await Promise.all(
      Array.from({ length: 61 }, (_, i) => counters[i % 2].takeTokens(account, spec, 1, NOW_MS)),
    );
    expect(verdicts.filter((v) => v.admitted)).toHaveLength(60);
    const refused = verdicts.find((v) => !v.admitted)!;
    expect(refused).toMatchObject({ tokens: 0, retryAfterMs: 1000, fullAtMs: NOW_MS + 60_000 });
    // Within the same second nothing more fits; the bucket is full 60 s after the last take.
    const last = await counters[0].takeTokens(account, spec, 1, NOW_MS + 999);
    expect(last).toMatchObject({ admitted: false, fullAtMs: NOW_MS + 60_000 });
    // The very verdict of the SQLite meter's arithmetic (db/rate-buckets.ts).
    expect(last).toEqual(spendTokens({ tokens: 0, updatedMs: NOW_MS }, spec, 1, NOW_MS + 999).verdict);
    // One second later one unit is back, and only one.
    expect((await counters[1].takeTokens(account, spec, 1, NOW_MS + 1999)).admitted).toBe(true);
    expect((await counters[0].takeTokens(account, spec, 1, NOW_MS + 1999)).admitted).toBe(false);
    // The key lives in the account's hash slot.
    expect(server.cli("EXISTS", COUNTER_KEYS.bucket(account, spec.bucket)).trim()).toBe("1");
  });

  it("charges 5 units for a geo request, tells when it would fit, and keeps fractional refills exact", async () => {
    const spec = keyBucket(account);
    for (let i = 0; i < 11; i++)
      expect((await counters[i % 2].takeTokens(account, spec, 5, NOW_MS)).admitted).toBe(true);
    const v = await counters[0].takeTokens(account, spec, 5, NOW_MS);
    expect(v).toMatchObject({ admitted: true, tokens: 0, retryAfterMs: 0, fullAtMs: NOW_MS + 60_000 });
    const refused = await counters[1].takeTokens(account, spec, 5, NOW_MS + 500);
    expect(refused).toMatchObject({ admitted: false, retryAfterMs: 4500 });
    expect(refused.tokens).toBeCloseTo(0.5, 12);
    // A negotiated bucket: 7 a minute, burst 2 (refill 7/60 per second, not a whole number).
    const negotiated: BucketSpec = { bucket: `account:${account}`, capacity: 2, refillPerSecond: 7 / 60 };
    expect((await counters[0].takeTokens(account, negotiated, 1, NOW_MS)).admitted).toBe(true);
    expect((await counters[1].takeTokens(account, negotiated, 1, NOW_MS)).admitted).toBe(true);
    const wait = await counters[0].takeTokens(account, negotiated, 1, NOW_MS);
    expect(wait).toMatchObject({ admitted: false, retryAfterMs: Math.ceil((1 / (7 / 60)) * 1000) });
    expect((await counters[1].takeTokens(account, negotiated, 1, NOW_MS + wait.retryAfterMs)).admitted).toBe(true);
  });

  it("delivers exactly the 10 rows left when 50 trial requests race at 990 used", async () => {
    const results = await raceTrialAt990(redis[0], counters, account, NOW_MS);
    expect(results.reduce((a, b) => a + b, 0)).toBe(10);
    const trial = await ledger.readTrial(account);
    expect(trial).toMatchObject({ rowsUsed: 1000, startedMs: NOW_MS });
    expect(trial!.exhaustedMs).not.toBeNull();
    expect(await ledger.rowsDelivered(account, DAY, NOW_MS + 100)).toBe(10);
    // Stage 3 now sees the trial ended and takes nothing.
    const admission = await counters[0].admit(account, keyBucket(account), 1, { kind: "trial" }, true, NOW_MS + 100);
    expect(admission).toMatchObject({ gated: true, trial: { rowsUsed: 1000 } });
    expect(server.cli("EXISTS", COUNTER_KEYS.bucket(account, `key:${account}`)).trim()).toBe("0");
  });

  it("starts the trial at the first reservation, clamps to a page and to the unreserved remainder", async () => {
    expect(await ledger.readTrial(account)).toBeUndefined();
    // Unverified and not started: refused before the take.
    expect((await counters[0].admit(account, keyBucket(account), 1, { kind: "trial" }, false, NOW_MS)).gated).toBe(
      true,
    );
    const a = await counters[0].admit(account, keyBucket(account), 1, { kind: "trial" }, true, NOW_MS);
    expect(a).toMatchObject({ gated: false, trial: undefined, reserved: 0, verdict: { admitted: true } });
    const first = await counters[0].reserve(account, { kind: "trial" }, 100, NOW_MS);
    expect(first).toMatchObject({ rows: TRIAL.maxRowsPerPage, reserved: 0, trial: { startedMs: NOW_MS, rowsUsed: 0 } });
    const second = await counters[1].reserve(account, { kind: "trial" }, 10, NOW_MS + 5);
    expect(second).toMatchObject({ rows: 10, reserved: 25, trial: { startedMs: NOW_MS } });
    expect(
      (await counters[1].admit(account, keyBucket(account), 1, { kind: "trial" }, true, NOW_MS + 6)).reserved,
    ).toBe(35);
    // Settled to what was delivered, never more than held.
    expect(await counters[0].settle(account, { kind: "trial" }, first, 7, NOW_MS + 10)).toMatchObject({
      live: true,
      reserved: 10,
      trial: { rowsUsed: 7 },
    });
    expect(await counters[1].settle(account, { kind: "trial" }, second, 50, NOW_MS + 10)).toMatchObject({
      live: true,
      reserved: 0,
      trial: { rowsUsed: 17 },
    });
    // Settling twice counts nothing more.
    expect(await counters[1].settle(account, { kind: "trial" }, second, 10, NOW_MS + 11)).toMatchObject({
      live: false,
      trial: { rowsUsed: 17 },
    });
  });

  it("reserves with stage 3 when asked, as open() would, and only when stage 3 admits", async () => {
    const trial = { kind: "trial" } as const;
    const spec = keyBucket(account);
    // Asked to reserve: the trial starts and the page is held in the same step.
    const a = await counters[0].admit(account, spec, 1, trial, true, NOW_MS, 100);
    expect(a).toMatchObject({
      verdict: { admitted: true },
      trial: { startedMs: NOW_MS, rowsUsed: 0 },
      reserved: 0,
      reservation: { rows: TRIAL.maxRowsPerPage },
    });
    expect((await counters[1].admit(account, spec, 1, trial, true, NOW_MS, 5)).reservation).toMatchObject({
      rows: 5,
      reserved: 25,
    });
    expect(await counters[0].settle(account, { kind: "trial" }, a.reservation!, 25, NOW_MS)).toMatchObject({
      live: true,
      trial: { rowsUsed: 25 },
      reserved: 5,
    });
    // Not asked (the request failed validation): nothing held, nothing started.
    const other = nextAccount++;
    expect(await counters[0].admit(other, keyBucket(other), 1, trial, true, NOW_MS)).toMatchObject({
      reservation: null,
    });
    expect(await ledger.readTrial(other)).toBeUndefined();
    // Refused by the limiter: nothing held either.
    const empty = { ...keyBucket(other), capacity: 1 };
    expect((await counters[0].admit(other, empty, 1, trial, true, NOW_MS, 10)).reservation).not.toBeNull();
    const refused = await counters[0].admit(other, empty, 1, trial, true, NOW_MS, 10);
    expect(refused).toMatchObject({ verdict: { admitted: false }, reserved: 10, reservation: null });
    // A budget: clamped to the unreserved remainder.
    const budget = nextAccount++;
    const b = await counters[1].admit(budget, keyBucket(budget), 1, { kind: "budget", limit: 30 }, false, NOW_MS, 25);
    expect(b.reservation).toMatchObject({ rows: 25 });
    const c = await counters[0].admit(budget, keyBucket(budget), 1, { kind: "budget", limit: 30 }, false, NOW_MS, 25);
    expect(c).toMatchObject({ reserved: 25, reservation: { rows: 5 } });
    const d = await counters[0].admit(budget, keyBucket(budget), 1, { kind: "budget", limit: 30 }, false, NOW_MS, 25);
    expect(d).toMatchObject({ reserved: 30, used: 0, reservation: null });
  });

  it("counts a known page with stage 3 only when no reservation could clamp it", async () => {
    const trial = { kind: "trial" } as const;
    const spec = keyBucket(account);
    // A new trial: it starts, and the known 7 rows of a 10-row page are counted at once.
    const a = await counters[0].admit(account, spec, 1, trial, true, NOW_MS, 10, 7);
    expect(a).toMatchObject({ trial: { startedMs: NOW_MS, rowsUsed: 0 }, reserved: 0, reservation: null, counted: 7 });
    expect(await ledger.readTrial(account)).toMatchObject({ rowsUsed: 7, exhaustedMs: null });
    expect(await ledger.rowsDelivered(account, DAY, NOW_MS)).toBe(7);
    // More than a trial page asked for: reserved (and clamped) as before, whatever is known.
    expect(await counters[1].admit(account, spec, 1, trial, true, NOW_MS + 1, 100, 25)).toMatchObject({
      counted: null,
      reservation: { rows: TRIAL.maxRowsPerPage },
    });
    // The unreserved remainder (1000 - 7 - 25 - 960 = 8) below the size asked for: reserved and clamped.
    await redis[0].hincrby(REDIS_KEYS.trial(account), "rowsUsed", 960);
    expect(await counters[0].admit(account, spec, 1, trial, true, NOW_MS + 2, 10, 3)).toMatchObject({
      counted: null,
      reservation: { rows: 8 },
    });
    // Exactly the size asked for left: counted, and the count that spends the trial ends it.
    const other = nextAccount++;
    await redis[0].hset(REDIS_KEYS.trial(other), "startedMs", NOW_MS, "rowsUsed", TRIAL.rows - 5);
    const last = await counters[1].admit(other, keyBucket(other), 1, trial, true, NOW_MS + 3, 5, 5);
    expect(last).toMatchObject({ trial: { rowsUsed: TRIAL.rows - 5, exhaustedMs: null }, counted: 5 });
    expect(await ledger.readTrial(other)).toMatchObject({ rowsUsed: TRIAL.rows, exhaustedMs: NOW_MS + 3 });
    // Refused by the limiter: nothing counted.
    const empty = { ...keyBucket(other), capacity: 1 };
    const third = nextAccount++;
    await counters[0].admit(third, empty, 1, trial, true, NOW_MS, 10, 4);
    expect(await counters[0].admit(third, empty, 1, trial, true, NOW_MS, 10, 4)).toMatchObject({
      verdict: { admitted: false },
      counted: null,
    });
    expect(await ledger.readTrial(third)).toMatchObject({ rowsUsed: 4 });
    // A budget: counted while the remainder holds the page size, reserved once it does not.
    const budget = nextAccount++;
    const limit = { kind: "budget", limit: 30 } as const;
    expect(await counters[1].admit(budget, keyBucket(budget), 1, limit, false, NOW_MS, 20, 20)).toMatchObject({
      used: 0,
      counted: 20,
    });
    expect(await counters[0].admit(budget, keyBucket(budget), 1, limit, false, NOW_MS + 1, 20, 20)).toMatchObject({
      used: 20,
      counted: null,
      reservation: { rows: 10 },
    });
    expect(await ledger.rowsDelivered(budget, DAY, NOW_MS + 1)).toBe(20);
  });

  it("lets a reservation expire: its rows are free again and a late settle counts nothing", async () => {
    await redis[0].hset(REDIS_KEYS.trial(account), "startedMs", NOW_MS, "rowsUsed", 975);
    const held = await counters[0].reserve(account, { kind: "trial" }, 25, NOW_MS);
    expect(held.rows).toBe(25);
    expect((await counters[1].reserve(account, { kind: "trial" }, 25, NOW_MS + 1)).rows).toBe(0);
    // Until the reservation's last millisecond the rows stay held…
    const during = await counters[1].admit(account, keyBucket(account), 1, { kind: "trial" }, true, NOW_MS + 29_999);
    expect(during.reserved).toBe(25);
    // …then they are free.
    const after = NOW_MS + ACCESS.reservationTtlMs;
    expect((await counters[1].admit(account, keyBucket(account), 1, { kind: "trial" }, true, after)).reserved).toBe(0);
    const late = await counters[0].settle(account, { kind: "trial" }, held, 25, after);
    expect(late).toMatchObject({ live: false, trial: { rowsUsed: 975 } });
    expect((await counters[1].reserve(account, { kind: "trial" }, 25, after)).rows).toBe(25);
  });

  it("keeps a row budget exact at its limit over a rolling 24 hours, with Retry-After when rows age out", async () => {
    const limit = 100;
    const budget = { kind: "budget", limit } as const;
    // 60 rows at T, 40 at T + 1 h, across both connections.
    const a = await counters[0].reserve(account, { kind: "budget", limit: limit }, 60, NOW_MS);
    const b = await counters[1].reserve(account, { kind: "budget", limit: limit }, 100, NOW_MS);
    expect([a.rows, b.rows, b.reserved]).toEqual([60, 40, 60]);
    expect(await counters[0].settle(account, { kind: "budget", limit }, a, 60, NOW_MS)).toMatchObject({
      live: true,
      used: 60,
      reserved: 40,
    });
    // b settles an hour later: its hold expired, but delivered rows always count.
    const hour = 3_600_000;
    expect(await counters[1].settle(account, { kind: "budget", limit }, b, 40, NOW_MS + hour)).toMatchObject({
      live: false,
      used: 100,
      reserved: 0,
    });
    const full = await counters[0].admit(account, keyBucket(account), 1, budget, false, NOW_MS + 2 * hour);
    expect(full).toMatchObject({ used: 100, reserved: 0, msUntilBelow: DAY - 2 * hour });
    expect((await counters[1].reserve(account, { kind: "budget", limit: limit }, 25, NOW_MS + 2 * hour)).rows).toBe(0);
    // The first delivery ages out exactly 24 h after it: the window is (now - 24 h, now].
    expect(await ledger.rowsDelivered(account, DAY, NOW_MS + DAY - 1)).toBe(100);
    const aged = await counters[1].admit(account, keyBucket(account), 1, budget, false, NOW_MS + DAY);
    expect(aged).toMatchObject({ used: 40, msUntilBelow: 0 });
    expect((await counters[0].reserve(account, { kind: "budget", limit: limit }, 100, NOW_MS + DAY)).rows).toBe(60);
    expect(await ledger.rowsDelivered(account, DAY, NOW_MS + DAY + hour)).toBe(0);
  });

  it("keeps the trial across a Redis restart and sends its scripts again", async () => {
    const hold = await counters[0].reserve(account, { kind: "trial" }, 25, NOW_MS);
    await counters[0].settle(account, { kind: "trial" }, hold, 20, NOW_MS);
    await server.restart();
    const deadline = Date.now() + 5000;
    while (!redis.every((r) => r.status === "ready")) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 20));
    }
    for (;;) {
      try {
        expect(await counters[1].reserve(account, { kind: "trial" }, 25, NOW_MS + 1)).toMatchObject({
          rows: 25,
          trial: { startedMs: NOW_MS, rowsUsed: 20 },
        });
        break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  });

  it("records every account's deliveries, so a budget set later counts the last 24 hours", async () => {
    await counters[0].recordDelivery(account, 30, NOW_MS);
    await counters[1].recordDelivery(account, 20, NOW_MS);
    await counters[0].recordDelivery(account, 5, NOW_MS + 10);
    await counters[1].recordDelivery(account, 0, NOW_MS + 20);
    expect(await ledger.rowsDelivered(account, DAY, NOW_MS + 20)).toBe(55);
    // One entry per millisecond: the two at NOW_MS are one.
    expect(await redis[0].zcard(REDIS_KEYS.usage(account))).toBe(2);
    const a = await counters[0].admit(
      account,
      keyBucket(account),
      1,
      { kind: "budget", limit: 50 },
      false,
      NOW_MS + 30,
    );
    // 55 >= 50: the first delivery must age out (it alone holds 50 of the 55).
    expect(a).toMatchObject({ used: 55, msUntilBelow: DAY - 30 });
    // Pruned as deliveries age out: only the window's baseline remains.
    await counters[0].recordDelivery(account, 1, NOW_MS + DAY + 100);
    expect(await redis[0].zcard(REDIS_KEYS.usage(account))).toBe(2);
    expect(await ledger.rowsDelivered(account, DAY, NOW_MS + DAY + 100)).toBe(1);
  });

  it("takes the bucket units of one turn as one script per account, in the order they were asked for", async () => {
    const other = nextAccount++;
    const scripts = () => Number(/cmdstat_evalsha:calls=(\d+)/.exec(server.cli("INFO", "commandstats"))?.[1] ?? 0);
    await counters[0].takeTokens(other, keyBucket(other), 1, NOW_MS - 1); // the script is loaded
    const before = scripts();
    const spec = keyBucket(account);
    const second = { ...keyBucket(account + 1_000), capacity: 2 };
    const taken = [
      ...Array.from({ length: 61 }, (_, i) => counters[0].takeTokens(account, spec, 1, NOW_MS + (i === 60 ? 1 : 0))),
      // Another bucket of the same account, and another account, in the same turn.
      counters[0].takeTokens(account, second, RATE.geoCost, NOW_MS),
      counters[0].takeTokens(account, second, 1, NOW_MS),
      counters[0].admit(other, keyBucket(other), 1, null, true, NOW_MS),
    ];
    // Nothing is taken before the turn ends.
    expect(server.cli("EXISTS", COUNTER_KEYS.bucket(account, spec.bucket)).trim()).toBe("0");
    const [verdicts, [geo, small, otherAdmission]] = [
      (await Promise.all(taken.slice(0, 61))) as Awaited<ReturnType<RedisCounters["takeTokens"]>>[],
      await Promise.all(taken.slice(61)),
    ];
    expect(scripts() - before).toBe(2);
    // In order: the first 60 emptied the bucket one unit at a time, the 61st found it empty,
    // each verdict the one the SQLite meter's arithmetic gives (db/rate-buckets.ts).
    let bucket = { tokens: spec.capacity, updatedMs: NOW_MS };
    for (const [i, v] of verdicts.entries()) {
      const spent = spendTokens(bucket, spec, 1, NOW_MS + (i === 60 ? 1 : 0));
      expect(v).toEqual(spent.verdict);
      bucket = spent.next ?? bucket;
    }
    expect(verdicts.filter((v) => v.admitted)).toHaveLength(60);
    // The bucket was stored as its last admitted take left it, with an expiry: the next turn's
    // take, two seconds on, goes on from there.
    expect(Number(server.cli("PTTL", COUNTER_KEYS.bucket(account, spec.bucket)))).toBeGreaterThan(0);
    expect(await counters[1].takeTokens(account, spec, 1, NOW_MS + 2_000)).toEqual(
      spendTokens(bucket, spec, 1, NOW_MS + 2_000).verdict,
    );
    // The other bucket's takes in order too: a geo take (5 units, at most the capacity), then one unit.
    const geoSpent = spendTokens(undefined, second, RATE.geoCost, NOW_MS);
    expect([geo, small]).toEqual([
      geoSpent.verdict,
      spendTokens(geoSpent.next ?? undefined, second, 1, NOW_MS).verdict,
    ]);
    expect(otherAdmission).toMatchObject({ verdict: { admitted: true }, reservation: null, trial: undefined });
  });

  it("rejects every take of a batch Redis did not answer, and takes the next batch", async () => {
    server.pause();
    try {
      const failed = [
        counters[1].takeTokens(account, keyBucket(account), 1, NOW_MS),
        counters[1].takeTokens(account, keyBucket(account), 1, NOW_MS),
      ];
      for (const f of failed) await expect(f).rejects.toThrow();
    } finally {
      server.resume();
    }
    // The connection comes back by itself, and the next batch is taken.
    for (let deadline = Date.now() + 5_000; ; ) {
      try {
        await counters[1].takeTokens(account, keyBucket(account), 1, NOW_MS + 1);
        break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  });

  it("writes the deliveries of one turn as one script per account, each millisecond one entry", async () => {
    const other = nextAccount++;
    const scripts = () => Number(/cmdstat_evalsha:calls=(\d+)/.exec(server.cli("INFO", "commandstats"))?.[1] ?? 0);
    await counters[0].recordDelivery(other, 1, NOW_MS - 1); // the script is loaded: one EVALSHA a batch
    const before = scripts();
    const written = [
      counters[0].recordDelivery(account, 25, NOW_MS),
      counters[0].recordDelivery(account, 25, NOW_MS),
      counters[0].recordDelivery(other, 7, NOW_MS),
      counters[0].recordDelivery(account, 10, NOW_MS + 1),
      counters[0].recordDelivery(account, 0, NOW_MS + 2),
    ];
    // Nothing is written before the turn ends.
    expect(server.cli("EXISTS", REDIS_KEYS.usageTotal(account)).trim()).toBe("0");
    await Promise.all(written);
    expect(scripts() - before).toBe(2);
    // The entries one record at a time would leave: running totals 50 at NOW_MS, 60 a millisecond later.
    expect(await redis[0].zrange(REDIS_KEYS.usage(account), "0", "-1", "WITHSCORES")).toEqual([
      "50",
      String(NOW_MS),
      "60",
      String(NOW_MS + 1),
    ]);
    expect(await ledger.rowsDelivered(account, DAY, NOW_MS + 1)).toBe(60);
    expect(await ledger.rowsDelivered(account, DAY, NOW_MS + DAY)).toBe(10);
    expect(await ledger.rowsDelivered(other, DAY, NOW_MS)).toBe(8);
  });

  it("rejects every delivery of a batch Redis did not answer, and writes the next batch", async () => {
    server.pause();
    try {
      const failed = [
        counters[0].recordDelivery(account, 5, NOW_MS),
        counters[0].recordDelivery(account, 6, NOW_MS + 1),
      ];
      for (const f of failed) await expect(f).rejects.toThrow();
    } finally {
      server.resume();
    }
    for (let deadline = Date.now() + 5_000; ; ) {
      try {
        await counters[0].recordDelivery(account, 4, NOW_MS + 2);
        break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    // A batch that timed out may still have reached Redis before it stopped answering: the
    // recovery's batch is written either way.
    expect([4, 15]).toContain(await ledger.rowsDelivered(account, DAY, NOW_MS + 2));
  });
});
