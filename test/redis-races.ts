/**
 * Races the request path's counters (server/ledger/redis-counters.ts) run the way several
 * serving processes would, for the suites on one Redis and on a Redis Cluster.
 */
import type { RedisClient } from "../server/ledger/redis-connection.ts";
import type { RedisCounters } from "../server/ledger/redis-counters.ts";
import { REDIS_KEYS } from "../server/ledger/redis-keys.ts";

/**
 * Sets `account`'s trial to 990 rows used, then races 50 pages of 25 rows over `counters` in
 * turn, each reserving and settling what it was given: the rows each page delivered.
 */
export async function raceTrialAt990(
  redis: RedisClient,
  counters: readonly RedisCounters[],
  account: number,
  nowMs: number,
): Promise<number[]> {
  await redis.hset(REDIS_KEYS.trial(account), "startedMs", nowMs, "rowsUsed", 990);
  return Promise.all(
    Array.from({ length: 50 }, async (_, i) => {
      const c = counters[i % counters.length];
      const hold = await c.reserve(account, { kind: "trial" }, 25, nowMs + i);
      if (hold.rows === 0) return 0;
      await c.settle(account, { kind: "trial" }, hold, 25, nowMs + i);
      return hold.rows;
    }),
  );
}
