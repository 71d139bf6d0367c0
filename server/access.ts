/**
 * The access stages of every route that takes a key (docs/api.md, Listing events, stages 1–3,
 * and Plans and access), once for both ledgers: keys and accounts through a cache
 * (server/limits/cache.ts), every counter through the `Counters` interface
 * (server/limits/counters.ts): the process's meter on the SQLite ledger (every step answers at
 * once, so the list path stays synchronous) or Redis (server/ledger/redis-access.ts; steps answer
 * with promises). The list pipeline (server/list/service.ts) calls, in order:
 *
 *   const access = ctx.access.authorizeList(scope, { geo })   // 1 key → 2 access → 3 admission; throws ApiError
 *   … stages 4–8: unsupported_pagination, feature gate (access.polygons), parameters,
 *     lookahead (access.horizonMs), cursor match …
 *   const limit = access.open(requestedLimit)           // starts a trial, reserves rows, clamps the page
 *   … page selection and hydration …
 *   access.settle(delivered)                             // records usage, sets success headers
 *
 * Headers every later response carries (X-RateLimit-Limit, the trial's X-Trial-*) go on
 * `scope.headers` as soon as they are known. Headers only a 200 carries (X-RateLimit-Remaining
 * and -Reset, X-RowBudget-*) are added by `settle`, since a rejected request "tells nothing of
 * what it spent" (docs/api.md). Any ledger failure becomes the stage's 503 with Retry-After
 * (server/limits/ledger.ts). Test mode's faults are decided before these stages run
 * (server/fault-injection.ts), so they spend nothing here.
 *
 * Plans and trials: server/limits/grant.ts. Request rate: server/limits/rate.ts. Trial rows and
 * row budgets: server/limits/allowances.ts.
 */
import type { Account, KeyRow } from "../db/accounts.ts";
import { DAY_MS, type KeyKind, TRIAL } from "../db/contract.ts";
import type { Db } from "../db/driver.ts";
import type { BucketSpec, BucketVerdict } from "../db/rate-buckets.ts";
import { trialState } from "../db/trials.ts";
import type { Clock } from "./clock.ts";
import { ApiError } from "./errors.ts";
import type { RequestScope } from "./handle.ts";
import { bearerToken, digestKey, parseKey } from "./keys.ts";
import { allowanceHeaders, allowanceRefusal, trialEnded } from "./limits/allowances.ts";
import { type AccessCache, type AccessSource, createAccessCache, sqliteAccessSource } from "./limits/cache.ts";
import type {
  Admission,
  Counters,
  Maybe,
  MeteredSpec,
  Reserved,
  RowAllowanceSpec,
  Settled,
} from "./limits/counters.ts";
import { type AccessTier, type Grant, resolveGrant } from "./limits/grant.ts";
import { H, PUBLISHED_RATE_LIMIT } from "./limits/headers.ts";
import { ledgerFailure, type UnavailableCode, unavailable } from "./limits/ledger.ts";
import type { Meter } from "./limits/meter.ts";
import { bucketFor, rateLimited, requestCost, setRateCounters } from "./limits/rate.ts";

/** What stages 4–8 need of the access decision. */
export type ListTerms = Pick<ListAccess, "horizonMs" | "polygons">;

/** What stages 4–8 hand to stage 3's ledger step (AccessControl.authorizeList's `prepare`). */
export interface PreparedPage {
  /** The page size asked for. */
  limit: number;
  /** The rows of the page that size gives, when it is known before anything is reserved; else null. */
  rows: number | null;
}

export interface ListAccess {
  accountId: number;
  keyId: number;
  /** Lookahead horizon measured from now, in ms; null = no tier cap. */
  horizonMs: number | null;
  /** Whether the account's tier includes custom polygons. */
  polygons: boolean;
  /** What the request is served as: `trial` or the effective paid tier. */
  tier: AccessTier;
  /**
   * After validation: starts the trial if due, reserves rows, returns the effective page size.
   * A number at once on the SQLite ledger; a promise when the ledger must be asked (Redis).
   */
  open(requestedLimit: number): number | Promise<number>;
  /**
   * Records the delivered rows and releases any reservation. Call exactly once after open().
   * settle(0) after a failure never throws (or rejects), so it cannot mask the route's own error.
   */
  settle(delivered: number): void | Promise<void>;
  /**
   * Instead of open() and settle(), for HEAD: the headers a 200 would carry as things stand,
   * with nothing started, reserved or counted beyond the request-rate units already taken.
   */
  describe(): void;
}

/** The SQLite ledger's ListAccess: open and settle answer at once. */
export interface ImmediateListAccess extends ListAccess {
  open(requestedLimit: number): number;
  settle(delivered: number): void;
}

export interface KeyIdentity {
  keyId: number;
  accountId: number;
  kind: KeyKind;
}

/**
 * The access stages as the list pipeline and the routes that take a key use them (either ledger):
 * `authenticate` is stage 1, `account` the cached read stage 2 makes, `authorizeList` stages 1–3.
 */
export type AccessControl = Pick<AccessStages, "prepares" | "authenticate" | "account" | "authorizeList" | "clear">;

/**
 * `prepare`, when the counters take it (`prepares`): stages 4–8 run before stage 3's ledger step,
 * given what stage 2 decided; they return the requested page size (and the page's rows when
 * already known) or throw their error, which is thrown only when stages 1–3 pass (the first
 * failure still wins). The page's rows are then reserved with stage 3, or counted with it when
 * the page is known and the remainder holds the whole size asked for; `open` answers without
 * asking the ledger again, and when it returns the size asked for, the caller delivers the known
 * page. The caller runs stages 4–8 itself when `prepare` was not called.
 */
type ListRequest = { geo: boolean; prepare?: (terms: ListTerms) => PreparedPage };

const invalidKey = () => new ApiError("invalid_api_key");
const notProvisioned = () => new ApiError("account_not_provisioned", "This key's account has no usable access policy.");
const TRIAL_SPEC: MeteredSpec = Object.freeze({ kind: "trial" });
/** What a trial serves (server/limits/grant.ts), known before its state is read. */
const TRIAL_TERMS: ListTerms = { horizonMs: TRIAL.horizonDays * DAY_MS, polygons: TRIAL.polygons };

/**
 * What stage 2 derives from a key and its account alone: the bucket, its X-RateLimit-Limit, and
 * for a paid plan the grant and its allowance. Kept beside the cached key row while the cache
 * hands out the same account object (a changed account is a new object), so a request builds none.
 */
interface KeyTerms {
  account: Account;
  bucket: BucketSpec;
  limitHeader: string;
  /** Paid plans only, once resolved: it does not depend on the time or a trial. */
  grant: Grant | null;
  allowance: RowAllowanceSpec;
}

/** Keys, accounts and admission for every route that takes a key, over one cache and one set of counters. */
export class AccessStages implements AccessControl {
  /** True when authorizeList takes `prepare` (ListRequest): a round trip fewer on Redis. */
  readonly prepares: boolean;
  readonly #cache: AccessCache;
  /** Dropped with the key rows they belong to (the cache's rows are the keys). */
  readonly #terms = new WeakMap<KeyRow, KeyTerms>();

  constructor(
    source: AccessSource,
    readonly counters: Counters,
    readonly clock: Clock,
  ) {
    this.#cache = createAccessCache(source);
    this.prepares = counters.prepares;
  }

  /** Forgets every key and account read (after the ledger was emptied or changed in place). */
  clear(): void {
    this.#cache.clear();
  }

  /** Stage 1: the bearer key's identity, else 401 `invalid_api_key` (503 `policy_unavailable`). */
  authenticate(req: Request): Maybe<KeyIdentity> {
    const row = this.authenticatedKey(req.headers.get("authorization"));
    const identity = (r: KeyRow): KeyIdentity => ({ keyId: r.id, accountId: r.accountId, kind: r.kind });
    return row instanceof Promise ? row.then(identity) : identity(row);
  }

  /** Stage 1: a well-formed, known, unrevoked key; a malformed one is refused without a lookup. */
  private authenticatedKey(authorization: string | null): Maybe<KeyRow> {
    const key = bearerToken(authorization);
    if (!key) throw invalidKey();
    const cache = this.#cache;
    let row: Maybe<KeyRow | undefined>;
    try {
      cache.refresh();
      const digest = digestKey(key);
      // A digest the cache knows is a well-formed key; anything else is checked before a lookup.
      row = cache.knownKey(digest);
      if (!row) {
        if (!parseKey(key)) throw invalidKey();
        row = cache.key(digest);
      }
    } catch (err) {
      throw ledgerFailure("policy_unavailable", err);
    }
    return row instanceof Promise ? row.then(usableKey, FAIL.policy_unavailable) : usableKey(row);
  }

  /** A key's account through stage 2's cache (undefined when none); 503 `policy_unavailable` when unreadable. */
  account(accountId: number): Maybe<Account | undefined> {
    let account: Maybe<Account | undefined>;
    try {
      account = this.#cache.account(accountId);
    } catch (err) {
      return FAIL.policy_unavailable(err);
    }
    return account instanceof Promise ? account.catch(FAIL.policy_unavailable) : account;
  }

  private termsOf(key: KeyRow, account: Account): KeyTerms {
    let terms = this.#terms.get(key);
    if (terms?.account === account) return terms;
    // Accounts without a plan are trial accounts or refused below; either way one bucket per account.
    const bucket = bucketFor(account, key.id, account.plan === "none");
    terms = { account, bucket, limitHeader: String(bucket.capacity), grant: null, allowance: null };
    if (account.plan === "none") terms.allowance = TRIAL_SPEC;
    this.#terms.set(key, terms);
    return terms;
  }

  /** Stages 1–3 of the list pipeline; throws (or rejects with) the first refusal as an ApiError. */
  authorizeList(scope: RequestScope, request: ListRequest): Maybe<ListAccess> {
    // Until the account's bucket is known, the published limit (401s report it too).
    scope.headers[H.rateLimit] = PUBLISHED_RATE_LIMIT[H.rateLimit];
    const key = this.authenticatedKey(scope.header("authorization"));
    if (key instanceof Promise) return key.then((k) => this.withKey(scope, request, k));
    return this.withKey(scope, request, key);
  }

  private withKey(scope: RequestScope, request: ListRequest, key: KeyRow): Maybe<ListAccess> {
    // Who asked, for the request's record (server/requests.ts), whatever is decided next.
    scope.accountId = key.accountId;
    scope.keyId = key.id;
    const account = this.account(key.accountId);
    if (account instanceof Promise) return account.then((a) => this.admit(scope, request, key, a));
    return this.admit(scope, request, key, account);
  }

  /** Stage 2 (what needs no counter), then stage 3's one counter step. */
  private admit(scope: RequestScope, request: ListRequest, key: KeyRow, account: Account | undefined) {
    if (!account) throw notProvisioned();
    const terms = this.termsOf(key, account);
    scope.headers[H.rateLimit] = terms.limitHeader;
    const trialAccount = account.plan === "none";
    // A paid plan's refusals (resolveGrant throws them) are never kept: they are re-decided each time.
    // A trial account with a past subscription: 402 whatever the trial, before anything is taken.
    if (trialAccount) {
      if (account.hadSubscription) resolveGrant(account, undefined, this.clock.now());
    } else if (!terms.grant) {
      const grant = resolveGrant(account, undefined, 0);
      terms.allowance = grant.rowBudget === null ? null : { kind: "budget", limit: grant.rowBudget };
      terms.grant = grant;
    }
    const allowance = terms.allowance;
    // Stages 4–8 now when the counters take the page with stage 3, their verdict kept until stage 3 has spoken.
    let prepared: PreparedPage | null = null;
    let invalid: { error: unknown } | null = null;
    if (request.prepare && this.prepares) {
      try {
        prepared = request.prepare(trialAccount ? TRIAL_TERMS : terms.grant!);
      } catch (error) {
        invalid = { error };
      }
    }
    const page = allowance && prepared ? prepared : null;
    const now = this.clock.now();
    // For a trial account the step's first read is stage 2's read of the trial.
    const fail = FAIL[trialAccount ? "trial_unavailable" : "rate_limit_unavailable"];
    let admission: Maybe<Admission>;
    try {
      const { counters } = this;
      const cost = requestCost(request.geo);
      admission = counters.admit(
        account.id,
        terms.bucket,
        cost,
        allowance,
        account.verified,
        now,
        page?.limit,
        page?.rows,
      );
    } catch (err) {
      return fail(err);
    }
    if (admission instanceof Promise)
      return admission.then((a) => this.decide(scope, key, terms, a, invalid, now), fail);
    return this.decide(scope, key, terms, admission, invalid, now);
  }

  /** Stage 3's verdict from the counters' numbers: the request rate first, then the allowance. */
  private decide(
    scope: RequestScope,
    key: KeyRow,
    terms: KeyTerms,
    admission: Admission,
    invalid: { error: unknown } | null,
    now: number,
  ): AdmittedList {
    const { account, allowance } = terms;
    // A trial account: its 402, or the 403 for an unverified account (the counters took nothing then).
    const grant = terms.grant ?? resolveGrant(account, admission.trial, now);
    let headers: Record<string, string> | null = null;
    let refusal: ApiError | null = null;
    if (allowance) {
      // Rows counted with the admission are this page's (stage 3 decided on the numbers before them).
      headers = allowanceHeaders(allowance, admission, admission.counted ?? 0);
      refusal = allowanceRefusal(allowance, admission, headers);
      // Even when the limiter refuses, so a trial's 429 carries its X-Trial-* headers.
      if (allowance.kind === "trial") Object.assign(scope.headers, headers);
    }
    if (!admission.verdict.admitted) throw rateLimited(terms.bucket, admission.verdict);
    if (refusal) throw refusal;
    if (invalid) throw invalid.error;
    return new AdmittedList(this, scope, account.id, key.id, grant, allowance, headers, admission);
  }
}

/** The SQLite ledger's access: keys and accounts read on the ledger's connection, counters in the meter. */
export interface AccessDeps {
  ledger: Db;
  meter: Meter;
  clock: Clock;
}

export class Access extends AccessStages {
  constructor(deps: AccessDeps) {
    super(sqliteAccessSource(deps.ledger), deps.meter, deps.clock);
  }

  override authorizeList(scope: RequestScope, request: ListRequest): ImmediateListAccess {
    return super.authorizeList(scope, request) as ImmediateListAccess;
  }
}

function usableKey(row: KeyRow | undefined): KeyRow {
  if (!row || row.revokedMs !== null) throw invalidKey();
  return row;
}

/** A ledger step's failure (thrown or rejected) as each stage's 503 (server/limits/ledger.ts); settle(0) ignores it. */
const failAs =
  (code: UnavailableCode) =>
  (err: unknown): never => {
    throw ledgerFailure(code, err);
  };
const FAIL = {
  policy_unavailable: failAs("policy_unavailable"),
  rate_limit_unavailable: failAs("rate_limit_unavailable"),
  trial_unavailable: failAs("trial_unavailable"),
};

const ignore = () => {};

/** An admitted list request between stage 3 and its response (a class: one object per request). */
class AdmittedList implements ListAccess {
  readonly horizonMs: number | null;
  readonly polygons: boolean;
  readonly tier: AccessTier;
  readonly #verdict: BucketVerdict;
  #hold: Reserved | null;
  #opened = false;
  #settled = false;

  constructor(
    private readonly stages: AccessStages,
    private readonly scope: RequestScope,
    readonly accountId: number,
    readonly keyId: number,
    grant: Grant,
    private readonly allowance: RowAllowanceSpec,
    /** The allowance's headers after the last step (stage 3's check, then open and settle). */
    private headers: Record<string, string> | null,
    private readonly admission: Admission,
  ) {
    this.horizonMs = grant.horizonMs;
    this.polygons = grant.polygons;
    this.tier = grant.tier;
    this.#verdict = admission.verdict;
    this.#hold = admission.reservation;
  }

  private get code(): UnavailableCode {
    return this.allowance?.kind === "trial" ? "trial_unavailable" : "rate_limit_unavailable";
  }

  open(requestedLimit: number): Maybe<number> {
    if (this.#opened) throw new Error("ListAccess.open called twice");
    this.#opened = true;
    const { allowance, stages } = this;
    if (!allowance || this.admission.counted !== null) return requestedLimit;
    const nowMs = stages.clock.now();
    // A reservation made with stage 3 is judged as one made now.
    if (this.#hold) return this.held(allowance, this.#hold, nowMs);
    let r: Maybe<Reserved>;
    try {
      r = stages.counters.reserve(this.accountId, allowance, requestedLimit, nowMs);
    } catch (err) {
      return FAIL[this.code](err);
    }
    return r instanceof Promise
      ? r.then((x) => this.held(allowance, x, nowMs), FAIL[this.code])
      : this.held(allowance, r, nowMs);
  }

  private held(allowance: MeteredSpec, r: Reserved, nowMs: number): number {
    this.headers = allowanceHeaders(allowance, r, Math.max(0, r.rows));
    if (allowance.kind === "trial") {
      Object.assign(this.scope.headers, this.headers);
      // Day 7 may have struck since stage 3 looked.
      if (trialState(r.trial!, nowMs) === "expired") throw trialEnded("expired", this.headers);
    }
    if (r.rows <= 0) throw allowanceRefusal(allowance, r, allowanceHeaders(allowance, r))!;
    this.#hold = r;
    return r.rows;
  }

  describe(): void {
    if (this.headers) Object.assign(this.scope.headers, this.headers);
    setRateCounters(this.scope.headers, this.#verdict);
  }

  settle(delivered: number): Maybe<void> {
    if (!this.#opened || this.#settled) return;
    this.#settled = true;
    const { allowance, stages, admission } = this;
    const hold = this.#hold;
    const nowMs = stages.clock.now();
    const rows = Math.max(0, Math.floor(delivered));
    if (admission.counted !== null) {
      // Counted with stage 3: the page delivered must be the one counted.
      if (rows !== admission.counted && rows > 0)
        throw new Error(`ListAccess: ${rows} rows delivered, ${admission.counted} counted`);
      return this.describe();
    }
    if (!allowance || !hold) {
      // Unmetered: usage is recorded for the record (a budget set later counts it), behind the
      // page: no limit depends on it, and a failure to record never fails the page.
      try {
        stages.counters.record(this.accountId, rows, nowMs);
      } catch (err) {
        ledgerFailure("rate_limit_unavailable", err);
      }
      return this.describe();
    }
    // The page is withheld (503, no rows) when its rows cannot be counted: the ledger failed, or
    // a trial reservation lapsed (docs/api.md). settle(0) after a failure never throws.
    const fail = rows > 0 ? FAIL[this.code] : ignore;
    let settled: Maybe<Settled>;
    try {
      settled = stages.counters.settle(this.accountId, allowance, hold, rows, nowMs);
    } catch (err) {
      return fail(err);
    }
    if (settled instanceof Promise) return settled.then((x) => this.settled(allowance, x, rows), fail);
    this.settled(allowance, settled, rows);
  }

  private settled(allowance: MeteredSpec, s: Settled, rows: number): void {
    if (!s.live && rows > 0 && allowance.kind === "trial") throw unavailable("trial_unavailable");
    this.headers = allowanceHeaders(allowance, s);
    // Only now: a page withheld above (503) reports no request-rate counters.
    this.describe();
  }
}
