/**
 * The ledger in Redis (docs/redis-ledger.md), shared by any number of `marquee serve`
 * processes and the CLI (`--ledger redis://…`): every operation of the seam
 * (server/ledger/ledger.ts) over one command connection, with the steps that must be exact
 * under concurrency as Lua scripts (server/ledger/redis-scripts.ts), and a second connection
 * subscribed to the access channel.
 *
 * Key layout (server/ledger/redis-keys.ts builds every name):
 *
 *   marquee:ids:account, marquee:ids:key           INCR counters of ids
 *   marquee:{a<id>}:account                        hash: the account
 *   marquee:{a<id>}:keys / :keys:active            zset of key ids (by id) / set of unrevoked ids
 *   marquee:{a<id>}:key:<keyId>                    hash: one key (digest and display prefix only)
 *   marquee:{a<id>}:owner-issued                   zset: owner-created key ids by creation ms
 *   marquee:{a<id>}:handoff-attempts               zset: counted attempts by ms (60 s window)
 *   marquee:{a<id>}:trial                          hash: startedMs, rowsUsed, exhaustedMs
 *   marquee:{a<id>}:usage / :usage:total           zset: running total by delivery ms / string
 *   marquee:key-digest:<digest>                    "<accountId>:<keyId>"
 *   marquee:key-account:<keyId>                    accountId
 *   marquee:{h<id>}:handoff / :clicks              hash: the handoff / list: its clicks
 *   marquee:sign-in-link:<digest>                  hash: a sign-in link (by the token's digest)
 *   marquee:session:<digest>                       hash: a portal session (by the id's digest)
 *   marquee:settings:<name>                        string: a setting (kept by reset)
 *   marquee:{test}:clock, …:faults, …:fault-ids    test mode's shared clock and faults
 *   marquee:access-changed                         pub/sub channel
 *
 * Instants are the callers' `nowMs` (the test clock), never Redis's clock; TTLs only clean up,
 * long after a record's logical expiry.
 *
 * Failures: the command connection answers within `REDIS_LEDGER.commandTimeoutMs` or rejects
 * (server/ledger/redis-connection.ts); callers turn the rejection into their stage's 503.
 */
import { Cluster } from "ioredis";
import {
  ACCOUNT_DEFAULTS,
  type Account,
  type AccountFields,
  type AccountFilter,
  type KeyListing,
  type KeyRow,
} from "../../db/accounts.ts";
import { HANDOFF, MINUTE_MS } from "../../db/contract.ts";
import type { Handoff, Redemption } from "../../db/handoffs.ts";
import { NewerSchemaError } from "../../db/migrate.ts";
import type { Session, SignInLink } from "../../db/portal.ts";
import { type BucketSpec, type BucketVerdict, spendTokens } from "../../db/rate-buckets.ts";
import type { Trial } from "../../db/trials.ts";
import type { Ledger, NewKey, OwnerKeyCeilings, OwnerKeyCounts, OwnerKeyResult, TestState } from "./ledger.ts";
import { connectRedis, displayRedisUrl, type RedisClient } from "./redis-connection.ts";
import { COUNTER_KEYS } from "./redis-counters.ts";
import { REDIS_KEYS as K } from "./redis-keys.ts";
import {
  ACCOUNT_FIELD_NAMES,
  ACCOUNT_FIELDS,
  decodeRecord,
  encodeRecord,
  flatten,
  HANDOFF_FIELDS,
  KEY_FIELDS,
  pairs,
  SESSION_FIELDS,
  STORED_KEY_FIELDS,
  TRIAL_FIELDS,
} from "./redis-records.ts";
import { defineScripts, type RunScript } from "./redis-scripts.ts";
import { redisTestState } from "./redis-test-state.ts";

/**
 * The layout of the keys below (docs/redis-ledger.md, "Key layout"). A change a running older
 * Marquee would misread raises it; a ledger with a higher version is refused.
 */
export const REDIS_SCHEMA_VERSION = 1;

/** Redis before 6.2 lacks commands and script behaviour the ledger relies on. */
const MIN_VERSION = [6, 2] as const;

/** Clean-up TTLs, far past each record's logical end (instants follow the test clock). */
export const TTL_MS = {
  /** Attempts count for a minute. */
  handoffAttempts: 60 * MINUTE_MS,
  /** A handoff lives 15 minutes; a redeemed one answers "already redeemed" for 30 days. */
  handoff: 30 * 24 * 60 * MINUTE_MS,
  /** Added to a link's or session's own lifetime. */
  afterExpiry: 24 * 60 * MINUTE_MS,
} as const;

const str = (n: number) => String(Math.trunc(n));

export class RedisLedger implements Ledger {
  readonly kind = "redis" as const;
  readonly test: TestState;
  readonly #listeners = new Set<() => void>();
  readonly #run: RunScript;

  constructor(
    private readonly redis: RedisClient,
    private readonly subscriber: RedisClient,
  ) {
    this.#run = defineScripts(redis);
    subscriber.on("message", (channel: string) => {
      if (channel === K.accessChanged) this.#notify();
    });
    // Changes published while the subscriber was away are lost: after it is back, caches start again.
    let disconnected = false;
    subscriber.on("close", () => {
      disconnected = true;
    });
    subscriber.on("ready", () => {
      if (disconnected) this.#notify();
      disconnected = false;
    });
    this.test = redisTestState(redis, this.#run);
  }

  #notify(): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener();
      } catch (err) {
        console.error(`ledger: access-change listener failed: ${(err as Error).message}`);
      }
    }
  }

  async ensureSetting(name: string, make: () => string): Promise<string> {
    const existing = await this.redis.get(K.setting(name));
    if (existing !== null) return existing;
    // First writer wins: SET NX, then read whichever value won.
    await this.redis.set(K.setting(name), make(), "NX");
    return (await this.redis.get(K.setting(name)))!;
  }

  // ---- accounts ------------------------------------------------------------------------------

  async createAccount(fields: Partial<AccountFields>, nowMs: number): Promise<Account> {
    const id = await this.redis.incr(K.accountIds);
    const account: Account = { ...ACCOUNT_DEFAULTS, ...accountFields(fields), id, createdMs: nowMs, updatedMs: nowMs };
    const { set } = encodeRecord(ACCOUNT_FIELDS, account);
    await this.#run("createAccount", [K.account(id)], [K.accessChanged, ...flatten(set)]);
    return account;
  }

  async readAccount(id: number): Promise<Account | undefined> {
    return decodeRecord(ACCOUNT_FIELDS, await this.redis.hgetall(K.account(id)));
  }

  async updateAccount(id: number, fields: Partial<AccountFields>, nowMs: number): Promise<Account | undefined> {
    const { set, cleared } = encodeRecord(ACCOUNT_FIELDS, accountFields(fields));
    const hadSubscriptionGiven = fields.hadSubscription !== undefined && fields.hadSubscription !== null;
    const reply = (await this.#run(
      "updateAccount",
      [K.account(id)],
      [str(nowMs), JSON.stringify(set), JSON.stringify(cleared), K.accessChanged, hadSubscriptionGiven ? "1" : "0"],
    )) as string[] | null;
    return reply ? decodeRecord(ACCOUNT_FIELDS, pairs(reply)) : undefined;
  }

  /** Accounts are removed only by reset, which also removes the id counter. */
  async countAccounts(): Promise<number> {
    return Number((await this.redis.get(K.accountIds)) ?? 0);
  }

  async listAccounts(filter: AccountFilter = {}): Promise<Account[]> {
    const ids = range(Number((await this.redis.get(K.accountIds)) ?? 0));
    const hashes = await inChunks(ids, (id) => this.redis.hgetall(K.account(id)));
    const email = filter.email?.toLowerCase();
    return hashes
      .flatMap((h) => decodeRecord(ACCOUNT_FIELDS, h) ?? [])
      .filter(
        (a) => (email === undefined || a.email.toLowerCase() === email) && (!filter.plan || a.plan === filter.plan),
      );
  }

  // ---- keys ----------------------------------------------------------------------------------

  async insertKey(key: NewKey, nowMs: number): Promise<number> {
    const result = await this.#insertKey(key, null, nowMs);
    return (result as { id: number }).id;
  }

  async insertOwnerKey(key: NewKey, ceilings: OwnerKeyCeilings, nowMs: number): Promise<OwnerKeyResult> {
    return this.#insertKey({ ...key, origin: { ...key.origin, issuedBy: "owner" } }, ceilings, nowMs);
  }

  /**
   * One script decides the ceilings and writes the key in the account's slot; the digest and
   * key-id indexes live outside that slot, so they are written right after it. A lookup of the
   * digest in between finds nothing and answers as for an unknown key, which is harmless: the
   * key is shown to its owner only after this returns, so nobody can present it sooner. Should
   * the process die in between, the key was never shown and can never be presented; it stays
   * listed (and counts as active) until revoked.
   */
  async #insertKey(key: NewKey, ceilings: OwnerKeyCeilings | null, nowMs: number): Promise<OwnerKeyResult> {
    const id = await this.redis.incr(K.keyIds);
    const issuedBy = key.origin?.issuedBy ?? "operator";
    const row: KeyListing & { digest: string } = {
      id,
      accountId: key.accountId,
      kind: key.kind,
      prefix: key.prefix,
      createdMs: nowMs,
      revokedMs: null,
      label: key.origin?.label ?? null,
      issuedBy,
      digest: key.digest,
    };
    const { set } = encodeRecord(STORED_KEY_FIELDS, row);
    const a = key.accountId;
    const reply = (await this.#run(
      "insertKey",
      [K.account(a), K.key(a, id), K.accountKeys(a), K.activeKeys(a), K.ownerIssued(a)],
      [
        id,
        str(nowMs),
        issuedBy,
        ceilings ? ceilings.keyLimit : "",
        ceilings ? ceilings.perWindow : "",
        ceilings ? str(nowMs - ceilings.windowMs) : "",
        K.accessChanged,
        ...flatten(set),
      ],
    )) as string[];
    if (reply[0] === "key_limit_reached") return { created: false, refused: "key_limit_reached" };
    if (reply[0] === "key_issuance_rate_limited")
      return { created: false, refused: "key_issuance_rate_limited", oldestMs: Number(reply[1]) };
    await Promise.all([
      this.redis.set(K.keyDigest(key.digest), `${a}:${id}`),
      this.redis.set(K.keyAccount(id), String(a)),
    ]);
    return { created: true, id };
  }

  async revokeKey(keyId: number, nowMs: number): Promise<boolean> {
    const accountId = await this.redis.get(K.keyAccount(keyId));
    if (accountId === null) return false;
    const a = Number(accountId);
    const reply = await this.#run(
      "revokeKey",
      [K.key(a, keyId), K.activeKeys(a)],
      [str(nowMs), keyId, K.accessChanged],
    );
    return reply === 1;
  }

  async listKeys(accountId: number): Promise<KeyListing[]> {
    const ids = await this.redis.zrange(K.accountKeys(accountId), "0", "-1");
    const hashes = await Promise.all(ids.map((id) => this.redis.hgetall(K.key(accountId, Number(id)))));
    return hashes.flatMap((h) => decodeRecord(KEY_FIELDS, h) ?? []);
  }

  async listAllKeys(): Promise<KeyListing[]> {
    const ids = range(Number((await this.redis.get(K.keyIds)) ?? 0));
    const accounts = await inChunks(ids, (id) => this.redis.get(K.keyAccount(id)));
    const owned = ids.flatMap((id, i) => (accounts[i] === null ? [] : [[Number(accounts[i]), id] as const]));
    const hashes = await inChunks(owned, ([a, id]) => this.redis.hgetall(K.key(a, id)));
    return hashes.flatMap((h) => decodeRecord(KEY_FIELDS, h) ?? []);
  }

  async readAccountKey(accountId: number, keyId: number): Promise<KeyListing | undefined> {
    return decodeRecord(KEY_FIELDS, await this.redis.hgetall(K.key(accountId, keyId)));
  }

  async findKeyByDigest(digest: string): Promise<KeyRow | undefined> {
    const ref = await this.redis.get(K.keyDigest(digest));
    if (ref === null) return undefined;
    const [accountId, keyId] = ref.split(":").map(Number);
    const key = await this.readAccountKey(accountId, keyId);
    if (!key) return undefined;
    const { label: _label, issuedBy: _issuedBy, ...row } = key;
    return row;
  }

  async ownerKeyCounts(accountId: number, sinceMs: number): Promise<OwnerKeyCounts> {
    const since = `(${str(sinceMs)}`;
    const [activeKeys, count, oldest] = await Promise.all([
      this.redis.scard(K.activeKeys(accountId)),
      this.redis.zcount(K.ownerIssued(accountId), since, "+inf"),
      this.redis.zrangebyscore(K.ownerIssued(accountId), since, "+inf", "WITHSCORES", "LIMIT", 0, 1),
    ]);
    return { activeKeys, issued: { count, oldestMs: oldest.length ? Number(oldest[1]) : null } };
  }

  // ---- the developer portal ------------------------------------------------------------------

  async insertSignInLink(digest: string, link: SignInLink, nowMs: number, expiresMs: number): Promise<void> {
    const fields = {
      accountId: String(link.accountId),
      owner: link.owner,
      createdMs: str(nowMs),
      expiresMs: str(expiresMs),
    };
    const ttl = Math.max(0, expiresMs - nowMs) + TTL_MS.afterExpiry;
    await this.#run("insertExpiringHash", [K.signInLink(digest)], [str(nowMs), str(ttl), ...flatten(fields)]);
  }

  async useSignInLink(digest: string, nowMs: number): Promise<SignInLink | undefined> {
    const reply = (await this.#run("useSignInLink", [K.signInLink(digest)], [str(nowMs)])) as string[] | null;
    return reply ? { accountId: Number(reply[0]), owner: reply[1] } : undefined;
  }

  async insertSession(digest: string, session: Session): Promise<void> {
    const { set } = encodeRecord(SESSION_FIELDS, session);
    const ttl = Math.max(0, session.expiresMs - session.createdMs) + TTL_MS.afterExpiry;
    await this.#run("insertExpiringHash", [K.session(digest)], [str(session.createdMs), str(ttl), ...flatten(set)]);
  }

  async readSession(digest: string, nowMs: number): Promise<Session | undefined> {
    const session = decodeRecord(SESSION_FIELDS, await this.redis.hgetall(K.session(digest)));
    return session && session.expiresMs > nowMs ? session : undefined;
  }

  async deleteSession(digest: string): Promise<void> {
    await this.redis.unlink(K.session(digest));
  }

  // ---- ticket handoffs -----------------------------------------------------------------------

  async admitHandoffAttempt(accountId: number, nowMs: number): Promise<boolean> {
    const reply = await this.#run(
      "admitHandoffAttempt",
      [K.handoffAttempts(accountId)],
      [str(nowMs), str(nowMs - MINUTE_MS), HANDOFF.creationsPerMinute, TTL_MS.handoffAttempts],
    );
    return reply === 1;
  }

  async insertHandoff(handoff: Omit<Handoff, "redeemedMs">): Promise<void> {
    const { set } = encodeRecord(HANDOFF_FIELDS, handoff);
    await this.#run("insertHandoff", [K.handoff(handoff.id)], [TTL_MS.handoff, ...flatten(set)]);
  }

  async readHandoff(id: string): Promise<Handoff | undefined> {
    return decodeRecord(HANDOFF_FIELDS, await this.redis.hgetall(K.handoff(id)));
  }

  async redeemHandoff(id: string, nowMs: number): Promise<Redemption> {
    const [outcome, flat] = (await this.#run("redeemHandoff", [K.handoff(id), K.handoffClicks(id)], [str(nowMs)])) as [
      Redemption["outcome"],
      string[] | undefined,
    ];
    if (outcome === "missing" || !flat) return { outcome: "missing" };
    return { outcome, handoff: decodeRecord(HANDOFF_FIELDS, pairs(flat))! };
  }

  async countHandoffClicks(id: string): Promise<number> {
    return this.redis.llen(K.handoffClicks(id));
  }

  // ---- the request path's counters, as the portal shows them ---------------------------------

  async readTrial(accountId: number): Promise<Trial | undefined> {
    const hash = await this.redis.hgetall(K.trial(accountId));
    return Object.keys(hash).length ? decodeRecord(TRIAL_FIELDS, { ...hash, accountId: String(accountId) }) : undefined;
  }

  async rowsDelivered(accountId: number, windowMs: number, nowMs: number): Promise<number> {
    const reply = await this.#run(
      "rowsDelivered",
      [K.usage(accountId), K.usageTotal(accountId)],
      [str(nowMs - windowMs)],
    );
    return Number(reply);
  }

  async readTokens(accountId: number, spec: BucketSpec, nowMs: number): Promise<BucketVerdict> {
    const [t, u] = await this.redis.hmget(COUNTER_KEYS.bucket(accountId, spec.bucket), "t", "u");
    const state = t === null || u === null ? undefined : { tokens: Number(t), updatedMs: Number(u) };
    return spendTokens(state, spec, 0, nowMs).verdict;
  }

  // ---- test mode -----------------------------------------------------------------------------

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  /**
   * Empties every ledger key but settings and the test clock (as `POST /_test/reset` keeps one
   * server's clock), then tells every process that accounts and keys changed.
   */
  async reset(): Promise<void> {
    // A cluster's keys are spread over its primaries: SCAN reads one node's.
    const nodes = this.redis instanceof Cluster ? this.redis.nodes("master") : [this.redis];
    for (const node of nodes) {
      let cursor = "0";
      do {
        const [next, keys] = await node.scan(cursor, "MATCH", K.all, "COUNT", 1000);
        cursor = next;
        const doomed = keys.filter((k) => !k.startsWith(K.settingsPrefix) && k !== K.testClock);
        // One key a command: keys of different slots cannot share one on Redis Cluster.
        await Promise.all(doomed.map((key) => this.redis.unlink(key)));
      } while (cursor !== "0");
    }
    await this.redis.publish(K.accessChanged, "reset");
  }

  onAccessChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  async close(): Promise<void> {
    this.#listeners.clear();
    this.subscriber.disconnect();
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

/** 1 to n. */
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);

/** `read` of every item, a bounded number at a time (each batch goes out pipelined), in order. */
export async function inChunks<T, R>(items: readonly T[], read: (item: T) => Promise<R>, size = 500): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map(read))));
  return out;
}

/** Only the account's own fields, without undefined values (they leave a field as it is). */
function accountFields(fields: Partial<AccountFields>): Partial<AccountFields> {
  const out: Record<string, unknown> = {};
  for (const name of ACCOUNT_FIELD_NAMES) if (fields[name] !== undefined) out[name] = fields[name];
  return out as Partial<AccountFields>;
}

/** Throws a one-line error unless INFO's `redis_version` is 6.2 or later. */
export function assertRedisVersion(info: string, url: string): void {
  const match = /^redis_version:(\d+)\.(\d+)/m.exec(info);
  const [major, minor] = match ? [Number(match[1]), Number(match[2])] : [0, 0];
  if (major > MIN_VERSION[0] || (major === MIN_VERSION[0] && minor >= MIN_VERSION[1])) return;
  const found = match ? `runs Redis ${major}.${minor}` : "does not say its version";
  throw new Error(
    `the Redis ledger at ${displayRedisUrl(url)} ${found}; Marquee needs Redis ${MIN_VERSION.join(".")} or later`,
  );
}

/**
 * Throws a one-line error when INFO's memory section says Redis will evict keys once full: a
 * ledger that loses keys forgets issued API keys and spent limits (docs/several-servers.md, "Run
 * several servers"). Without a `maxmemory` Redis never evicts, whatever its policy.
 */
export function assertNoEviction(info: string, url: string): void {
  const maxmemory = Number(/^maxmemory:(\d+)/m.exec(info)?.[1] ?? 0);
  const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1] ?? "noeviction";
  if (maxmemory === 0 || policy === "noeviction") return;
  throw new Error(
    `the Redis ledger at ${displayRedisUrl(url)} evicts keys when full (maxmemory-policy ${policy}); ` +
      "a ledger must keep every key: set maxmemory-policy noeviction, as deploy/redis.conf does",
  );
}

/** Throws a one-line error when INFO's replication section says this Redis is a read-only replica. */
export function assertPrimary(info: string, url: string): void {
  if (!/^role:slave/m.test(info)) return;
  const primary = /^master_host:(\S+)/m.exec(info)?.[1];
  const port = /^master_port:(\d+)/m.exec(info)?.[1];
  const of = primary ? ` of ${primary}:${port}` : "";
  throw new Error(`the Redis ledger at ${displayRedisUrl(url)} is a read-only replica${of}: name its primary`);
}

/**
 * Marks a new ledger with this build's layout version; refuses one a newer Marquee wrote
 * (docs/operations.md, Upgrades and schema versions).
 */
export async function assertRedisSchema(redis: RedisClient, url: string): Promise<void> {
  await redis.set(K.schemaVersion, String(REDIS_SCHEMA_VERSION), "NX");
  const found = Number(await redis.get(K.schemaVersion));
  if (found <= REDIS_SCHEMA_VERSION) return;
  throw new NewerSchemaError(
    `the Redis ledger at ${displayRedisUrl(url)} has schema version ${found}, written by a newer Marquee; this one knows up to version ${REDIS_SCHEMA_VERSION}: run the newer Marquee`,
  );
}

/**
 * Connects to the Redis ledger at `url`: one connection for commands, one subscribed to the
 * access channel. Rejects with a one-line error when Redis is unreachable, older than 6.2, set
 * to evict keys, or a replica. (A cluster client writes to each slot's primary by itself.)
 */
export async function openRedisLedger(url: string): Promise<RedisLedger> {
  const redis = await connectRedis(url);
  let subscriber: RedisClient | undefined;
  try {
    // INFO's default sections hold the server's version, memory policy and replication role.
    const info = await redis.info();
    assertRedisVersion(info, url);
    assertNoEviction(info, url);
    if (!(redis instanceof Cluster)) assertPrimary(info, url);
    await assertRedisSchema(redis, url);
    subscriber = await connectRedis(url, { subscriber: true });
    const ledger = new RedisLedger(redis, subscriber);
    await subscriber.subscribe(K.accessChanged);
    return ledger;
  } catch (err) {
    subscriber?.disconnect();
    redis.disconnect();
    throw err;
  }
}
