/**
 * The request path's counters on a Redis ledger (docs/api.md, Plans and access): token buckets,
 * the trial's rows, rolling 24-hour row budgets and the row reservations of requests in flight.
 * Every decision the SQLite meter makes in memory (server/limits/meter.ts, with
 * server/limits/allowances.ts) is here one Lua script, so any number of serving processes share
 * each limit exactly:
 *
 *   admit   (stage 3) the bucket take and the allowance check in one step; for a trial account
 *           the trial's state first, taking nothing when the trial has ended or cannot start;
 *   reserve (ListAccess.open) the trial starts if due, the page is clamped to the unreserved
 *           remainder and held for ACCESS.reservationTtlMs;
 *   settle  (ListAccess.settle) releases the hold and counts what was delivered;
 *   record  the delivered rows of an account without a row allowance, written behind the page:
 *           the records of one turn of the event loop go out as one script per account.
 *
 * A metered page costs two round trips: stage 3 with the reservation when the caller has
 * validated the request first (`admit`'s `reserve`), then the settlement; one when the page is
 * already known and the unreserved remainder holds the page size asked for (`admit`'s `known`):
 * stage 3 then counts its rows. An unmetered page waits for one, the bucket take, which goes out
 * with the other takes of its account in the same turn (one script takes them in order); its
 * record goes out with those of the pages answered in the same turn.
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
local TRIAL_ROWS = ${TRIAL.rows}
local TRIAL_MS = ${TRIAL.days * DAY_MS}
local PAGE_ROWS = ${TRIAL.maxRowsPerPage}
local WINDOW_MS = ${ACCESS.rowBudgetWindowMs}
local HOLD_MS = ${ACCESS.reservationTtlMs}
local SPARE_MS = ${SPARE_MS}

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
  local tokens = before
  local retry = 0
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

local function take(key, now, nowText, capacity, refill, cost)
  local b = readBucket(key)
  local v = spend(b, now, nowText, capacity, refill, cost)
  writeBucket(key, b)
  return v
end

-- The trial as {startedMs, rowsUsed, exhaustedMs}; startedMs -1 when it has not started, exhaustedMs -1 while rows remain.
local function readTrial(key)
  local t = redis.call('HMGET', key, 'startedMs', 'rowsUsed', 'exhaustedMs')
  if not t[1] then return {-1, 0, -1} end
  return {tonumber(t[1]), tonumber(t[2] or '0'), tonumber(t[3] or '-1')}
end

-- db/trials.ts trialState.
local function trialState(t, now)
  local expires = t[1] + TRIAL_MS
  if t[3] >= 0 and t[3] < expires then return 'exhausted' end
  if now >= expires then return 'expired' end
  return 'active'
end

-- Rows held by live reservations (expired ones are dropped when the next hold is made).
local function held(key, now)
  local rows = 0
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', key, '(' .. now, '+inf')) do
    rows = rows + tonumber(string.match(m, ':(%d+)$'))
  end
  return rows
end

local function hold(key, idsKey, rows, now)
  local member = redis.call('INCR', idsKey) .. ':' .. rows
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  redis.call('ZADD', key, now + HOLD_MS, member)
  redis.call('PEXPIRE', key, HOLD_MS + SPARE_MS)
  return member
end

-- Ends a reservation; true when it was live (not expired, not ended before).
local function release(key, member, now)
  local score = redis.call('ZSCORE', key, member)
  redis.call('ZREM', key, member)
  return score ~= false and tonumber(score) > now
end

-- The running total before the window (0 when none); forgets the deliveries before it.
local function baseline(log, now)
  local base = redis.call('ZREVRANGEBYSCORE', log, now - WINDOW_MS, '-inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if #base == 0 then return 0 end
  redis.call('ZREMRANGEBYSCORE', log, '-inf', '(' .. base[2])
  return tonumber(base[1])
end

-- Rows delivered in (now - WINDOW_MS, now].
local function delivered(log, totalKey, now)
  return tonumber(redis.call('GET', totalKey) or '0') - baseline(log, now)
end

-- Counts a delivery of rows > 0; returns the rows delivered in (now - WINDOW_MS, now] with it.
local function record(log, totalKey, rows, now)
  local total = redis.call('INCRBY', totalKey, rows)
  -- Deliveries in the same millisecond are one entry: nothing can tell them apart.
  redis.call('ZREMRANGEBYSCORE', log, now, now)
  redis.call('ZADD', log, now, total)
  return total - baseline(log, now)
end

-- A trial's rows counted: rowsUsed grows, and the trial is exhausted once it reaches TRIAL_ROWS.
local function countTrialRows(key, rows, nowText)
  local used = redis.call('HINCRBY', key, 'rowsUsed', rows)
  if used >= TRIAL_ROWS and redis.call('HEXISTS', key, 'exhaustedMs') == 0 then
    redis.call('HSET', key, 'exhaustedMs', nowText)
  end
end

-- db/row-usage.ts msUntilRowsBelow: when enough of the window's deliveries have aged out.
local function msUntilBelow(log, totalKey, limit, now)
  local floor = tonumber(redis.call('GET', totalKey) or '0') - limit
  local entries = redis.call('ZRANGEBYSCORE', log, '(' .. (now - WINDOW_MS), '+inf', 'WITHSCORES')
  for i = 1, #entries, 2 do
    if tonumber(entries[i]) > floor then return math.max(0, tonumber(entries[i + 1]) + WINDOW_MS - now) end
  end
  return 0
end
`;

/**
 * KEYS: bucket, trial, holds, usage, usage total, hold ids. ARGV: now, capacity, refill/s, cost,
 * kind ("trial" | "budget"; an account without either takes through `TAKES`), budget limit,
 * verified (1/0), rows to reserve (0: none), rows of the page already known (-1: not known).
 * Returns {admitted, tokens, retryAfterMs, fullAtMs, gated, startedMs, rowsUsed, exhaustedMs,
 * reserved, used, msUntilBelow, rows, member, counted}; `gated` = 1 when a trial account was
 * refused before the take. When asked to reserve and stage 3 admits, the reservation is made as
 * open() makes it (RESERVE_TRIAL, RESERVE_BUDGET) and the trial reported is the one it started.
 * When the page is known and the unreserved remainder holds the whole page size asked for (so no
 * reservation would clamp it), its rows are counted at once instead (`counted` = 1, rows = the
 * page's, no member), as the settlement would count them; the trial and usage reported are still
 * those stage 3 decided on, before the count.
 */
const ADMIT = `${PRELUDE}
local now = tonumber(ARGV[1])
local kind = ARGV[5]
local t = {-1, 0, -1}
if kind == 'trial' then
  t = readTrial(KEYS[2])
  if (t[1] >= 0 and trialState(t, now) ~= 'active') or (t[1] < 0 and ARGV[7] ~= '1') then
    return {0, '0', 0, 0, 1, t[1], t[2], t[3], 0, 0, 0, 0, '', 0}
  end
end
local v = take(KEYS[1], now, ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]))
local reserved, used, wait = 0, 0, 0
if kind == 'trial' then
  reserved = held(KEYS[3], now)
elseif kind == 'budget' then
  local limit = tonumber(ARGV[6])
  used = delivered(KEYS[4], KEYS[5], now)
  reserved = held(KEYS[3], now)
  if used >= limit then wait = msUntilBelow(KEYS[4], KEYS[5], limit, now) end
end
local requested = tonumber(ARGV[8])
local known = tonumber(ARGV[9])
local rows, member, counted = 0, '', 0
if v[1] == 1 and requested > 0 then
  if kind == 'trial' then
    local remaining = TRIAL_ROWS - t[2] - reserved
    if remaining > 0 then
      if t[1] < 0 then
        redis.call('HSET', KEYS[2], 'startedMs', ARGV[1], 'rowsUsed', 0)
        t = {now, 0, -1}
      end
      if known >= 0 and requested <= PAGE_ROWS and remaining >= requested then
        if known > 0 then
          countTrialRows(KEYS[2], known, ARGV[1])
          record(KEYS[4], KEYS[5], known, now)
        end
        rows, counted = known, 1
      else
        rows = math.min(requested, PAGE_ROWS, remaining)
        member = hold(KEYS[3], KEYS[6], rows, now)
      end
    end
  elseif kind == 'budget' then
    local remaining = tonumber(ARGV[6]) - used - reserved
    if remaining > 0 then
      if known >= 0 and remaining >= requested then
        if known > 0 then record(KEYS[4], KEYS[5], known, now) end
        rows, counted = known, 1
      else
        rows = math.min(requested, remaining)
        member = hold(KEYS[3], KEYS[6], rows, now)
      end
    end
  end
end
return {v[1], v[2], v[3], v[4], 0, t[1], t[2], t[3], reserved, used, wait, rows, member, counted}
`;

/**
 * Bucket takes of one account without a row allowance, in the order they were asked for.
 * KEYS: the account's buckets. ARGV: (bucket's key index, now, capacity, refill/s, cost) for each
 * take. Returns {admitted, tokens, retryAfterMs, fullAtMs} for each take, one after the other:
 * what `ADMIT` answers first for each, one at a time. Each bucket is read once and written once,
 * its takes worked out in between.
 */
const TAKES = `${PRELUDE}
local buckets, out = {}, {}
for i = 1, #ARGV, 5 do
  local k = tonumber(ARGV[i])
  local b = buckets[k]
  if not b then
    b = readBucket(KEYS[k])
    buckets[k] = b
  end
  local v = spend(b, tonumber(ARGV[i + 1]), ARGV[i + 1], tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3]), tonumber(ARGV[i + 4]))
  for j = 1, 4 do out[#out + 1] = v[j] end
end
for k, b in pairs(buckets) do writeBucket(KEYS[k], b) end
return out
`;
/**
 * KEYS: trial, holds, hold ids. ARGV: now, requested rows.
 * Returns {rows, member, startedMs, rowsUsed, exhaustedMs, reserved}; rows 0 / member "" when nothing was held.
 */
const RESERVE_TRIAL = `${PRELUDE}
local now = tonumber(ARGV[1])
local t = readTrial(KEYS[1])
if t[1] < 0 then
  redis.call('HSET', KEYS[1], 'startedMs', ARGV[1], 'rowsUsed', 0)
  t = {now, 0, -1}
end
local reserved = held(KEYS[2], now)
local rows = math.min(tonumber(ARGV[2]), PAGE_ROWS, TRIAL_ROWS - t[2] - reserved)
if trialState(t, now) == 'expired' or rows <= 0 then return {0, '', t[1], t[2], t[3], reserved} end
return {rows, hold(KEYS[2], KEYS[3], rows, now), t[1], t[2], t[3], reserved}
`;

/**
 * KEYS: holds, hold ids, usage, usage total. ARGV: now, requested rows, limit.
 * Returns {rows, member, used, reserved, msUntilBelow}.
 */
const RESERVE_BUDGET = `${PRELUDE}
local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[3])
local used = delivered(KEYS[3], KEYS[4], now)
local reserved = held(KEYS[1], now)
local remaining = limit - used - reserved
if remaining <= 0 then
  local wait = 0
  if used >= limit then wait = msUntilBelow(KEYS[3], KEYS[4], limit, now) end
  return {0, '', used, reserved, wait}
end
local rows = math.min(tonumber(ARGV[2]), remaining)
return {rows, hold(KEYS[1], KEYS[2], rows, now), used, reserved, 0}
`;

/**
 * KEYS: trial, holds, usage, usage total. ARGV: now, member, held rows, delivered rows.
 * Counts min(delivered, held) only when the hold was live. Returns {live, startedMs, rowsUsed, exhaustedMs, reserved}.
 */
const SETTLE_TRIAL = `${PRELUDE}
local now = tonumber(ARGV[1])
local live = release(KEYS[2], ARGV[2], now)
local rows = 0
if live then rows = math.min(tonumber(ARGV[4]), tonumber(ARGV[3])) end
if rows > 0 and redis.call('EXISTS', KEYS[1]) == 1 then
  countTrialRows(KEYS[1], rows, ARGV[1])
  record(KEYS[3], KEYS[4], rows, now)
end
local t = readTrial(KEYS[1])
return {live and 1 or 0, t[1], t[2], t[3], held(KEYS[2], now)}
`;

/**
 * KEYS: holds, usage, usage total. ARGV: now, member, held rows, delivered rows.
 * An expired hold still counts what was delivered: the budget is exact, the hold was advisory.
 * Returns {live, used, reserved}.
 */
const SETTLE_BUDGET = `${PRELUDE}
local now = tonumber(ARGV[1])
local live = release(KEYS[1], ARGV[2], now)
local rows = math.min(tonumber(ARGV[4]), tonumber(ARGV[3]))
local used
if rows > 0 then used = record(KEYS[2], KEYS[3], rows, now) else used = delivered(KEYS[2], KEYS[3], now) end
return {live and 1 or 0, used, held(KEYS[1], now)}
`;

/** KEYS: usage, usage total. ARGV: now, rows, then more (now, rows) pairs: each recorded in turn. */
const RECORD = `${PRELUDE}
for i = 1, #ARGV, 2 do
  local rows = tonumber(ARGV[i + 1])
  if rows > 0 then record(KEYS[1], KEYS[2], rows, tonumber(ARGV[i])) end
end
return 1
`;

/** KEYS: usage, usage total. ARGV: now, window ms. Read-only: rows delivered in (now - window, now]. */
const ROWS_DELIVERED = `
local total = tonumber(redis.call('GET', KEYS[2]) or '0')
local base = redis.call('ZREVRANGEBYSCORE', KEYS[1], tonumber(ARGV[1]) - tonumber(ARGV[2]), '-inf', 'LIMIT', 0, 1)
if #base == 0 then return total end
return total - tonumber(base[1])
`;

type Reply = (number | string)[];

interface Scripts {
  marqueeAdmit(...args: (string | number)[]): Promise<Reply>;
  /** The number of keys first (it varies). */
  marqueeTakes(...args: (string | number)[]): Promise<Reply>;
  marqueeReserveTrial(...args: (string | number)[]): Promise<Reply>;
  marqueeReserveBudget(...args: (string | number)[]): Promise<Reply>;
  marqueeSettleTrial(...args: (string | number)[]): Promise<Reply>;
  marqueeSettleBudget(...args: (string | number)[]): Promise<Reply>;
  marqueeRecord(...args: (string | number)[]): Promise<number>;
  marqueeRowsDelivered(...args: (string | number)[]): Promise<number>;
}

/** The trial as the scripts report it (-1 = absent). */
function trialOf(accountId: number, startedMs: number, rowsUsed: number, exhaustedMs: number): Trial | undefined {
  if (startedMs < 0) return undefined;
  return { accountId, startedMs, rowsUsed, exhaustedMs: exhaustedMs < 0 ? null : exhaustedMs };
}

export type RowAllowanceSpec = { kind: "trial" } | { kind: "budget"; limit: number } | null;

export interface Admission {
  verdict: BucketVerdict;
  /** A trial account refused before the take (its trial ended, or cannot start unverified): nothing was spent. */
  gated: boolean;
  /** Trial accounts: the trial as it stands (undefined until it starts). */
  trial: Trial | undefined;
  /** Rows held by live reservations of the allowance. */
  reserved: number;
  /** Budget accounts: rows delivered in the rolling window. */
  used: number;
  /** Budget accounts, when used >= limit: ms until enough rows age out. */
  msUntilBelow: number;
  /** The reservation made with the admission when one was asked for and stage 3 admitted. */
  reservation: Reserved | null;
  /**
   * The known page's rows when stage 3 counted them instead of reserving (`admit`'s `known`);
   * `trial` and `used` are as they stood before the count.
   */
  counted: number | null;
}

/** What stage 3 reports beside the verdict for an account without a row allowance. */
const UNMETERED: Readonly<Omit<Admission, "verdict">> = Object.freeze({
  gated: false,
  trial: undefined,
  reserved: 0,
  used: 0,
  msUntilBelow: 0,
  reservation: null,
  counted: null,
});

/** A reservation: `rows` > 0 with its `member`, or rows 0 when nothing could be held. */
export interface Reserved {
  rows: number;
  member: string;
  /** The trial after it started (trial reservations). */
  trial: Trial | undefined;
  /** Rows delivered in the window (budget reservations). */
  used: number;
  /** Rows other requests held, before this hold. */
  reserved: number;
  msUntilBelow: number;
}

export interface Settled {
  live: boolean;
  trial: Trial | undefined;
  used: number;
  reserved: number;
}

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
export class RedisCounters {
  readonly #redis: RedisClient & Scripts;
  readonly #queued = new Map<number, QueuedDeliveries>();
  readonly #takes = new Map<number, QueuedTakes>();

  constructor(redis: RedisClient) {
    const define = (name: keyof Scripts, keys: number, lua: string) =>
      redis.defineCommand(name, { numberOfKeys: keys, lua });
    define("marqueeAdmit", 6, ADMIT);
    redis.defineCommand("marqueeTakes", { lua: TAKES });
    define("marqueeReserveTrial", 3, RESERVE_TRIAL);
    define("marqueeReserveBudget", 4, RESERVE_BUDGET);
    define("marqueeSettleTrial", 4, SETTLE_TRIAL);
    define("marqueeSettleBudget", 3, SETTLE_BUDGET);
    define("marqueeRecord", 2, RECORD);
    define("marqueeRowsDelivered", 2, ROWS_DELIVERED);
    this.#redis = redis as RedisClient & Scripts;
  }

  /**
   * Stage 3: the bucket take with the allowance's check (server/access.ts, authorizeList). With
   * `reserve` rows asked for, the page's reservation too; when the page those rows would give is
   * already known (`known`: its row count), its rows are counted at once if no reservation could
   * clamp it.
   */
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
    if (allowance === null) return { ...UNMETERED, verdict: await this.takeTokens(accountId, spec, cost, nowMs) };
    const kind = allowance.kind;
    const r = await this.#redis.marqueeAdmit(
      COUNTER_KEYS.bucket(accountId, spec.bucket),
      REDIS_KEYS.trial(accountId),
      COUNTER_KEYS.holds(accountId, kind === "budget" ? "budget" : "trial"),
      REDIS_KEYS.usage(accountId),
      REDIS_KEYS.usageTotal(accountId),
      COUNTER_KEYS.holdIds(accountId),
      nowMs,
      spec.capacity,
      String(spec.refillPerSecond),
      cost,
      kind,
      allowance.kind === "budget" ? allowance.limit : 0,
      verified ? 1 : 0,
      reserve,
      known ?? -1,
    );
    const trial = trialOf(accountId, Number(r[5]), Number(r[6]), Number(r[7]));
    const counted = r[13] === 1;
    const reserved = Number(r[8]);
    const used = Number(r[9]);
    const rows = Number(r[11]);
    return {
      verdict: {
        admitted: r[0] === 1,
        tokens: Number(r[1]),
        retryAfterMs: Number(r[2]),
        fullAtMs: Number(r[3]),
      },
      gated: r[4] === 1,
      trial,
      reserved,
      used,
      msUntilBelow: Number(r[10]),
      reservation:
        rows > 0 && !counted ? { rows, member: String(r[12]), trial, used, reserved, msUntilBelow: 0 } : null,
      counted: counted ? rows : null,
    };
  }

  /**
   * The bucket take alone, queued until the end of this turn of the event loop, when each
   * account's takes go out as one script (`flushTakes`) that takes them in the order they were
   * asked for: under load many requests of one account arrive in one turn, and each was a command
   * for the client and for Redis.
   */
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
        for (let i = 0; i < waiters.length; i++) {
          waiters[i].resolve({
            admitted: r[4 * i] === 1,
            tokens: Number(r[4 * i + 1]),
            retryAfterMs: Number(r[4 * i + 2]),
            fullAtMs: Number(r[4 * i + 3]),
          });
        }
      }),
    );
  }

  /** Starts the trial if due and holds at most `requested` rows (clamped to a page and the unreserved remainder). */
  async reserveTrial(accountId: number, requested: number, nowMs: number): Promise<Reserved> {
    const r = await this.#redis.marqueeReserveTrial(
      REDIS_KEYS.trial(accountId),
      COUNTER_KEYS.holds(accountId, "trial"),
      COUNTER_KEYS.holdIds(accountId),
      nowMs,
      requested,
    );
    return {
      rows: Number(r[0]),
      member: String(r[1]),
      trial: trialOf(accountId, Number(r[2]), Number(r[3]), Number(r[4])),
      used: 0,
      reserved: Number(r[5]),
      msUntilBelow: 0,
    };
  }

  /** Holds at most `requested` rows of the budget's unreserved remainder. */
  async reserveBudget(accountId: number, limit: number, requested: number, nowMs: number): Promise<Reserved> {
    const r = await this.#redis.marqueeReserveBudget(
      COUNTER_KEYS.holds(accountId, "budget"),
      COUNTER_KEYS.holdIds(accountId),
      REDIS_KEYS.usage(accountId),
      REDIS_KEYS.usageTotal(accountId),
      nowMs,
      requested,
      limit,
    );
    return {
      rows: Number(r[0]),
      member: String(r[1]),
      trial: undefined,
      used: Number(r[2]),
      reserved: Number(r[3]),
      msUntilBelow: Number(r[4]),
    };
  }

  /** Releases a trial hold and counts min(delivered, held) when it was still live. */
  async settleTrial(accountId: number, hold: Reserved, delivered: number, nowMs: number): Promise<Settled> {
    const r = await this.#redis.marqueeSettleTrial(
      REDIS_KEYS.trial(accountId),
      COUNTER_KEYS.holds(accountId, "trial"),
      REDIS_KEYS.usage(accountId),
      REDIS_KEYS.usageTotal(accountId),
      nowMs,
      hold.member,
      hold.rows,
      delivered,
    );
    return {
      live: r[0] === 1,
      trial: trialOf(accountId, Number(r[1]), Number(r[2]), Number(r[3])),
      used: 0,
      reserved: Number(r[4]),
    };
  }

  /** Releases a budget hold and counts min(delivered, held), live or not. */
  async settleBudget(accountId: number, hold: Reserved, delivered: number, nowMs: number): Promise<Settled> {
    const r = await this.#redis.marqueeSettleBudget(
      COUNTER_KEYS.holds(accountId, "budget"),
      REDIS_KEYS.usage(accountId),
      REDIS_KEYS.usageTotal(accountId),
      nowMs,
      hold.member,
      hold.rows,
      delivered,
    );
    return { live: r[0] === 1, trial: undefined, used: Number(r[1]), reserved: Number(r[2]) };
  }

  /**
   * Every account's delivered rows are recorded, so a budget set later counts the last 24 hours.
   * Queued until the end of this turn of the event loop, when each account's deliveries go out as
   * one script (`flushDeliveries`), deliveries of the same millisecond as one entry as the script
   * would merge them: under load many pages settle in one turn, and each record was a command
   * for the client and for Redis. Resolves once the delivery is written.
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

  /** The portal's view of the trial (also what RedisLedger.readTrial may answer). */
  async readTrial(accountId: number): Promise<Trial | undefined> {
    const [startedMs, rowsUsed, exhaustedMs] = await this.#redis.hmget(
      REDIS_KEYS.trial(accountId),
      "startedMs",
      "rowsUsed",
      "exhaustedMs",
    );
    if (startedMs === null) return undefined;
    return {
      accountId,
      startedMs: Number(startedMs),
      rowsUsed: Number(rowsUsed ?? 0),
      exhaustedMs: exhaustedMs === null ? null : Number(exhaustedMs),
    };
  }

  /** Rows delivered in (nowMs - windowMs, nowMs] (also what RedisLedger.rowsDelivered may answer). */
  async rowsDelivered(accountId: number, windowMs: number, nowMs: number): Promise<number> {
    return Number(
      await this.#redis.marqueeRowsDelivered(
        REDIS_KEYS.usage(accountId),
        REDIS_KEYS.usageTotal(accountId),
        nowMs,
        windowMs,
      ),
    );
  }
}
