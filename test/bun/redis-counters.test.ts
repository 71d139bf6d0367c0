// The request path's counters on Bun (vitest runs the full suite on Node: test/redis-counters.test.ts):
// ioredis and the counters' Lua scripts decide the same on Bun's runtime.
import { afterAll, beforeAll, expect, it } from "bun:test";

import { RATE } from "../../db/contract.ts";
import { connectRedis, type RedisClient } from "../../server/ledger/redis-connection.ts";
import { RedisCounters } from "../../server/ledger/redis-counters.ts";
import { REDIS_KEYS } from "../../server/ledger/redis-keys.ts";
import { type RedisServer, startRedisServer } from "../redis-server.ts";

const T0 = Date.UTC(2030, 0, 1);
let server: RedisServer;
let redis: RedisClient[] = [];

beforeAll(async () => {
  server = await startRedisServer();
  redis = [await connectRedis(server.url), await connectRedis(server.url)];
});
afterAll(async () => {
  for (const r of redis) r.disconnect();
  await server?.stop();
});

it("shares a bucket and the trial's last rows exactly between two connections on Bun", async () => {
  const counters = redis.map((r) => new RedisCounters(r));
  const spec = { bucket: "key:1", capacity: RATE.capacity, refillPerSecond: RATE.refillPerSecond };
  const takes = await Promise.all(Array.from({ length: 61 }, (_, i) => counters[i % 2].takeTokens(1, spec, 1, T0)));
  expect(takes.filter((v) => v.admitted)).toHaveLength(60);

  await redis[0].hset(REDIS_KEYS.trial(2), "startedMs", T0, "rowsUsed", 990);
  const rows = await Promise.all(
    Array.from({ length: 20 }, async (_, i) => {
      const hold = await counters[i % 2].reserve(2, { kind: "trial" }, 25, T0);
      if (hold.rows > 0) await counters[i % 2].settle(2, { kind: "trial" }, hold, hold.rows, T0);
      return hold.rows;
    }),
  );
  expect(rows.reduce((a, b) => a + b, 0)).toBe(10);
  expect(await redis[1].hgetall(REDIS_KEYS.trial(2))).toMatchObject({ rowsUsed: "1000", exhaustedMs: String(T0) });
});
