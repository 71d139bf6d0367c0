/**
 * The list pipeline's access stages on a Redis ledger (docs/api.md, Listing events, stages 1–3,
 * and Plans and access): the same stages, order, headers, errors and 503 codes as `Access`
 * (server/access.ts), with keys and accounts read through the `Ledger` seam and every counter
 * decided by one Redis script (server/ledger/redis-counters.ts), so any number of serving
 * processes share each limit exactly.
 *
 * - Keys (by digest) and accounts (by id) are cached per process and all dropped when the
 *   ledger reports an access change (`Ledger.onAccessChange`: within a second, from any process).
 * - Any Redis error or timeout becomes the stage's 503 with Retry-After (server/limits/ledger.ts).
 * - Round trips of an admitted page: stage 3 (the bucket take with the allowance's check), then
 *   the reservation and its settlement for a trial or a row budget, or the delivery's record.
 *   A trial or budget page already known before stage 3 (`PreparedPage.rows`) is counted by
 *   stage 3 itself when the unreserved remainder holds the page size asked for; nothing is
 *   reserved or settled for it.
 * - Test mode's faults are decided before these stages run (server/fault-injection.ts), so a
 *   test-mode server answers through exactly this path.
 */
import { LRUCache } from "lru-cache";
import type { Account, KeyRow } from "../../db/accounts.ts";
import { ACCESS, DAY_MS, TRIAL } from "../../db/contract.ts";
import type { BucketSpec, BucketVerdict } from "../../db/rate-buckets.ts";
import { trialExpiresMs, trialState } from "../../db/trials.ts";
import type { AccessControl, KeyIdentity, ListAccess, ListTerms, PreparedPage } from "../access.ts";
import type { Clock } from "../clock.ts";
import { ApiError } from "../errors.ts";
import type { RequestScope } from "../handle.ts";
import { bearerToken, digestKey, parseKey } from "../keys.ts";
import { budgetExhausted, trialCapacityReserved, trialEnded } from "../limits/allowances.ts";
import { type AccessTier, type Grant, resolveGrant } from "../limits/grant.ts";
import { budgetHeaders, H, PUBLISHED_RATE_LIMIT, seconds, trialHeaders } from "../limits/headers.ts";
import { ledgerFailure, unavailable } from "../limits/ledger.ts";
import { bucketFor, rateLimited, requestCost, setRateCounters } from "../limits/rate.ts";
import type { Ledger } from "./ledger.ts";
import type { RedisCounters, Reserved, RowAllowanceSpec } from "./redis-counters.ts";

export interface RedisAccessDeps {
  ledger: Ledger;
  counters: RedisCounters;
  clock: Clock;
}

/** LRU values cannot be undefined; a box also caches "no such key" answers. */
interface Box<T> {
  value: T | undefined;
}

/** What stage 2 derives from a key and its account alone (as in server/access.ts). */
interface KeyTerms {
  account: Account;
  bucket: BucketSpec;
  limitHeader: string;
  grant: Grant | null;
}

const invalidKey = () => new ApiError("invalid_api_key");

/** What a trial serves (server/limits/grant.ts), known before its state is read. */
const TRIAL_TERMS: ListTerms = { horizonMs: TRIAL.horizonDays * DAY_MS, polygons: TRIAL.polygons };

export class RedisAccess implements AccessControl {
  readonly #keys = new LRUCache<string, Box<KeyRow>>({ max: ACCESS.cacheEntries });
  readonly #accounts = new LRUCache<number, Box<Account>>({ max: ACCESS.cacheEntries });
  readonly #terms = new WeakMap<KeyRow, KeyTerms>();
  /** Moves on every clear, so a lookup that started before a change is not cached after it. */
  #generation = 0;
  readonly #unsubscribe: () => void;
  /** Stages 4–8 run before stage 3's script, which then reserves the page's rows too. */
  readonly prepares = true;

  constructor(private readonly deps: RedisAccessDeps) {
    this.#unsubscribe = deps.ledger.onAccessChange(() => this.clear());
  }

  clear(): void {
    this.#generation++;
    this.#keys.clear();
    this.#accounts.clear();
  }

  /** Stops listening for access changes. */
  close(): void {
    this.#unsubscribe();
  }

  async authenticate(req: Request): Promise<KeyIdentity> {
    const row = await this.authenticatedKey(req.headers.get("authorization"));
    return { keyId: row.id, accountId: row.accountId, kind: row.kind };
  }

  /** Stage 1: a well-formed, known, unrevoked key; a malformed one is refused without a lookup. */
  private async authenticatedKey(authorization: string | null): Promise<KeyRow> {
    const key = bearerToken(authorization);
    if (!key) throw invalidKey();
    const digest = digestKey(key);
    let box = this.#keys.get(digest);
    if (!box) {
      if (!parseKey(key)) throw invalidKey();
      const generation = this.#generation;
      try {
        box = { value: await this.deps.ledger.findKeyByDigest(digest) };
      } catch (err) {
        throw ledgerFailure("policy_unavailable", err);
      }
      if (generation === this.#generation) this.#keys.set(digest, box);
    }
    const row = box.value;
    if (!row || row.revokedMs !== null) throw invalidKey();
    return row;
  }

  async account(id: number): Promise<Account | undefined> {
    let box = this.#accounts.get(id);
    if (!box) {
      const generation = this.#generation;
      try {
        box = { value: await this.deps.ledger.readAccount(id) };
      } catch (err) {
        throw ledgerFailure("policy_unavailable", err);
      }
      if (generation === this.#generation) this.#accounts.set(id, box);
    }
    return box.value;
  }

  private termsOf(key: KeyRow, account: Account): KeyTerms {
    let terms = this.#terms.get(key);
    if (terms?.account === account) return terms;
    const bucket = bucketFor(account, key.id, account.plan === "none");
    this.#terms.set(key, (terms = { account, bucket, limitHeader: String(bucket.capacity), grant: null }));
    return terms;
  }

  async authorizeList(
    scope: RequestScope,
    request: { geo: boolean; prepare?: (terms: ListTerms) => PreparedPage },
  ): Promise<ListAccess> {
    const { clock, counters } = this.deps;
    const headers = scope.headers;
    headers[H.rateLimit] = PUBLISHED_RATE_LIMIT[H.rateLimit];
    const key = await this.authenticatedKey(scope.header("authorization"));
    // Who asked, for the request's record (server/requests.ts), whatever is decided next.
    scope.accountId = key.accountId;
    scope.keyId = key.id;

    // Stage 2: policy, plan, trial state, email verification.
    const account = await this.account(key.accountId);
    if (!account) throw new ApiError("account_not_provisioned", "This key's account has no usable access policy.");
    const trialAccount = account.plan === "none";
    const terms = this.termsOf(key, account);
    let grant: Grant | null = null;
    if (!trialAccount) {
      headers[H.rateLimit] = terms.limitHeader;
      grant = terms.grant ??= resolveGrant(account, undefined, 0);
    } else if (account.hadSubscription) {
      // 402 subscription_required whatever the trial: decided before the script takes any units.
      resolveGrant(account, undefined, clock.now());
    }

    // Stage 3: request rate, then the row budget or the trial's capacity, in one script.
    const allowance: RowAllowanceSpec = trialAccount
      ? { kind: "trial" }
      : grant!.rowBudget !== null
        ? { kind: "budget", limit: grant!.rowBudget }
        : null;
    // Stages 4–8 now, their verdict kept until stage 3 has spoken.
    let prepared: PreparedPage | null = null;
    let invalid: { error: unknown } | null = null;
    if (request.prepare && this.prepares) {
      try {
        prepared = request.prepare(trialAccount ? TRIAL_TERMS : grant!);
      } catch (error) {
        invalid = { error };
      }
    }
    // A metered page's rows are reserved, or counted when the page is known (stage 3's script).
    const page = allowance && prepared ? prepared : null;
    const now = clock.now();
    let admission: Awaited<ReturnType<RedisCounters["admit"]>>;
    try {
      admission = await counters.admit(
        account.id,
        terms.bucket,
        requestCost(request.geo),
        allowance,
        account.verified,
        now,
        page?.limit ?? 0,
        page?.rows,
      );
    } catch (err) {
      // For a trial account the script's first step is stage 2's read of the trial.
      throw ledgerFailure(trialAccount ? "trial_unavailable" : "rate_limit_unavailable", err);
    }
    if (trialAccount) {
      headers[H.rateLimit] = terms.limitHeader;
      // Throws the trial's 402 or the 403 for an unverified account (the script took nothing then).
      grant = resolveGrant(account, admission.trial, now);
    }
    const { verdict, reserved } = admission;
    // Rows counted with the admission are this page's (stage 3 decided on the numbers before them).
    const counted = admission.counted ?? 0;
    let allowanceHeaders: Record<string, string> | null = null;
    let refusal: ApiError | null = null;
    if (allowance?.kind === "trial") {
      const trial = admission.trial;
      const used = trial?.rowsUsed ?? 0;
      allowanceHeaders = trialHeaders(TRIAL.rows - used - reserved - counted, trial ? trialExpiresMs(trial) : null);
      refusal = trialRefusal(used, reserved, allowanceHeaders);
      // Checked even when the limiter refuses, so a trial's 429 carries its X-Trial-* headers.
      Object.assign(headers, allowanceHeaders);
    } else if (allowance?.kind === "budget") {
      allowanceHeaders = budgetHeaders(allowance.limit, allowance.limit - admission.used - reserved - counted);
      refusal = budgetRefusal(allowance.limit, admission.used, reserved, admission.msUntilBelow, allowanceHeaders);
    }
    if (!verdict.admitted) throw rateLimited(terms.bucket, verdict);
    if (refusal) throw refusal;
    if (invalid) throw invalid.error;
    return new RedisAdmittedList(
      this,
      scope,
      account.id,
      key.id,
      grant!,
      allowance,
      allowanceHeaders,
      verdict,
      admission.reservation,
      admission.counted,
    );
  }

  /** For the admitted request: the counters and the clock. */
  get counters(): RedisCounters {
    return this.deps.counters;
  }

  get clock(): Clock {
    return this.deps.clock;
  }
}

/** server/limits/allowances.ts trialAllowance's refusal, from the script's numbers. */
function trialRefusal(used: number, reserved: number, headers: Record<string, string>): ApiError | null {
  if (TRIAL.rows - used - reserved > 0) return null;
  return reserved > 0 && used < TRIAL.rows ? trialCapacityReserved(headers) : trialEnded("exhausted", { ...headers });
}

/** server/limits/allowances.ts budgetAllowance's refusal, from the script's numbers. */
function budgetRefusal(
  limit: number,
  used: number,
  reserved: number,
  msUntilBelow: number,
  headers: Record<string, string>,
): ApiError | null {
  if (limit - used - reserved > 0) return null;
  // Spent: Retry-After is when enough delivered rows age out. Held by requests in flight: soon.
  const retryAfterS = used >= limit ? seconds(msUntilBelow) : ACCESS.budgetHeldRetryAfterS;
  return budgetExhausted(headers, retryAfterS);
}

/** An admitted list request between stage 3 and its response. */
class RedisAdmittedList implements ListAccess {
  readonly horizonMs: number | null;
  readonly polygons: boolean;
  readonly tier: AccessTier;
  #hold: Reserved | null = null;
  #opened = false;
  #settled = false;

  constructor(
    private readonly access: RedisAccess,
    private readonly scope: RequestScope,
    readonly accountId: number,
    readonly keyId: number,
    grant: Grant,
    private readonly allowance: RowAllowanceSpec,
    /** The allowance's headers after the last step (stage 3's check, then open and settle). */
    private allowanceHeaders: Record<string, string> | null,
    private readonly verdict: BucketVerdict,
    /** The reservation stage 3 made with its admission (ListAccess prepared), or null. */
    private readonly reserved: Reserved | null,
    /** The prepared page's rows when stage 3 counted them instead of reserving, or null. */
    private readonly countedRows: number | null,
  ) {
    this.horizonMs = grant.horizonMs;
    this.polygons = grant.polygons;
    this.tier = grant.tier;
  }

  async open(requestedLimit: number): Promise<number> {
    if (this.#opened) throw new Error("ListAccess.open called twice");
    this.#opened = true;
    const { access, allowance } = this;
    if (!allowance || this.countedRows !== null) return requestedLimit;
    const code = allowance.kind === "trial" ? "trial_unavailable" : "rate_limit_unavailable";
    const nowMs = access.clock.now();
    let r: Reserved;
    try {
      r =
        this.reserved ??
        (allowance.kind === "trial"
          ? await access.counters.reserveTrial(this.accountId, requestedLimit, nowMs)
          : await access.counters.reserveBudget(this.accountId, allowance.limit, requestedLimit, nowMs));
    } catch (err) {
      throw ledgerFailure(code, err);
    }
    if (allowance.kind === "trial") {
      const trial = r.trial!;
      const remaining = TRIAL.rows - trial.rowsUsed - r.reserved;
      this.allowanceHeaders = trialHeaders(remaining - Math.max(0, r.rows), trialExpiresMs(trial));
      Object.assign(this.scope.headers, this.allowanceHeaders);
      // Day 7 may have struck since stage 3 looked.
      if (trialState(trial, nowMs) === "expired") throw trialEnded("expired", this.allowanceHeaders);
      if (r.rows <= 0) throw trialRefusal(trial.rowsUsed, r.reserved, this.allowanceHeaders)!;
    } else {
      const remaining = allowance.limit - r.used - r.reserved;
      this.allowanceHeaders = budgetHeaders(allowance.limit, remaining - Math.max(0, r.rows));
      if (r.rows <= 0) {
        throw budgetRefusal(
          allowance.limit,
          r.used,
          r.reserved,
          r.msUntilBelow,
          budgetHeaders(allowance.limit, remaining),
        )!;
      }
    }
    this.#hold = r;
    return r.rows;
  }

  describe(): void {
    if (this.allowanceHeaders) Object.assign(this.scope.headers, this.allowanceHeaders);
    setRateCounters(this.scope.headers, this.verdict);
  }

  settle(delivered: number): void | Promise<void> {
    if (!this.#opened || this.#settled) return;
    this.#settled = true;
    const { access, allowance, scope } = this;
    const hold = this.#hold;
    const nowMs = access.clock.now();
    const rows = Math.max(0, Math.floor(delivered));
    if (this.countedRows !== null) {
      // Counted with stage 3: the page delivered must be the one counted.
      if (rows !== this.countedRows && rows > 0)
        throw new Error(`ListAccess: ${rows} rows delivered, ${this.countedRows} counted`);
      this.describe();
      return;
    }
    if (!allowance || !hold) {
      // Unmetered: usage is recorded for the record (a budget set later counts it), behind the
      // page as the SQLite meter writes it behind the requests: no limit depends on it, a failure
      // to record never fails the page, and not waiting saves the page a round trip.
      access.counters
        .recordDelivery(this.accountId, rows, nowMs)
        .catch((err) => ledgerFailure("rate_limit_unavailable", err));
      setRateCounters(scope.headers, this.verdict);
      return;
    }
    return this.settleHold(allowance, hold, rows, nowMs);
  }

  /** A metered page: the hold released and its rows counted before the page may be sent. */
  private async settleHold(
    allowance: NonNullable<RowAllowanceSpec>,
    hold: Reserved,
    rows: number,
    nowMs: number,
  ): Promise<void> {
    const { access, scope } = this;
    // The page is withheld (503, no rows) when its rows cannot be counted: the ledger failed,
    // or a trial reservation expired (docs/api.md). settle(0) after a failure never throws.
    const code = allowance.kind === "trial" ? "trial_unavailable" : "rate_limit_unavailable";
    let settled: Awaited<ReturnType<RedisCounters["settleTrial"]>>;
    try {
      settled =
        allowance.kind === "trial"
          ? await access.counters.settleTrial(this.accountId, hold, rows, nowMs)
          : await access.counters.settleBudget(this.accountId, hold, rows, nowMs);
    } catch (err) {
      if (rows === 0) return;
      throw ledgerFailure(code, err);
    }
    if (!settled.live && rows > 0 && allowance.kind === "trial") throw unavailable("trial_unavailable");
    this.allowanceHeaders =
      allowance.kind === "trial"
        ? trialHeaders(
            TRIAL.rows - (settled.trial?.rowsUsed ?? 0) - settled.reserved,
            settled.trial ? trialExpiresMs(settled.trial) : null,
          )
        : budgetHeaders(allowance.limit, allowance.limit - settled.used - settled.reserved);
    Object.assign(scope.headers, this.allowanceHeaders);
    // Only now: a page withheld above (503) reports no request-rate counters.
    setRateCounters(scope.headers, this.verdict);
  }
}
