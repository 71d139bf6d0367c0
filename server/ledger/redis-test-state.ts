/**
 * Test mode's clock and faults on a Redis ledger (docs/api.md, Test mode): shared by every server
 * on the ledger, so a clock set or a fault armed through one applies to all
 * (docs/redis-ledger.md). Faults are a list of JSON records in arming order; one script reads
 * the clock and finds and spends the first fault that matches a request, so a request pays one
 * round trip for both and concurrent requests spend each use once.
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
      const [clock, raw] = (await run(
        "takeFault",
        [K.testClock, K.testFaults],
        [target.path, target.keyId ?? "", target.codes.join(",")],
      )) as [string | null, string | null];
      return {
        fault: typeof raw === "string" ? (JSON.parse(raw) as Fault) : null,
        clockMs: typeof clock === "string" ? Number(clock) : null,
      };
    },
    pendingFaults: async () => (await redis.lrange(K.testFaults, 0, -1)).map((raw) => JSON.parse(raw) as Fault),
    clearFaults: async () => {
      const [[, n]] = (await redis.multi().llen(K.testFaults).del(K.testFaults, K.testFaultIds).exec()) as [
        [unknown, number],
      ];
      return n;
    },
  };
}
