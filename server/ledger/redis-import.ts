/**
 * A SQLite ledger's contents written into an empty Redis ledger (`marquee ledger copy`,
 * docs/operations.md, Moving the ledger to Redis), in the layout the Redis ledger reads
 * (server/ledger/redis-keys.ts), so every key, account, trial, row count and handoff carries on.
 * Ids keep their values and the id counters continue after the highest, so a key id or an
 * account id named anywhere (a log line, a support ticket) still names the same thing.
 */
import { Cluster } from "ioredis";
import type { LedgerSnapshot } from "../../db/ledger-export.ts";
import { assertNoEviction, assertPrimary, assertRedisSchema, assertRedisVersion, inChunks, TTL_MS } from "./redis.ts";
import { connectRedis, displayRedisUrl, type RedisClient } from "./redis-connection.ts";
import { REDIS_KEYS as K } from "./redis-keys.ts";
import { ACCOUNT_FIELDS, encodeRecord, HANDOFF_FIELDS, STORED_KEY_FIELDS, TRIAL_FIELDS } from "./redis-records.ts";

export interface ImportCounts {
  accounts: number;
  keys: number;
  trials: number;
  usageEntries: number;
  handoffs: number;
  clicks: number;
  settings: number;
}

/** Refused: the Redis ledger already holds something, which a copy would mix with. */
export class LedgerNotEmptyError extends Error {}

export async function importIntoRedis(url: string, snapshot: LedgerSnapshot): Promise<ImportCounts> {
  const redis = await connectRedis(url);
  try {
    const info = await redis.info();
    assertRedisVersion(info, url);
    assertNoEviction(info, url);
    if (!(redis instanceof Cluster)) assertPrimary(info, url);
    const found = await countLedgerKeys(redis);
    if (found > 0)
      throw new LedgerNotEmptyError(
        `the Redis ledger at ${displayRedisUrl(url)} is not empty (${found} keys under marquee:*); ` +
          "copy into an empty one: another database (redis://host:port/N) or a new Redis",
      );
    await assertRedisSchema(redis, url);
    await writeSnapshot(redis, snapshot);
    // Servers already on this ledger drop what they cached about accounts and keys.
    await redis.publish(K.accessChanged, "copy");
    return {
      accounts: snapshot.accounts.length,
      keys: snapshot.keys.length,
      trials: snapshot.trials.length,
      usageEntries: snapshot.usage.length,
      handoffs: snapshot.handoffs.length,
      clicks: snapshot.clicks.length,
      settings: snapshot.settings.length,
    };
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}

/** Keys of the ledger's layout, the layout version aside (a ledger opened once and never used is empty). */
async function countLedgerKeys(redis: RedisClient): Promise<number> {
  const nodes = redis instanceof Cluster ? redis.nodes("master") : [redis];
  let found = 0;
  for (const node of nodes) {
    let cursor = "0";
    do {
      const [next, keys] = await node.scan(cursor, "MATCH", K.all, "COUNT", 1000);
      cursor = next;
      found += keys.filter((k) => k !== K.schemaVersion).length;
    } while (cursor !== "0");
  }
  return found;
}

/**
 * One command per record, sent pipelined: the target is empty and no server uses it yet, so
 * nothing needs the atomic scripts of the request path. Each record's keys share its account's
 * (or handoff's) hash slot, as the ledger's own writes do.
 */
async function writeSnapshot(redis: RedisClient, s: LedgerSnapshot): Promise<void> {
  await inChunks(s.settings, ({ key, value }) => redis.set(K.setting(key), value));
  await inChunks(s.accounts, (a) => redis.hset(K.account(a.id), encodeRecord(ACCOUNT_FIELDS, a).set));
  await inChunks(s.keys, async (k) => {
    const a = k.accountId;
    await Promise.all([
      redis.hset(K.key(a, k.id), encodeRecord(STORED_KEY_FIELDS, k).set),
      redis.zadd(K.accountKeys(a), k.id, String(k.id)),
      k.revokedMs === null ? redis.sadd(K.activeKeys(a), String(k.id)) : null,
      k.issuedBy === "owner" ? redis.zadd(K.ownerIssued(a), k.createdMs, String(k.id)) : null,
      redis.set(K.keyDigest(k.digest), `${a}:${k.id}`),
      redis.set(K.keyAccount(k.id), String(a)),
    ]);
  });
  await inChunks(s.trials, (t) => redis.hset(K.trial(t.accountId), encodeRecord(TRIAL_FIELDS, t).set));
  const totals = new Map<number, number>();
  await inChunks(s.usage, (u) => {
    totals.set(u.accountId, Math.max(totals.get(u.accountId) ?? 0, u.totalRows));
    return redis.zadd(K.usage(u.accountId), u.atMs, String(u.totalRows));
  });
  await inChunks([...totals], ([accountId, total]) => redis.set(K.usageTotal(accountId), String(total)));
  await inChunks(s.handoffs, async (h) => {
    await redis.hset(K.handoff(h.id), encodeRecord(HANDOFF_FIELDS, h).set);
    await redis.pexpire(K.handoff(h.id), TTL_MS.handoff);
  });
  await inChunks(s.clicks, async (c) => {
    // As the Continue script records a click: every value a string.
    const click = Object.fromEntries(Object.entries(c).map(([name, value]) => [name, String(value)]));
    await redis.rpush(K.handoffClicks(c.handoffId), JSON.stringify(click));
    await redis.pexpire(K.handoffClicks(c.handoffId), TTL_MS.handoff);
  });
  // Ids continue after the copied ones.
  const maxId = (ids: number[]) => String(ids.reduce((m, id) => Math.max(m, id), 0));
  await redis.set(K.accountIds, maxId(s.accounts.map((a) => a.id)));
  await redis.set(K.keyIds, maxId(s.keys.map((k) => k.id)));
}
