/**
 * Test mode's clock and faults on a Redis ledger (docs/api.md, Test mode): shared by every server
 * on the ledger, so a clock set or a fault armed through one applies to all
 * (docs/redis-ledger.md). Faults are a list of JSON records in arming order; one script finds
 * and spends the first that matches a request, so concurrent requests spend each use once.
 */
import type { Fault } from "../faults.ts";
import type { TestState } from "./ledger.ts";
import type { RedisClient } from "./redis-connection.ts";
import { REDIS_KEYS as K } from "./redis-keys.ts";
import type { RunScript } from "./redis-scripts.ts";

export function redisTestState(redis: RedisClient, run: RunScript): TestState {
  return {
    readClock: async () => {
      const v = await redis.get(K.testClock);
      return v === null ? null : Number(v);
    },
    writeClock: async (ms) => {
      if (ms === null) await redis.del(K.testClock);
      else await redis.set(K.testClock, String(Math.trunc(ms)));
    },
    armFault: async (spec) => {
      const fault: Fault = { id: await redis.incr(K.testFaultIds), ...spec };
      await redis.rpush(K.testFaults, JSON.stringify(fault));
      return fault;
    },
    takeFault: async (target) => {
      const raw = await run("takeFault", [K.testFaults], [target.path, target.keyId ?? "", target.codes.join(",")]);
      return typeof raw === "string" ? (JSON.parse(raw) as Fault) : null;
    },
    pendingFaults: async () => (await redis.lrange(K.testFaults, 0, -1)).map((raw) => JSON.parse(raw) as Fault),
    clearFaults: async () => {
      // Two keys in different cluster slots: one command each.
      const n = await redis.llen(K.testFaults);
      await redis.del(K.testFaults);
      await redis.del(K.testFaultIds);
      return n;
    },
  };
}
