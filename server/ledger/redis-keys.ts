/**
 * Where the Redis ledger keeps what (docs/redis-ledger.md, "Key layout"): the one place key
 * names are built, for the ledger (server/ledger/redis.ts) and the request path's counters
 * (server/ledger/redis-counters.ts) alike.
 *
 * Everything an atomic step touches together shares one hash tag, so each script stays within
 * one hash slot and Redis Cluster can run it:
 *
 * - `{a<accountId>}`: the account hash, its keys (hashes, the id set, the active set), the
 *   owner's issuance log, handoff attempts, the trial and delivered rows;
 * - `{h<handoffId>}`: a handoff and its clicks.
 *
 * Lookups that start from something else (a digest, a key id, a sign-in token) are single keys
 * outside any account's slot, read before the account's own keys.
 */

const PREFIX = "marquee";

export const REDIS_KEYS = {
  /** Id counters (INCR). */
  accountIds: `${PREFIX}:ids:account`,
  keyIds: `${PREFIX}:ids:key`,

  /** Hash: the account's fields (`ACCOUNT_FIELDS`, server/ledger/redis-records.ts). */
  account: (accountId: number) => `${PREFIX}:{a${accountId}}:account`,
  /** Sorted set of the account's key ids, scored by id (listings in id order). */
  accountKeys: (accountId: number) => `${PREFIX}:{a${accountId}}:keys`,
  /** Set of the account's unrevoked key ids (the active-key ceiling). */
  activeKeys: (accountId: number) => `${PREFIX}:{a${accountId}}:keys:active`,
  /** Hash: one key (`KEY_FIELDS`); only its digest and display prefix, never the key. */
  key: (accountId: number, keyId: number) => `${PREFIX}:{a${accountId}}:key:${keyId}`,
  /** Sorted set: key ids the owner created in the portal, scored by creation ms. */
  ownerIssued: (accountId: number) => `${PREFIX}:{a${accountId}}:owner-issued`,
  /** Sorted set: counted handoff creation attempts, scored by ms (member `<ms>:<n>`). */
  handoffAttempts: (accountId: number) => `${PREFIX}:{a${accountId}}:handoff-attempts`,
  /**
   * Hash: the REST trial, fields `startedMs`, `rowsUsed`, `exhaustedMs` (absent while rows
   * remain), as db/trials.ts `Trial`.
   */
  trial: (accountId: number) => `${PREFIX}:{a${accountId}}:trial`,
  /**
   * Sorted set: deliveries, member = the running total of delivered rows after the delivery
   * (decimal), score = the delivery's ms (db/row-usage.ts, `UsageEntry`). Deliveries in one ms
   * may be one member or several; readers take the largest total at a score.
   */
  usage: (accountId: number) => `${PREFIX}:{a${accountId}}:usage`,
  /** String: the running total of rows ever delivered to the account (INCRBY). */
  usageTotal: (accountId: number) => `${PREFIX}:{a${accountId}}:usage:total`,

  /** String `<accountId>:<keyId>`: finds a key from the digest a request presents. */
  keyDigest: (digest: string) => `${PREFIX}:key-digest:${digest}`,
  /** String: the account of a key id (revoking by id). */
  keyAccount: (keyId: number) => `${PREFIX}:key-account:${keyId}`,

  /** Hash: a handoff (`HANDOFF_FIELDS`). */
  handoff: (id: string) => `${PREFIX}:{h${id}}:handoff`,
  /** List: the handoff's recorded clicks, JSON each. */
  handoffClicks: (id: string) => `${PREFIX}:{h${id}}:clicks`,

  /** Hash: a portal sign-in link, by the token's digest. */
  signInLink: (digest: string) => `${PREFIX}:sign-in-link:${digest}`,
  /** Hash: a portal session, by the session id's digest. */
  session: (digest: string) => `${PREFIX}:session:${digest}`,

  /** String: a named setting (the HMAC secret); kept by reset. */
  setting: (name: string) => `${PREFIX}:settings:${name}`,
  settingsPrefix: `${PREFIX}:settings:`,
  /**
   * String: the layout version of these keys (`REDIS_SCHEMA_VERSION`, server/ledger/redis.ts), so
   * an older Marquee refuses a ledger a newer one wrote; a setting, so reset keeps it.
   */
  schemaVersion: `${PREFIX}:settings:schema-version`,

  /**
   * Test mode, in one hash slot (`{test}`) so one script reads the clock and takes a fault:
   * the frozen clock's ms (absent: wall clock), kept by reset as one server's clock is; the list
   * of armed faults in arming order, JSON each (server/faults.ts `Fault`); their id counter.
   */
  testClock: `${PREFIX}:{test}:clock`,
  testFaults: `${PREFIX}:{test}:faults`,
  testFaultIds: `${PREFIX}:{test}:fault-ids`,

  /** Pub/sub channel: an account or a key changed. */
  accessChanged: `${PREFIX}:access-changed`,
  /** SCAN pattern of every ledger key. */
  all: `${PREFIX}:*`,
} as const;
