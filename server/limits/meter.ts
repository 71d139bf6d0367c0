/**
 * The counters in the serving process's memory, written to the SQLite ledger behind the requests
 * (docs/architecture.md, The ledger and the meter).
 */
import { ACCESS, TRIAL } from "../../db/contract.ts";
import type { Db } from "../../db/driver.ts";
import type { BucketSpec, BucketState, BucketVerdict } from "../../db/rate-buckets.ts";
import { readBucket, spendTokens, writeBuckets } from "../../db/rate-buckets.ts";
import type { Allowance, UsageEntry } from "../../db/row-usage.ts";
import {
  appendUsage,
  latestTotal,
  logDelivery,
  msUntilRowsBelow,
  pruneUsage,
  readLatestTotal,
  readUsageLog,
  rowsDelivered,
} from "../../db/row-usage.ts";
import { newTrial, readTrial, type Trial, trialState, withRowsAdded, writeTrials } from "../../db/trials.ts";
import { HOT_PATH } from "../../db/tuning.ts";
import { rowsLeft } from "./allowances.ts";
import type { Admission, Counters, MeteredSpec, Reserved, RowAllowanceSpec, Settled } from "./counters.ts";
import { LedgerStale, messageOf, unavailable, withBusyTimeout, withoutFsync } from "./ledger.ts";

/** `log`: the rolling window's deliveries, loaded only for accounts that are row-metered. */
type Usage = { total: number; log: UsageEntry[] | null };
type Reservation = { accountId: number; allowance: Allowance; rows: number; expiresMs: number };

/** The counters in this process, and what the SQLite ledger and tests read of them. */
export type Meter = ReturnType<typeof createMeter>;

const WINDOW = ACCESS.rowBudgetWindowMs;

export function createMeter(ledger: Db, wallClock: () => number = Date.now) {
  const buckets = new Map<string, BucketState>();
  const usage = new Map<number, Usage>();
  const trials = new Map<number, Trial | null>();
  const reservations = new Map<number | string, Reservation>();
  let nextReservation = 1;

  const dirtyBuckets = new Set<string>();
  const dirtyUsage = new Map<number, UsageEntry[]>();
  const dirtyTrials = new Set<number>();
  const prunedAt = new Map<number, number>();
  const dirty = [dirtyBuckets, dirtyUsage, dirtyTrials];
  const idle = [buckets, usage, trials, prunedAt];
  let pendingSinceMs: number | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let failureLogged = false;

  function changed(): void {
    pendingSinceMs ??= wallClock();
    if (!timer) timer = setTimeout(tick, HOT_PATH.meterFlushMs).unref();
  }

  function tick(): void {
    timer = null;
    try {
      flush();
    } catch (err) {
      if (!failureLogged) console.error(`ledger unavailable (usage not yet written): ${messageOf(err)}`);
      failureLogged = true;
      if (!timer) timer = setTimeout(tick, HOT_PATH.meterRetryMs).unref();
    }
  }

  function flush(): void {
    if (pendingSinceMs === null) return;
    const write = () =>
      ledger.transaction(() => {
        writeBuckets(ledger, [...dirtyBuckets].map(bucketRow));
        appendUsage(ledger, [...dirtyUsage]);
        for (const [accountId, entries] of dirtyUsage) {
          // Rows older than the window change no answer: forget them about once a minute.
          const at = entries[entries.length - 1].atMs;
          if (!(at - (prunedAt.get(accountId) ?? -Infinity) < HOT_PATH.meterPruneMs)) {
            pruneUsage(ledger, accountId, WINDOW, at);
            prunedAt.set(accountId, at);
          }
        }
        writeTrials(ledger, [...dirtyTrials].map(trialRow));
      });
    withoutFsync(ledger, () => withBusyTimeout(ledger, HOT_PATH.meterBusyTimeoutMs, write));
    clearAll(dirty);
    pendingSinceMs = null;
    failureLogged = false;
    // Idle entries are reloaded on demand; live reservations are never dropped.
    if (buckets.size + usage.size + trials.size + prunedAt.size > HOT_PATH.meterEntries) clearAll(idle);
  }
  const bucketRow = (name: string) => [name, buckets.get(name)!] as const;
  const trialRow = (accountId: number) => trials.get(accountId)!;

  function usageOf(accountId: number, withLog: boolean): Usage {
    let u = usage.get(accountId);
    if (u && (u.log || !withLog)) return u;
    // The ledger's log must include what this process delivered: write it first.
    if (withLog && dirtyUsage.has(accountId)) flush();
    const log = withLog ? readUsageLog(ledger, accountId) : null;
    u = { total: log ? latestTotal(log) : readLatestTotal(ledger, accountId), log };
    usage.set(accountId, u);
    return u;
  }

  function trialOf(accountId: number): Trial | undefined {
    if (!trials.has(accountId)) trials.set(accountId, readTrial(ledger, accountId) ?? null);
    return trials.get(accountId) ?? undefined;
  }

  function setTrial(trial: Trial): Trial {
    trials.set(trial.accountId, trial);
    dirtyTrials.add(trial.accountId);
    changed();
    return trial;
  }

  /** False when the account has no trial. */
  function addTrialRows(accountId: number, rows: number, nowMs: number): boolean {
    const trial = trialOf(accountId);
    if (trial) setTrial(withRowsAdded(trial, rows, nowMs));
    return trial !== undefined;
  }

  function takeTokens(spec: BucketSpec, cost: number, nowMs: number): BucketVerdict {
    let state = buckets.get(spec.bucket);
    if (!state) {
      state = readBucket(ledger, spec.bucket);
      if (state) buckets.set(spec.bucket, state);
    }
    const { verdict, next } = spendTokens(state, spec, cost, nowMs);
    if (next) {
      buckets.set(spec.bucket, next);
      dirtyBuckets.add(spec.bucket);
      changed();
    }
    return verdict;
  }

  const startTrial = (accountId: number, nowMs: number) => trialOf(accountId) ?? setTrial(newTrial(accountId, nowMs));

  function recordDelivery(accountId: number, rows: number, nowMs: number): void {
    if (rows <= 0) return;
    const u = usageOf(accountId, false);
    // A first delivery leaves nothing older in the ledger to prune for a while.
    if (u.total === 0 && !prunedAt.has(accountId)) prunedAt.set(accountId, nowMs);
    u.total += rows;
    if (u.log) logDelivery(u.log, rows, WINDOW, nowMs);
    const pending = dirtyUsage.get(accountId) ?? [];
    if (!pending.length) dirtyUsage.set(accountId, pending);
    const last = pending.at(-1);
    // Deliveries in the same millisecond are one entry: nothing can tell them apart.
    if (last?.atMs === nowMs) last.totalRows = u.total;
    else pending.push({ totalRows: u.total, atMs: nowMs });
    changed();
  }

  function reservedRows(accountId: number, allowance: Allowance, nowMs: number): number {
    let rows = 0;
    for (const [id, r] of reservations) {
      if (r.expiresMs <= nowMs) reservations.delete(id);
      else if (r.accountId === accountId && r.allowance === allowance) rows += r.rows;
    }
    return rows;
  }

  /** A step's answer, the allowance's numbers now (`trial` as given), in one object of every answer's shape. */
  function answer(accountId: number, allowance: RowAllowanceSpec, trial: Trial | undefined, nowMs: number): Answer {
    let used = 0;
    let msUntilBelow = 0;
    if (allowance?.kind === "budget") {
      const log = usageOf(accountId, true).log!;
      used = rowsDelivered(log, WINDOW, nowMs);
      if (used >= allowance.limit) msUntilBelow = msUntilRowsBelow(log, allowance.limit, WINDOW, nowMs);
    }
    const reserved = allowance ? reservedRows(accountId, allowance.kind, nowMs) : 0;
    return {
      trial,
      used,
      reserved,
      msUntilBelow,
      verdict: NOT_TAKEN,
      gated: false,
      reservation: null,
      counted: null,
      rows: 0,
      hold: 0,
      live: false,
    };
  }

  /** As server/ledger/redis-counters.ts RESERVE: the trial starts if due, the rows a hold may take are held. */
  function hold(accountId: number, allowance: MeteredSpec, requested: number, nowMs: number): Reserved {
    const trial = allowance.kind === "trial" ? startTrial(accountId, nowMs) : undefined;
    const a = answer(accountId, allowance, trial, nowMs);
    const page = trial ? TRIAL.maxRowsPerPage : requested;
    const rows =
      trial && trialState(trial, nowMs) === "expired" ? 0 : Math.min(requested, page, rowsLeft(allowance, a));
    if (rows <= 0) return a;
    a.rows = rows;
    a.hold = nextReservation++;
    const expiresMs = nowMs + ACCESS.reservationTtlMs;
    reservations.set(a.hold, { accountId, allowance: allowance.kind, rows, expiresMs });
    return a;
  }

  /** Counts delivered rows against the allowance (a trial's rows are the account's deliveries too). */
  function count(accountId: number, allowance: MeteredSpec, rows: number, nowMs: number): void {
    if (rows > 0 && (allowance.kind === "budget" || addTrialRows(accountId, rows, nowMs)))
      recordDelivery(accountId, rows, nowMs);
  }

  /** Throws the caller's 503 while the ledger has refused changes for too long. */
  function assertWritable(fail: () => Error): void {
    if (pendingSinceMs === null || wallClock() - pendingSinceMs <= ACCESS.ledgerBusyTimeoutMs) return;
    // One attempt now, so the first request after the lock is gone is served.
    try {
      flush();
    } catch {
      throw fail();
    }
  }

  const counters = {
    prepares: false,
    admit(accountId, spec, cost, allowance, verified, nowMs, reserve = 0, known = null) {
      // The limiter cannot confirm admission while the ledger refuses its changes (docs/api.md).
      assertWritable(rateLimitUnavailable);
      const trial = allowance?.kind === "trial" ? trialOf(accountId) : undefined;
      if (allowance?.kind === "trial" && (trial ? trialState(trial, nowMs) !== "active" : !verified)) {
        const gated = answer(accountId, null, trial, nowMs);
        gated.gated = true;
        return gated;
      }
      const a = answer(accountId, allowance, trial, nowMs);
      a.verdict = takeTokens(spec, cost, nowMs);
      const rows = allowance ? rowsLeft(allowance, a) : 0;
      if (!allowance || !a.verdict.admitted || reserve <= 0 || rows <= 0) return a;
      // As server/ledger/redis-counters.ts ADMIT: the trial reported is the one this step started.
      if (allowance.kind === "trial") a.trial = startTrial(accountId, nowMs);
      if (known !== null && rows >= reserve && (allowance.kind === "budget" || reserve <= TRIAL.maxRowsPerPage)) {
        count(accountId, allowance, known, nowMs);
        a.counted = known;
      } else a.reservation = hold(accountId, allowance, reserve, nowMs);
      return a;
    },
    reserve(accountId, allowance, requested, nowMs) {
      assertWritable(() => new LedgerStale());
      return hold(accountId, allowance, requested, nowMs);
    },
    settle(accountId, allowance, h, delivered, nowMs) {
      const r = reservations.get(h.hold);
      reservations.delete(h.hold);
      const live = r !== undefined && r.expiresMs > nowMs;
      if (live || allowance.kind === "budget") count(accountId, allowance, Math.min(delivered, h.rows), nowMs);
      const a = answer(accountId, allowance, allowance.kind === "trial" ? trialOf(accountId) : undefined, nowMs);
      a.live = live;
      return a;
    },
    record: recordDelivery,
  } satisfies Counters;
  return Object.assign(counters, {
    /** The bucket as it stands now, nothing taken (test mode's account state). */
    peekTokens(spec: BucketSpec, nowMs: number): BucketVerdict {
      const state = buckets.get(spec.bucket) ?? readBucket(ledger, spec.bucket);
      return spendTokens(state, spec, 0, nowMs).verdict;
    },
    readTrial: trialOf,
    startTrial,
    addTrialRows,
    /** Rows delivered to the account in the window (nowMs - windowMs, nowMs]. */
    rowsDelivered: (accountId: number, windowMs: number, nowMs: number) =>
      rowsDelivered(usageOf(accountId, true).log!, windowMs, nowMs),
    reservedRows,
    assertWritable,
    /** Writes every pending change now. Throws when the ledger refuses them (they stay pending). */
    flush,
    /** Forgets everything, pending changes included (`/_test/reset` emptied the ledger). */
    clear(): void {
      clearAll([...dirty, ...idle, reservations]);
      pendingSinceMs = null;
    },
    close(): void {
      if (timer) clearTimeout(timer);
      timer = null;
      try {
        flush();
      } catch (err) {
        console.error(`ledger unavailable at shutdown; the last usage was not written: ${messageOf(err)}`);
      }
    },
  });
}

/** Every step's answer: Admission, Reserved and Settled at once. */
type Answer = Admission & Reserved & Settled;

const NOT_TAKEN: BucketVerdict = { admitted: false, tokens: 0, retryAfterMs: 0, fullAtMs: 0 };
const rateLimitUnavailable = () => unavailable("rate_limit_unavailable");

const clearAll = (maps: { clear(): void }[]) => {
  for (const m of maps) m.clear();
};
