/**
 * Test mode's clock and faults on a Redis ledger (docs/api.md, Test mode): shared by every server
 * on the ledger, so a clock set or a fault armed through one applies to all
 * (docs/redis-ledger.md).
 */
import { FAULT_CODES, type FaultCode } from "../../db/contract.ts";
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
    armFault: async (code, times) => {
      if (times > 0) await redis.hset(K.testFaults, code, String(times));
      else await redis.hdel(K.testFaults, code);
    },
    /** One script decrements and deletes at zero, so concurrent requests spend each use once. */
    takeFault: async (code) => (await run("takeFault", [K.testFaults], [code])) === 1,
    pendingFaults: async () => {
      const out: Partial<Record<FaultCode, number>> = {};
      for (const [code, n] of Object.entries(await redis.hgetall(K.testFaults))) {
        if (FAULT_CODES.includes(code as FaultCode) && Number(n) > 0) out[code as FaultCode] = Number(n);
      }
      return out;
    },
  };
}
