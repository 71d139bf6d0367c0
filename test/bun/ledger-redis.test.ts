// The Redis ledger on Bun (vitest runs the full suite on Node: test/ledger-redis.test.ts):
// ioredis, its scripts and the subscriber connection work the same on Bun's runtime.
import { afterAll, beforeAll, expect, it } from "bun:test";
import { openRedisLedger, type RedisLedger } from "../../server/ledger/redis.ts";
import { type RedisServer, startRedisServer } from "../redis-server.ts";

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

it("opens on Bun and runs accounts, keys, handoffs and access changes", async () => {
  const other = await openRedisLedger(server.url);
  try {
    let heard = 0;
    other.onAccessChange(() => heard++);
    const a = await ledger.createAccount({ email: "bun@example.com", plan: "basic" }, T0);
    expect(await other.readAccount(a.id)).toEqual(a);
    const id = await ledger.insertKey(
      { accountId: a.id, kind: "live", digest: "b".repeat(64), prefix: "mq_live_b" },
      T0,
    );
    expect((await other.findKeyByDigest("b".repeat(64)))?.id).toBe(id);
    await ledger.insertHandoff({
      id: "bun",
      accountId: a.id,
      keyId: id,
      eventId: 1,
      seller: "dice",
      sellerUrl: "https://dice.fm/event/1",
      createdMs: T0,
      expiresMs: T0 + 60_000,
    });
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => other.redeemHandoff("bun", T0 + 1)));
    expect(outcomes.filter((o) => o.outcome === "redeemed")).toHaveLength(1);
    const deadline = Date.now() + 1000;
    while (heard === 0 && Date.now() < deadline) await Bun.sleep(10);
    expect(heard).toBeGreaterThan(0);
  } finally {
    await other.close();
  }
});
