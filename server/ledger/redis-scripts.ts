/**
 * The Redis ledger's atomic steps as Lua scripts (docs/redis-ledger.md): each one decides and
 * writes in a single step that no other client's command can interleave with, and every key it
 * names shares one hash tag (server/ledger/redis-keys.ts), so it also runs on Redis Cluster.
 * ioredis sends them with EVALSHA and falls back to EVAL when the server has lost its script
 * cache (after a restart).
 *
 * Instants arrive as decimal strings computed in TypeScript and are stored as given: Lua's own
 * number-to-string conversion keeps only 14 digits, fewer than a far test-clock instant has.
 * Changes to accounts and keys PUBLISH on the access channel inside the script, so the notice
 * cannot be lost between the change and its announcement.
 */
import type { RedisClient } from "./redis-connection.ts";

const SCRIPTS = {
  /** KEYS: account. ARGV: channel, field/value pairs. */
  createAccount: {
    keys: 1,
    lua: `
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('PUBLISH', ARGV[1], 'account')
return 1`,
  },
  /**
   * KEYS: account. ARGV: nowMs, JSON {field: value} to set, JSON [field] to clear, channel,
   * "1" when hadSubscription was given. Ending a paid plan leaves a prior subscription behind
   * unless hadSubscription is given (docs/api.md, Plans and access).
   */
  updateAccount: {
    keys: 1,
    lua: `
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local set = cjson.decode(ARGV[2])
local plan = redis.call('HGET', KEYS[1], 'plan')
if plan ~= 'none' and set['plan'] == 'none' and ARGV[5] ~= '1' then set['hadSubscription'] = '1' end
for field, value in pairs(set) do redis.call('HSET', KEYS[1], field, value) end
for _, field in ipairs(cjson.decode(ARGV[3])) do redis.call('HDEL', KEYS[1], field) end
redis.call('HSET', KEYS[1], 'updatedMs', ARGV[1])
redis.call('PUBLISH', ARGV[4], 'account')
return redis.call('HGETALL', KEYS[1])`,
  },
  /**
   * A key, optionally within the owner's two ceilings (the active-key ceiling first: waiting
   * does not lift it; docs/api.md, "Developer portal").
   * KEYS: account, key hash, account's key ids, active key ids, owner issuance.
   * ARGV: keyId, nowMs, "owner" | "operator", keyLimit ("" = no ceilings), perWindow,
   * sinceMs (exclusive), channel, field/value pairs.
   * Returns {"created"} | {"key_limit_reached"} | {"key_issuance_rate_limited", oldestMs}.
   */
  insertKey: {
    keys: 5,
    lua: `
if redis.call('EXISTS', KEYS[1]) == 0 then return redis.error_reply('no such account') end
if ARGV[4] ~= '' then
  if redis.call('SCARD', KEYS[4]) >= tonumber(ARGV[4]) then return {'key_limit_reached'} end
  local since = '(' .. ARGV[6]
  if redis.call('ZCOUNT', KEYS[5], since, '+inf') >= tonumber(ARGV[5]) then
    local oldest = redis.call('ZRANGEBYSCORE', KEYS[5], since, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
    return {'key_issuance_rate_limited', oldest[2]}
  end
end
redis.call('HSET', KEYS[2], unpack(ARGV, 8))
redis.call('ZADD', KEYS[3], ARGV[1], ARGV[1])
redis.call('SADD', KEYS[4], ARGV[1])
if ARGV[3] == 'owner' then redis.call('ZADD', KEYS[5], ARGV[2], ARGV[1]) end
redis.call('PUBLISH', ARGV[7], 'key')
return {'created'}`,
  },
  /** KEYS: key hash, active key ids. ARGV: nowMs, keyId, channel. The first revocation time stays. */
  revokeKey: {
    keys: 2,
    lua: `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('HSETNX', KEYS[1], 'revokedMs', ARGV[1]) == 1 then
  redis.call('SREM', KEYS[2], ARGV[2])
  redis.call('PUBLISH', ARGV[3], 'key')
end
return 1`,
  },
  /**
   * The handoff limit's sliding window (docs/api.md, Ticket handoffs): attempts at or before
   * the window's start are dropped; a refused attempt is not counted.
   * KEYS: attempts. ARGV: nowMs, windowStartMs, limit, ttlMs.
   */
  admitHandoffAttempt: {
    keys: 1,
    lua: `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
local n = redis.call('ZCOUNT', KEYS[1], ARGV[1], ARGV[1])
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[1] .. ':' .. n)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`,
  },
  /** KEYS: handoff. ARGV: ttlMs, field/value pairs. */
  insertHandoff: {
    keys: 1,
    lua: `
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1`,
  },
  /**
   * Continue: exactly one caller moves an active handoff to redeemed, and records the one click
   * with it. A redeemed handoff stays redeemed after its expiry.
   * KEYS: handoff, clicks. ARGV: nowMs. Returns {outcome, handoff's HGETALL}.
   */
  redeemHandoff: {
    keys: 2,
    lua: `
if redis.call('EXISTS', KEYS[1]) == 0 then return {'missing'} end
local h = redis.call('HMGET', KEYS[1], 'redeemedMs', 'expiresMs', 'id', 'accountId', 'keyId', 'eventId', 'seller', 'sellerUrl')
local outcome
if h[1] then
  outcome = 'already_redeemed'
elseif tonumber(h[2]) <= tonumber(ARGV[1]) then
  outcome = 'expired'
else
  redis.call('HSET', KEYS[1], 'redeemedMs', ARGV[1])
  redis.call('RPUSH', KEYS[2], cjson.encode({handoffId = h[3], accountId = h[4], keyId = h[5], eventId = h[6],
    seller = h[7], sellerUrl = h[8], clickedMs = ARGV[1]}))
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
  outcome = 'redeemed'
end
return {outcome, redis.call('HGETALL', KEYS[1])}`,
  },
  /** KEYS: link. ARGV: nowMs, ttlMs, field/value pairs. */
  insertExpiringHash: {
    keys: 1,
    lua: `
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`,
  },
  /** Single use: KEYS: link. ARGV: nowMs. Returns {accountId, owner} or nil. */
  useSignInLink: {
    keys: 1,
    lua: `
local l = redis.call('HMGET', KEYS[1], 'accountId', 'owner', 'expiresMs', 'usedMs')
if not l[1] or l[4] or tonumber(l[3]) <= tonumber(ARGV[1]) then return false end
redis.call('HSET', KEYS[1], 'usedMs', ARGV[1])
return {l[1], l[2]}`,
  },
  /**
   * Rows delivered in (fromMs, now]: the running total less the total at the last delivery at
   * or before fromMs (db/row-usage.ts). KEYS: usage, usage total. ARGV: fromMs.
   */
  rowsDelivered: {
    keys: 2,
    lua: `
local function largestAt(score)
  local best = 0
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], score, score)) do
    local t = tonumber(m)
    if t > best then best = t end
  end
  return best
end
local latest = tonumber(redis.call('GET', KEYS[2]) or '-1')
if latest < 0 then
  local top = redis.call('ZREVRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  latest = 0
  if #top > 0 then latest = largestAt(top[2]) end
end
local last = redis.call('ZREVRANGEBYSCORE', KEYS[1], ARGV[1], '-inf', 'WITHSCORES', 'LIMIT', 0, 1)
local base = 0
if #last > 0 then base = largestAt(last[2]) end
return latest - base`,
  },
  /**
   * Test mode, once per request: the shared clock, and the first armed fault that matches the
   * request with one use spent (a fault at its last use is removed). The matching rule is
   * server/faults.ts `faultMatches`. KEYS: the clock, the fault list. ARGV: path, key id ('' when
   * none), the codes the request can be answered with (',' between). Returns {clock or false,
   * the fault's JSON as it was before the use, or false}.
   */
  takeFault: {
    keys: 2,
    lua: `
local clock = redis.call('GET', KEYS[1])
local codes = ',' .. ARGV[3] .. ','
for i, raw in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
  local f = cjson.decode(raw)
  if string.find(codes, ',' .. f.code .. ',', 1, true)
    and (f.keyId == cjson.null or (ARGV[2] ~= '' and f.keyId == tonumber(ARGV[2])))
    and (f.path == cjson.null or string.sub(ARGV[1], 1, #f.path) == f.path) then
    if f.times <= 1 then
      redis.call('LREM', KEYS[2], 1, raw)
    else
      f.times = f.times - 1
      redis.call('LSET', KEYS[2], i - 1, cjson.encode(f))
    end
    return {clock, raw}
  end
end
return {clock, false}`,
  },
} as const;

export type ScriptName = keyof typeof SCRIPTS;
export type RunScript = (
  name: ScriptName,
  keys: readonly string[],
  args: readonly (string | number)[],
) => Promise<unknown>;

/** Defines every script on the client; the returned function runs one by name. */
export function defineScripts(client: RedisClient): RunScript {
  for (const [name, { keys, lua }] of Object.entries(SCRIPTS)) client.defineCommand(name, { numberOfKeys: keys, lua });
  const commands = client as unknown as Record<ScriptName, (...args: (string | number)[]) => Promise<unknown>>;
  return (name, keys, args) => commands[name](...keys, ...args);
}
