/**
 * The list pipeline's access stages (docs/api.md, Listing events, stages 1–3) and the bookkeeping after
 * validation. The list pipeline (server/list/service.ts) calls, in order:
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
 * what it spent" (docs/api.md).
 *
 * Plans and trials: server/limits/grant.ts. Request rate: server/limits/rate.ts. Trial rows
 * and row budgets: server/limits/allowances.ts. Keys and accounts are read from the ledger through
 * the `Access` object's cache (server/limits/cache.ts); the counters live in the process's meter
 * (server/limits/meter.ts), which writes them to the ledger behind the requests. One `Access` is
 * created with the app context and serves every route that takes a key.
 */
import type { Account, KeyRow } from "../db/accounts.ts";
import type { KeyKind } from "../db/contract.ts";
import type { Db } from "../db/driver.ts";
import type { BucketSpec, BucketVerdict } from "../db/rate-buckets.ts";
import type { Clock } from "./clock.ts";
import { ApiError } from "./errors.ts";
import type { RequestScope } from "./handle.ts";
import { bearerToken, digestKey, parseKey } from "./keys.ts";
import { budgetAllowance, type Hold, type RowAllowance, recordDelivery, trialAllowance } from "./limits/allowances.ts";
import { type AccessCache, createAccessCache } from "./limits/cache.ts";
import { type AccessTier, type Grant, resolveGrant } from "./limits/grant.ts";
import { H, PUBLISHED_RATE_LIMIT } from "./limits/headers.ts";
import { ledgerFailure, unavailable, withLedger } from "./limits/ledger.ts";
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
 * The access stages as the list pipeline (server/list/service.ts) and the routes that take a key
 * use them, over either ledger: `Access` below (SQLite: synchronous, counters in the process's
 * meter) or `RedisAccess` (server/ledger/redis-access.ts: counters in Redis, shared by every
 * serving process). Both run the same stages in the same order with the same headers and errors.
 */
export interface AccessControl {
  /**
   * True when authorizeList takes `prepare` (below) to reserve the page's rows in the same ledger
   * step as stage 3. Absent on the SQLite ledger, whose steps cost no round trip.
   */
  readonly prepares?: boolean;
  /** Stage 1: the bearer key's identity, else 401 `invalid_api_key` (503 `policy_unavailable`). */
  authenticate(req: Request): KeyIdentity | Promise<KeyIdentity>;
  /**
   * An authenticated key's account as the ledger holds it (undefined when it has none), through
   * the same cache stage 2 reads; a ledger that cannot answer throws 503 `policy_unavailable`.
   */
  account(accountId: number): Account | undefined | Promise<Account | undefined>;
  /**
   * Stages 1–3 of the list pipeline; throws (or rejects with) the first refusal as an ApiError.
   * `prepare`, when the implementation `prepares`: stages 4–8 run before stage 3's ledger step,
   * given what stage 2 decided; they return the requested page size (and the page's rows when
   * already known) or throw their error, which is thrown only when stages 1–3 pass (the first
   * failure still wins). The page's rows are then reserved with stage 3, or counted with it when
   * the page is known and the remainder holds the whole size asked for; `open` answers without
   * asking the ledger again, and when it returns the size asked for, the caller delivers the
   * known page. Whether or not it calls `prepare`, the caller runs stages 4–8 itself when
   * `prepare` was not called.
   */
  authorizeList(
    scope: RequestScope,
    request: { geo: boolean; prepare?: (terms: ListTerms) => PreparedPage },
  ): ListAccess | Promise<ListAccess>;
  /** Forgets every key and account read (after the ledger was emptied or changed in place). */
  clear(): void;
}

/** What the access stages read and write. */
export interface AccessDeps {
  ledger: Db;
  meter: Meter;
  clock: Clock;
}

const invalidKey = () => new ApiError("invalid_api_key");

/**
 * What stage 2 derives from a key and its account alone: the bucket, its X-RateLimit-Limit, and
 * for a paid plan the grant. Kept beside the cached key row while the cache hands out the same
 * account object (a changed account is a new object), so a request builds none of them.
 */
interface KeyTerms {
  account: Account;
  bucket: BucketSpec;
  limitHeader: string;
  /** Paid plans only, once resolved: it does not depend on the time or a trial. */
  grant: Grant | null;
}

/** Keys, accounts and admission for every route that takes a key; owns the access cache. */
export class Access implements AccessControl {
  readonly #cache: AccessCache;
  /** Dropped with the key rows they belong to (the cache's rows are the keys). */
  readonly #terms = new WeakMap<KeyRow, KeyTerms>();

  constructor(private readonly deps: AccessDeps) {
    this.#cache = createAccessCache(deps.ledger);
  }

  /** Forgets every key and account read (after the ledger was emptied or changed in place). */
  clear(): void {
    this.#cache.clear();
  }

  /**
   * Stage 1: a well-formed, known, unrevoked bearer key, else 401 `invalid_api_key`. A malformed
   * key is refused without a lookup. When the ledger cannot be read: 503 `policy_unavailable`.
   */
  authenticate(req: Request): KeyIdentity {
    const row = this.authenticatedKey(req.headers.get("authorization"));
    return { keyId: row.id, accountId: row.accountId, kind: row.kind };
  }

  /** Stage 1 for the list route: the cached key row itself (no object per request). */
  private authenticatedKey(authorization: string | null): KeyRow {
    const key = bearerToken(authorization);
    if (!key) throw invalidKey();
    const cache = this.#cache;
    let row: KeyRow | undefined;
    try {
      cache.refresh();
      const digest = digestKey(key);
      // A digest the ledger knows is a well-formed key; anything else is checked before a lookup.
      row = cache.knownKey(digest);
      if (!row) {
        if (!parseKey(key)) throw invalidKey();
        row = cache.key(digest);
      }
    } catch (err) {
      throw ledgerFailure("policy_unavailable", err);
    }
    if (!row || row.revokedMs !== null) throw invalidKey();
    return row;
  }

  account(accountId: number): Account | undefined {
    try {
      return this.#cache.account(accountId);
    } catch (err) {
      throw ledgerFailure("policy_unavailable", err);
    }
  }

  private termsOf(key: KeyRow, account: Account): KeyTerms {
    let terms = this.#terms.get(key);
    if (terms?.account === account) return terms;
    // Accounts without a plan are trial accounts or refused below; either way one bucket per account.
    const bucket = bucketFor(account, key.id, account.plan === "none");
    this.#terms.set(key, (terms = { account, bucket, limitHeader: String(bucket.capacity), grant: null }));
    return terms;
  }

  /** Stages 1–3 of the list pipeline; throws the first refusal as an ApiError. */
  authorizeList(scope: RequestScope, request: { geo: boolean }): ImmediateListAccess {
    const { meter, clock } = this.deps;
    const headers = scope.headers;
    // Until the account's bucket is known, the published limit (401s report it too).
    headers[H.rateLimit] = PUBLISHED_RATE_LIMIT[H.rateLimit];
    const key = this.authenticatedKey(scope.header("authorization"));
    // Who asked, for the request's record (server/requests.ts), whatever is decided next.
    scope.accountId = key.accountId;
    scope.keyId = key.id;

    // Stage 2: policy, plan, trial state, email verification.
    const account = this.account(key.accountId);
    if (!account) throw new ApiError("account_not_provisioned", "This key's account has no usable access policy.");
    const trialRow =
      account.plan === "none" ? withLedger("trial_unavailable", () => meter.readTrial(account.id)) : undefined;
    const terms = this.termsOf(key, account);
    headers[H.rateLimit] = terms.limitHeader;
    // A paid plan's refusals (resolveGrant throws them) are never kept: they are re-decided each time.
    const grant =
      account.plan === "none"
        ? resolveGrant(account, trialRow, clock.now())
        : (terms.grant ??= resolveGrant(account, undefined, 0));

    // Stage 3: request rate, then the row budget or the trial's capacity.
    const allowance: RowAllowance | null =
      grant.tier === "trial"
        ? trialAllowance(account.id)
        : grant.rowBudget !== null
          ? budgetAllowance(account.id, grant.rowBudget)
          : null;
    const now = clock.now();
    let verdict: BucketVerdict;
    let refusal: ApiError | null;
    try {
      meter.assertWritable(rateLimitUnavailable);
      verdict = meter.takeTokens(terms.bucket, requestCost(request.geo), now);
      // The units stay spent even when the allowance refuses: the limiter admitted the request.
      // Checked even when the limiter refuses, so a trial's 429 carries its X-Trial-* headers.
      refusal = allowance?.check(meter, now) ?? null;
    } catch (err) {
      throw ledgerFailure("rate_limit_unavailable", err);
    }
    if (allowance?.kind === "trial") Object.assign(headers, allowance.headers);
    if (!verdict.admitted) throw rateLimited(terms.bucket, verdict);
    if (refusal) throw refusal;
    return new AdmittedList(this.deps, scope, account.id, key.id, grant, allowance, verdict);
  }
}

const rateLimitUnavailable = () => unavailable("rate_limit_unavailable");

/** An admitted list request between stage 3 and its response (a class: one object per request). */
class AdmittedList implements ImmediateListAccess {
  readonly horizonMs: number | null;
  readonly polygons: boolean;
  readonly tier: AccessTier;
  #hold: Hold | null = null;
  #opened = false;
  #settled = false;

  constructor(
    private readonly ctx: AccessDeps,
    private readonly scope: RequestScope,
    readonly accountId: number,
    readonly keyId: number,
    grant: Grant,
    private readonly allowance: RowAllowance | null,
    private readonly verdict: BucketVerdict,
  ) {
    this.horizonMs = grant.horizonMs;
    this.polygons = grant.polygons;
    this.tier = grant.tier;
  }

  open(requestedLimit: number): number {
    if (this.#opened) throw new Error("ListAccess.open called twice");
    this.#opened = true;
    const { ctx, allowance } = this;
    if (!allowance) return requestedLimit;
    const code = allowance.kind === "trial" ? "trial_unavailable" : "rate_limit_unavailable";
    const nowMs = ctx.clock.now();
    const meter = ctx.meter;
    const result = withLedger(code, () => {
      meter.assertWritable(() => unavailable(code));
      return allowance.reserve(meter, requestedLimit, nowMs);
    });
    if (allowance.kind === "trial") Object.assign(this.scope.headers, allowance.headers);
    if (result instanceof ApiError) throw result;
    this.#hold = result;
    return result.rows;
  }

  describe(): void {
    if (this.allowance) Object.assign(this.scope.headers, this.allowance.headers);
    setRateCounters(this.scope.headers, this.verdict);
  }

  settle(delivered: number): void {
    if (!this.#opened || this.#settled) return;
    this.#settled = true;
    const { ctx, allowance, scope } = this;
    const hold = this.#hold;
    const nowMs = ctx.clock.now();
    const rows = Math.max(0, Math.floor(delivered));
    if (!allowance || !hold) {
      // Unmetered: usage is recorded for the record (a budget set later counts it); a failure
      // to record never fails the page.
      try {
        recordDelivery(ctx.meter, this.accountId, rows, nowMs);
      } catch (err) {
        ledgerFailure("rate_limit_unavailable", err);
      }
    } else {
      settleHold(ctx, allowance, hold, rows, nowMs);
      Object.assign(scope.headers, allowance.headers);
    }
    // Only now: a page withheld by settleHold (503) reports no request-rate counters.
    setRateCounters(scope.headers, this.verdict);
  }
}

/**
 * Releases the hold and counts the rows. When rows were delivered but cannot be counted (the
 * ledger failed, or a trial reservation expired), the page is withheld: 503, no rows (docs/api.md).
 * settle(0) after a failure never throws, so it cannot mask the route's own error.
 */
function settleHold(ctx: AccessDeps, allowance: RowAllowance, hold: Hold, rows: number, nowMs: number): void {
  const code = allowance.kind === "trial" ? "trial_unavailable" : "rate_limit_unavailable";
  let live: boolean;
  try {
    live = withLedger(code, () => allowance.settle(ctx.meter, hold, rows, nowMs));
  } catch (err) {
    if (rows === 0) return;
    throw err;
  }
  if (!live && rows > 0 && allowance.kind === "trial") throw unavailable("trial_unavailable");
}
