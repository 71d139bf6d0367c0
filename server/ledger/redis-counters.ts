/**
 * The counters (server/limits/counters.ts) on a Redis ledger, each step one Lua script, so any
 * number of serving processes share each limit exactly: ADMIT (stage 3), RESERVE (open), SETTLE
 * (settle); an account without a row allowance takes through TAKES and records through RECORD,
 * each batched per account and turn of the event loop (under load many requests of one account
 * arrive in one turn). A metered page costs two round trips, one when it is known and fits.
 *
 * - Each script touches one account's keys only (`marquee:{a<id>}:…`, server/ledger/redis-keys.ts):
 *   one hash slot, so Redis Cluster runs them.
 * - Times are the caller's `nowMs` (the test clock in test mode), never Redis's TIME. Expiries
 *   Redis applies by itself (PEXPIRE on buckets and holds) only forget state that no answer
 *   needs any more, with an hour to spare.
 * - Deliveries are the sorted set of running totals db/row-usage.ts describes (member = the total
 *   after the delivery, score = its ms; one member per ms), pruned to the window and the one
 *   delivery before it, so rows in (now - 24 h, now] = total - that baseline.
 * - Floating-point tokens travel as strings ("%.17g"): Redis turns a Lua number into an integer.
 */
import { ACCESS, DAY_MS, TRIAL } from "../../db/contract.ts";
import type { BucketSpec, BucketVerdict } from "../../db/rate-buckets.ts";
import type { Allowance } from "../../db/row-usage.ts";
import type { Trial } from "../../db/trials.ts";
import type {
  Admission,
  AllowanceState,
  Counters,
  MeteredSpec,
  Reserved,
  RowAllowanceSpec,
  Settled,
} from "../limits/counters.ts";
import { ledgerFailure } from "../limits/ledger.ts";
import type { RedisClient } from "./redis-connection.ts";
import { REDIS_KEYS } from "./redis-keys.ts";

/** Keys of the request path beside REDIS_KEYS, in the same account slot. */
export const COUNTER_KEYS = {
  /** Hash `t` (tokens, "%.17g"), `u` (ms of the last take): `key:<id>` or `account:<id>` (BucketSpec.bucket). */
  bucket: (accountId: number, bucket: string) => `marquee:{a${accountId}}:bucket:${bucket}`,
  /** Sorted set of live reservations: member `<id>:<rows>`, score = expiry ms. */
  holds: (accountId: number, allowance: Allowance) => `marquee:{a${accountId}}:holds:${allowance}`,
  /** String: the account's reservation id counter (INCR; never expires, so an id is never reused). */
  holdIds: (accountId: number) => `marquee:{a${accountId}}:holds:ids`,
} as const;

/** Real time Redis keeps buckets and holds beyond the moment nothing needs them. */
const SPARE_MS = 3_600_000;

const PRELUDE = `
local TRIAL_ROWS, TRIAL_MS, PAGE_ROWS = ${TRIAL.rows}, ${TRIAL.days * DAY_MS}, ${TRIAL.maxRowsPerPage}
local WINDOW_MS, HOLD_MS, SPARE_MS = ${ACCESS.rowBudgetWindowMs}, ${ACCESS.reservationTtlMs}, ${SPARE_MS}

local function fmt(x) return string.format('%.17g', x) end

-- A stored bucket as {t = tokens, u = ms of the last take (and its text)}; {} when absent (full).
local function readBucket(key)
  local s = redis.call('HMGET', key, 't', 'u')
  if not s[1] then return {} end
  return {t = tonumber(s[1]), u = tonumber(s[2]), uText = s[2]}
end

-- db/rate-buckets.ts spendTokens, on a bucket read by readBucket; an admitted take moves it.
local function spend(b, now, nowText, capacity, refill, cost)
  local before = capacity
  if b.t then before = math.min(capacity, b.t + (math.max(0, now - b.u) / 1000) * refill) end
  local price = math.min(cost, capacity)
  local admitted = before >= price
  local tokens, retry = before, 0
  if admitted then tokens = before - price else retry = math.ceil(((price - tokens) / refill) * 1000) end
  local full = math.ceil(((capacity - tokens) / refill) * 1000)
  if admitted then b.t, b.u, b.uText, b.full = tokens, now, nowText, full end
  return {admitted and 1 or 0, fmt(tokens), retry, now + full}
end

-- Stores a bucket an admitted take moved (its expiry from the last such take).
local function writeBucket(key, b)
  if not b.full then return end
  redis.call('HSET', key, 't', fmt(b.t), 'u', b.uText)
  redis.call('PEXPIRE', key, b.full + SPARE_MS)
end

-- The running total before the window (0 when none); forgets the deliveries before it.
local function baseline(log, now)
  local base = redis.call('ZREVRANGEBYSCORE', log, now - WINDOW_MS, '-inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if #base == 0 then return 0 end
  redis.call('ZREMRANGEBYSCORE', log, '-inf', '(' .. base[2])
  return tonumber(base[1])
end

-- Counts a delivery of rows > 0 (deliveries in the same millisecond are one entry).
local function record(log, totalKey, rows, now)
  local total = redis.call('INCRBY', totalKey, rows)
  redis.call('ZREMRANGEBYSCORE', log, now, now)
  redis.call('ZADD', log, now, total)
  baseline(log, now)
end
`;

/**
 * The allowance steps (ADMIT, RESERVE, SETTLE) share one key layout, KEYS: trial, holds, hold
 * ids, usage, usage total (then ADMIT's bucket), and report the allowance as
 * server/limits/counters.ts `AllowanceState`: {startedMs, rowsUsed, exhaustedMs, used, reserved,
 * msUntilBelow} after their own fields. Holds are members `<id>:<rows>` scored by their expiry.
 */
const ALLOWANCE = `${PRELUDE}
-- The trial as {startedMs, rowsUsed, exhaustedMs}: -1 when not started, or not exhausted.
local function readTrial()
  local t = redis.call('HMGET', KEYS[1], 'startedMs', 'rowsUsed', 'exhaustedMs')
  if not t[1] then return {-1, 0, -1} end
  return {tonumber(t[1]), tonumber(t[2] or '0'), tonumber(t[3] or '-1')}
end

local function startTrial(now, nowText)
  local t = readTrial()
  if t[1] >= 0 then return t end
  redis.call('HSET', KEYS[1], 'startedMs', nowText, 'rowsUsed', 0)
  return {now, 0, -1}
end

-- db/trials.ts trialState.
local function trialState(t, now)
  local expires = t[1] + TRIAL_MS
  if t[3] >= 0 and t[3] < expires then return 'exhausted' end
  if now >= expires then return 'expired' end
  return 'active'
end

-- The state now (db/row-usage.ts rowsDelivered and msUntilRowsBelow for a budget), and the rows left.
local function stateOf(kind, limit, t, now)
  local used, wait, reserved = 0, 0, 0
  if kind == 'budget' then
    local total = tonumber(redis.call('GET', KEYS[5]) or '0')
    used = total - baseline(KEYS[4], now)
    if used >= limit then
      local entries = redis.call('ZRANGEBYSCORE', KEYS[4], '(' .. (now - WINDOW_MS), '+inf', 'WITHSCORES')
      for i = 1, #entries, 2 do
        if tonumber(entries[i]) > total - limit then
          wait = math.max(0, tonumber(entries[i + 1]) + WINDOW_MS - now)
          break
        end
      end
    end
  end
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. now, '+inf')) do
    reserved = reserved + tonumber(string.match(m, ':(%d+)$'))
  end
  local left = TRIAL_ROWS - t[2] - reserved
  if kind == 'budget' then left = limit - used - reserved end
  return {t[1], t[2], t[3], used, reserved, wait}, left
end

-- At most the requested rows of those left held (a trial: a page at most, none once it expired).
local function holdRows(kind, t, left, requested, now)
  local rows = math.min(requested, left)
  if kind == 'trial' then
    rows = math.min(rows, PAGE_ROWS)
    if trialState(t, now) == 'expired' then rows = 0 end
  end
  if rows <= 0 then return 0, '' end
  local member = redis.call('INCR', KEYS[3]) .. ':' .. rows
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  redis.call('ZADD', KEYS[2], now + HOLD_MS, member)
  redis.call('PEXPIRE', KEYS[2], HOLD_MS + SPARE_MS)
  return rows, member
end

-- Delivered rows counted (a trial's: rowsUsed grows, exhausted once it reaches TRIAL_ROWS).
local function count(kind, rows, now, nowText)
  if rows <= 0 then return end
  if kind == 'trial' then
    if redis.call('EXISTS', KEYS[1]) == 0 then return end
    local used = redis.call('HINCRBY', KEYS[1], 'rowsUsed', rows)
    if used >= TRIAL_ROWS and redis.call('HEXISTS', KEYS[1], 'exhaustedMs') == 0 then
      redis.call('HSET', KEYS[1], 'exhaustedMs', nowText)
    end
  end
  record(KEYS[4], KEYS[5], rows, now)
end

local function reply(fields, s)
  for i = 1, 6 do fields[#fields + 1] = s[i] end
  return fields
end
`;

/**
 * ARGV: now, capacity, refill/s, cost, kind ("trial" | "budget"), budget limit, verified (1/0),
 * rows to reserve (0: none), rows of the page already known (-1: not known). Returns {admitted,
 * tokens, retryAfterMs, fullAtMs, gated, counted (1/0), rows, member} and the state stage 3
 * decided on (the trial as this step started it).
 */
const ADMIT = `${ALLOWANCE}
local now, kind, limit = tonumber(ARGV[1]), ARGV[5], tonumber(ARGV[6])
local t = {-1, 0, -1}
if kind == 'trial' then
  t = readTrial()
  if (t[1] >= 0 and trialState(t, now) ~= 'active') or (t[1] < 0 and ARGV[7] ~= '1') then
    return reply({0, '0', 0, 0, 1, 0, 0, ''}, {t[1], t[2], t[3], 0, 0, 0})
  end
end
local b = readBucket(KEYS[6])
local v = spend(b, now, ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]))
writeBucket(KEYS[6], b)
local s, left = stateOf(kind, limit, t, now)
local requested, known = tonumber(ARGV[8]), tonumber(ARGV[9])
local counted, rows, member = 0, 0, ''
if v[1] == 1 and requested > 0 and left > 0 then
  if kind == 'trial' then
    t = startTrial(now, ARGV[1])
    s[1] = t[1]
  end
  if known >= 0 and left >= requested and (kind == 'budget' or requested <= PAGE_ROWS) then
    count(kind, known, now, ARGV[1])
    counted, rows = 1, known
  else
    rows, member = holdRows(kind, t, left, requested, now)
  end
end
return reply({v[1], v[2], v[3], v[4], 0, counted, rows, member}, s)
`;

/** ARGV: now, kind, budget limit, requested rows. Returns {rows, member} (0, "" when nothing was held) and the state before the hold. */
const RESERVE = `${ALLOWANCE}
local now, kind = tonumber(ARGV[1]), ARGV[2]
local t = {-1, 0, -1}
if kind == 'trial' then t = startTrial(now, ARGV[1]) end
local s, left = stateOf(kind, tonumber(ARGV[3]), t, now)
local rows, member = holdRows(kind, t, left, tonumber(ARGV[4]), now)
return reply({rows, member}, s)
`;

/**
 * ARGV: now, kind, budget limit, member, held rows, delivered rows. Counts min(delivered, held):
 * a trial's only while the hold was live. Returns {live} and the state after.
 */
const SETTLE = `${ALLOWANCE}
local now, kind = tonumber(ARGV[1]), ARGV[2]
local expiry = redis.call('ZSCORE', KEYS[2], ARGV[4])
redis.call('ZREM', KEYS[2], ARGV[4])
local live = expiry ~= false and tonumber(expiry) > now
if live or kind == 'budget' then count(kind, math.min(tonumber(ARGV[6]), tonumber(ARGV[5])), now, ARGV[1]) end
local t = {-1, 0, -1}
if kind == 'trial' then t = readTrial() end
return reply({live and 1 or 0}, (stateOf(kind, tonumber(ARGV[3]), t, now)))
`;

/**
 * Bucket takes of accounts without a row allowance, in the order they were asked for, each as
 * ADMIT would take it. KEYS: the account's buckets. ARGV: (bucket's key index, now, capacity,
 * refill/s, cost) for each take. Returns {admitted, tokens, retryAfterMs, fullAtMs} for each.
 * Each bucket is read once and written once, its takes worked out in between.
 */
const TAKES = `${PRELUDE}
local buckets, out = {}, {}
for i = 1, #ARGV, 5 do
  local k = tonumber(ARGV[i])
  buckets[k] = buckets[k] or readBucket(KEYS[k])
  local v = spend(buckets[k], tonumber(ARGV[i + 1]), ARGV[i + 1], tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3]), tonumber(ARGV[i + 4]))
  for j = 1, 4 do out[#out + 1] = v[j] end
end
for k, b in pairs(buckets) do writeBucket(KEYS[k], b) end
return out
`;

/** KEYS: usage, usage total. ARGV: (now, rows) pairs, each recorded in turn. */
const RECORD = `${PRELUDE}
for i = 1, #ARGV, 2 do
  local rows = tonumber(ARGV[i + 1])
  if rows > 0 then record(KEYS[1], KEYS[2], rows, tonumber(ARGV[i])) end
end
return 1
`;

type Reply = (number | string)[];

type Script = (...args: (string | number)[]) => Promise<Reply>;
/** The scripts as ioredis defines them on the connection; TAKES takes the number of keys first. */
type Scripts = Record<"marqueeAdmit" | "marqueeTakes" | "marqueeReserve" | "marqueeSettle" | "marqueeRecord", Script>;

const verdictAt = (r: Reply, at: number): BucketVerdict => ({
  admitted: r[at] === 1,
  tokens: Number(r[at + 1]),
  retryAfterMs: Number(r[at + 2]),
  fullAtMs: Number(r[at + 3]),
});

/** The trial as the scripts report it (-1 = absent). */
function trialOf(accountId: number, startedMs: number, rowsUsed: number, exhaustedMs: number): Trial | undefined {
  if (startedMs < 0) return undefined;
  return { accountId, startedMs, rowsUsed, exhaustedMs: exhaustedMs < 0 ? null : exhaustedMs };
}

/** The allowance state a script reports from `at` on. */
function stateAt(accountId: number, r: Reply, at: number): AllowanceState {
  const n = (i: number) => Number(r[at + i]);
  return { trial: trialOf(accountId, n(0), n(1), n(2)), used: n(3), reserved: n(4), msUntilBelow: n(5) };
}

/** The allowance steps' keys, in the order ALLOWANCE names them. */
const allowanceKeys = (accountId: number, kind: Allowance) => [
  REDIS_KEYS.trial(accountId),
  COUNTER_KEYS.holds(accountId, kind),
  COUNTER_KEYS.holdIds(accountId),
  REDIS_KEYS.usage(accountId),
  REDIS_KEYS.usageTotal(accountId),
];

const limitOf = (allowance: MeteredSpec) => (allowance.kind === "budget" ? allowance.limit : 0);

/** What stage 3 reports beside the verdict for an account without a row allowance. */
const UNMETERED = { trial: undefined, used: 0, reserved: 0, msUntilBelow: 0 };

/** One account's bucket takes waiting for the end of the turn: its buckets, each take's arguments, who waits for each. */
interface QueuedTakes {
  keys: string[];
  args: (string | number)[];
  waiters: Array<{ resolve(verdict: BucketVerdict): void; reject(err: unknown): void }>;
}

/** One account's deliveries waiting for the end of the turn: (ms, rows) pairs in order, and who waits for them. */
interface QueuedDeliveries {
  pairs: number[];
  written: Promise<void>;
  settle(err?: unknown): void;
}

/** The counters' scripts on one connection (server/ledger/redis-connection.ts). */
export class RedisCounters implements Counters {
  readonly prepares = true;
  readonly #redis: RedisClient & Scripts;
  readonly #queued = new Map<number, QueuedDeliveries>();
  readonly #takes = new Map<number, QueuedTakes>();

  constructor(redis: RedisClient) {
    const define = (name: keyof Scripts, keys: number | undefined, lua: string) =>
      redis.defineCommand(name, { numberOfKeys: keys, lua });
    define("marqueeAdmit", 6, ADMIT);
    define("marqueeTakes", undefined, TAKES);
    define("marqueeReserve", 5, RESERVE);
    define("marqueeSettle", 5, SETTLE);
    define("marqueeRecord", 2, RECORD);
    this.#redis = redis as RedisClient & Scripts;
  }

  async admit(
    accountId: number,
    spec: BucketSpec,
    cost: number,
    allowance: RowAllowanceSpec,
    verified: boolean,
    nowMs: number,
    reserve = 0,
    known: number | null = null,
  ): Promise<Admission> {
    if (allowance === null) {
      const verdict = await this.takeTokens(accountId, spec, cost, nowMs);
      return { ...UNMETERED, verdict, gated: false, reservation: null, counted: null };
    }
    const r = await this.#redis.marqueeAdmit(
      ...allowanceKeys(accountId, allowance.kind),
      COUNTER_KEYS.bucket(accountId, spec.bucket),
      nowMs,
      spec.capacity,
      String(spec.refillPerSecond),
      cost,
      allowance.kind,
      limitOf(allowance),
      verified ? 1 : 0,
      reserve,
      known ?? -1,
    );
    const state = stateAt(accountId, r, 8);
    const counted = r[5] === 1;
    const rows = Number(r[6]);
    return {
      ...state,
      verdict: verdictAt(r, 0),
      gated: r[4] === 1,
      reservation: rows > 0 && !counted ? { ...state, msUntilBelow: 0, rows, hold: String(r[7]) } : null,
      counted: counted ? rows : null,
    };
  }

  async reserve(accountId: number, allowance: MeteredSpec, requested: number, nowMs: number): Promise<Reserved> {
    const r = await this.#redis.marqueeReserve(
      ...allowanceKeys(accountId, allowance.kind),
      nowMs,
      allowance.kind,
      limitOf(allowance),
      requested,
    );
    return { ...stateAt(accountId, r, 2), rows: Number(r[0]), hold: String(r[1]) };
  }

  async settle(
    accountId: number,
    allowance: MeteredSpec,
    hold: Reserved,
    delivered: number,
    nowMs: number,
  ): Promise<Settled> {
    const r = await this.#redis.marqueeSettle(
      ...allowanceKeys(accountId, allowance.kind),
      nowMs,
      allowance.kind,
      limitOf(allowance),
      hold.hold,
      hold.rows,
      delivered,
    );
    return { ...stateAt(accountId, r, 1), live: r[0] === 1 };
  }

  record(accountId: number, rows: number, nowMs: number): void {
    this.recordDelivery(accountId, rows, nowMs).catch((err) => ledgerFailure("rate_limit_unavailable", err));
  }

  /** The bucket take alone, queued until the end of this turn (`flushTakes`), taken in the order asked for. */
  takeTokens(accountId: number, spec: BucketSpec, cost: number, nowMs: number): Promise<BucketVerdict> {
    let queued = this.#takes.get(accountId);
    if (!queued) {
      if (this.#takes.size === 0) setImmediate(() => void this.flushTakes());
      queued = { keys: [], args: [], waiters: [] };
      this.#takes.set(accountId, queued);
    }
    const key = COUNTER_KEYS.bucket(accountId, spec.bucket);
    let index = queued.keys.indexOf(key);
    if (index < 0) index = queued.keys.push(key) - 1;
    queued.args.push(index + 1, nowMs, spec.capacity, String(spec.refillPerSecond), cost);
    const { waiters } = queued;
    return new Promise((resolve, reject) => waiters.push({ resolve, reject }));
  }

  /** Sends every queued take now; each waiter gets its verdict, or the batch's error. */
  async flushTakes(): Promise<void> {
    const batches = [...this.#takes.values()];
    this.#takes.clear();
    await Promise.all(
      batches.map(async ({ keys, args, waiters }) => {
        let r: Reply;
        try {
          r = await this.#redis.marqueeTakes(keys.length, ...keys, ...args);
        } catch (err) {
          for (const w of waiters) w.reject(err ?? new Error("the bucket was not read"));
          return;
        }
        for (let i = 0; i < waiters.length; i++) waiters[i].resolve(verdictAt(r, 4 * i));
      }),
    );
  }

  /**
   * A delivery queued until the end of this turn (`flushDeliveries`), those of the same millisecond
   * as one entry as the script would merge them. Resolves once it is written.
   */
  recordDelivery(accountId: number, rows: number, nowMs: number): Promise<void> {
    if (rows <= 0) return Promise.resolve();
    let queued = this.#queued.get(accountId);
    if (!queued) {
      if (this.#queued.size === 0) setImmediate(() => void this.flushDeliveries());
      let settle!: (err?: unknown) => void;
      const written = new Promise<void>((resolve, reject) => {
        settle = (err) => (err === undefined ? resolve() : reject(err));
      });
      queued = { pairs: [], written, settle };
      this.#queued.set(accountId, queued);
    }
    const { pairs } = queued;
    if (pairs.length > 0 && pairs[pairs.length - 2] === nowMs) pairs[pairs.length - 1] += rows;
    else pairs.push(nowMs, rows);
    return queued.written;
  }

  /** Writes every queued delivery now (also before the connection closes). */
  async flushDeliveries(): Promise<void> {
    const batches = [...this.#queued];
    this.#queued.clear();
    await Promise.all(
      batches.map(([accountId, { pairs, settle }]) =>
        this.#redis.marqueeRecord(REDIS_KEYS.usage(accountId), REDIS_KEYS.usageTotal(accountId), ...pairs).then(
          () => settle(),
          (err: unknown) => settle(err ?? new Error("the delivery was not recorded")),
        ),
      ),
    );
  }
}
