/**
 * Stages 1–3 of every route that takes a key, and a list request's open and settle, once for both
 * ledgers (docs/architecture.md, The ledger and the meter; its headers: The list path).
 */
import type { Account, KeyRow } from "../db/accounts.ts";
import type { KeyKind } from "../db/contract.ts";
import type { Db } from "../db/driver.ts";
import type { BucketSpec } from "../db/rate-buckets.ts";
import { trialState } from "../db/trials.ts";
import type { Clock } from "./clock.ts";
import { ApiError } from "./errors.ts";
import type { RequestScope } from "./handle.ts";
import { bearerToken, digestKey, parseKey } from "./keys.ts";
import { allowanceHeaders, allowanceRefusal, trialEnded } from "./limits/allowances.ts";
import { type AccessSource, createAccessCache, sqliteAccessSource } from "./limits/cache.ts";
import type { Admission, Counters, Maybe, MeteredSpec, Reserved, Settled } from "./limits/counters.ts";
import { type Grant, resolveGrant, TRIAL_GRANT } from "./limits/grant.ts";
import { H, PUBLISHED_RATE_LIMIT } from "./limits/headers.ts";
import { ledgerFailure, type UnavailableCode, unavailable } from "./limits/ledger.ts";
import type { Meter } from "./limits/meter.ts";
import { bucketFor, rateLimited, requestCost, setRateCounters } from "./limits/rate.ts";

/** What stages 4–8 need of the access decision. */
export type ListTerms = Pick<Grant, "horizonMs" | "polygons">;

/** What stages 4–8 hand to stage 3 (`prepare`): the page size asked for, and its rows when already known. */
export type PreparedPage = { limit: number; rows: number | null };

/** A list request admitted by stages 1–3. */
export type ListAccess = Pick<AdmittedList, keyof ListTerms | "open" | "settle" | "describe">;

/** The SQLite ledger's ListAccess: open and settle answer at once. */
export type ImmediateListAccess = Omit<ListAccess, "open" | "settle"> & {
  open(n: number): number;
  settle(n: number): void;
};

export type KeyIdentity = { keyId: number; accountId: number; kind: KeyKind };

/** The stages as routes use them: `authenticate` is stage 1, `account` stage 2's cached read. */
export type AccessControl = Pick<AccessStages, "prepares" | "authenticate" | "account" | "authorizeList" | "clear">;

/** `prepare`: stages 4–8 run before stage 3's step (docs/redis-ledger.md, The request path on Redis). */
type ListRequest = { geo: boolean; prepare?: (terms: ListTerms) => PreparedPage };

const invalidKey = () => new ApiError("invalid_api_key");
const notProvisioned = () => new ApiError("account_not_provisioned", "This key's account has no usable access policy.");
const TRIAL_SPEC: MeteredSpec = Object.freeze({ kind: "trial" });
/** `prepare` threw nothing. */
const VALID = Symbol("valid");

/** Stage 2's bucket, X-RateLimit-Limit and a paid plan's grant (time- and trial-free), kept per account object. */
type KeyTerms = { account: Account; bucket: BucketSpec; limit: string; grant?: Grant; allowance: MeteredSpec | null };

/** Keys, accounts and admission for every route that takes a key, over one cache and one set of counters. */
export class AccessStages implements AccessControl {
  /** True when authorizeList takes `prepare`: a round trip fewer on Redis. */
  readonly prepares: boolean;
  readonly #cache;
  /** Dropped with the cache's key rows they belong to. */
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
  readonly clear = () => this.#cache.clear();

  /** Stage 1: the bearer key's identity, else 401 `invalid_api_key` (503 `policy_unavailable`). */
  async authenticate(req: Request): Promise<KeyIdentity> {
    const r = await this.authenticatedKey(req.headers.get("authorization"));
    return { keyId: r.id, accountId: r.accountId, kind: r.kind };
  }

  /** A well-formed, known, unrevoked key; a malformed one is refused without a lookup. */
  private authenticatedKey(authorization: string | null): Maybe<KeyRow> {
    const key = bearerToken(authorization);
    if (!key) throw invalidKey();
    let row: Maybe<KeyRow | undefined>;
    try {
      this.#cache.refresh();
      const digest = digestKey(key);
      // A digest the cache knows is a well-formed key; any other is checked before a lookup.
      row = this.#cache.knownKey(digest) ?? (parseKey(key) ? this.#cache.key(digest) : undefined);
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
    const allowance = account.plan === "none" ? TRIAL_SPEC : null;
    terms = { account, bucket, limit: String(bucket.capacity), grant: undefined, allowance };
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
    scope.headers[H.rateLimit] = terms.limit;
    const trialAccount = account.plan === "none";
    // A paid plan's refusals (resolveGrant throws them) are never kept: they are re-decided each time.
    // A trial account with a past subscription: 402 whatever the trial, before anything is taken.
    if (trialAccount && account.hadSubscription) resolveGrant(account, undefined, this.clock.now());
    if (!trialAccount && !terms.grant) {
      const grant = resolveGrant(account, undefined, 0);
      terms.allowance = grant.rowBudget === null ? null : { kind: "budget", limit: grant.rowBudget };
      terms.grant = grant;
    }
    const { bucket, allowance } = terms;
    let prepared: PreparedPage | null = null;
    let invalid: unknown = VALID;
    if (request.prepare && this.prepares) {
      try {
        prepared = request.prepare(trialAccount ? TRIAL_GRANT : terms.grant!);
      } catch (error) {
        invalid = error;
      }
    }
    const page = allowance && prepared;
    const now = this.clock.now();
    const cost = requestCost(request.geo);
    // For a trial account the step's first read is stage 2's read of the trial.
    const fail = FAIL[trialAccount ? "trial_unavailable" : "rate_limit_unavailable"];
    let a: Maybe<Admission>;
    try {
      a = this.counters.admit(account.id, bucket, cost, allowance, account.verified, now, page?.limit, page?.rows);
    } catch (err) {
      return fail(err);
    }
    if (a instanceof Promise) return a.then((x) => this.decide(scope, terms, x, invalid, now), fail);
    return this.decide(scope, terms, a, invalid, now);
  }

  /** Stage 3's verdict from the counters' numbers: the request rate first, then the allowance. */
  private decide(scope: RequestScope, terms: KeyTerms, a: Admission, invalid: unknown, now: number) {
    const { account, allowance } = terms;
    // A trial account: its 402, or the 403 for an unverified account (the counters took nothing then).
    const grant = terms.grant ?? resolveGrant(account, a.trial, now);
    // Rows counted with the admission are this page's (stage 3 decided on the numbers before them).
    const headers = allowance && allowanceHeaders(allowance, a, a.counted ?? 0);
    const refusal = allowance && allowanceRefusal(allowance, a, headers!);
    // Even when the limiter refuses, so a trial's 429 carries its X-Trial-* headers.
    if (allowance?.kind === "trial") Object.assign(scope.headers, headers);
    if (!a.verdict.admitted) throw rateLimited(terms.bucket, a.verdict);
    if (refusal) throw refusal;
    if (invalid !== VALID) throw invalid;
    return new AdmittedList(this, scope, account.id, allowance, headers, a, grant.horizonMs, grant.polygons);
  }
}

/** The SQLite ledger's access: keys and accounts read on the ledger's connection, counters in the meter. */
export class Access extends AccessStages {
  constructor(deps: { ledger: Db; meter: Meter; clock: Clock }) {
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

/** A ledger step's failure (thrown or rejected) as each stage's 503 (server/limits/ledger.ts). */
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
class AdmittedList {
  #hold: Reserved | null;
  #opened = false;
  #settled = false;

  constructor(
    private readonly stages: AccessStages,
    private readonly scope: RequestScope,
    private readonly accountId: number,
    private readonly allowance: MeteredSpec | null,
    /** The allowance's headers after the last step (stage 3's check, then open and settle). */
    private headers: Record<string, string> | null,
    private readonly admission: Admission,
    readonly horizonMs: number | null,
    readonly polygons: boolean,
  ) {
    this.#hold = admission.reservation;
  }

  private get fail() {
    return FAIL[this.allowance?.kind === "trial" ? "trial_unavailable" : "rate_limit_unavailable"];
  }

  /** After validation: starts the trial if due, reserves rows, returns the effective page size. */
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
      return this.fail(err);
    }
    if (r instanceof Promise) return r.then((x) => this.held(allowance, x, nowMs), this.fail);
    return this.held(allowance, r, nowMs);
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

  /** For HEAD, instead of open and settle: the headers a 200 would carry, nothing started or counted. */
  describe(): void {
    if (this.headers) Object.assign(this.scope.headers, this.headers);
    setRateCounters(this.scope.headers, this.admission.verdict);
  }

  /** Once after open(): counts the delivered rows; settle(0) after a failure never throws, so it cannot mask it. */
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
      // Unmetered: recorded behind the page (a budget set later counts it); a failure never fails the page.
      try {
        stages.counters.record(this.accountId, rows, nowMs);
      } catch (err) {
        ledgerFailure("rate_limit_unavailable", err);
      }
      return this.describe();
    }
    // The page is withheld (503) when its rows cannot be counted: the ledger failed, or a trial
    // hold lapsed (docs/api.md, Trials).
    const fail = rows > 0 ? this.fail : ignore;
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
