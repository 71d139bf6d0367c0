/**
 * The list pipeline's access stages (CONTRACT §5, stages 1–3) and the bookkeeping after
 * validation. The events route calls, in order:
 *
 *   const access = authorizeList(ctx, scope, { geo })   // 1 key → 2 access → 3 admission; throws ApiError
 *   … stages 4–8: unsupported_pagination, feature gate (access.polygons), parameters,
 *     lookahead (access.horizonMs), cursor match …
 *   const limit = access.open(requestedLimit)           // starts a trial, reserves rows, clamps the page
 *   … page selection and hydration …
 *   access.settle(delivered)                             // records usage, sets success headers
 *
 * Headers every later response carries (X-RateLimit-Limit, the trial's X-Trial-*) go on
 * `scope.headers` as soon as they are known. Headers only a 200 carries (X-RateLimit-Remaining
 * and -Reset, X-RowBudget-*) are added by `settle`, since a rejected request "tells nothing of
 * what it spent" (spec "Limits").
 *
 * Plans and trials: server/limits/grant.ts. Request rate: server/limits/rate.ts. Trial rows
 * and row budgets: server/limits/allowances.ts. Keys and accounts are read from the ledger through
 * a per-process cache (server/limits/cache.ts); the counters live in the process's meter
 * (server/limits/meter.ts), which writes them to the ledger behind the requests.
 */
import type { KeyKind } from "../db/contract.ts";
import type { AppContext } from "./context.ts";
import { ApiError } from "./errors.ts";
import type { RequestScope } from "./handle.ts";
import { bearerToken, digestKey, parseKey } from "./keys.ts";
import { budgetAllowance, recordDelivery, trialAllowance, type Hold, type RowAllowance } from "./limits/allowances.ts";
import { createAccessCache, type AccessCache } from "./limits/cache.ts";
import { resolveGrant, type AccessTier } from "./limits/grant.ts";
import { PUBLISHED_RATE_LIMIT } from "./limits/headers.ts";
import { bucketFor, rateCounters, rateLimited, rateLimitHeader, requestCost } from "./limits/rate.ts";
import { unavailable, withLedger } from "./limits/ledger.ts";

export interface ListAccess {
  accountId: number;
  keyId: number;
  /** Lookahead horizon measured from now, in ms; null = no tier cap. */
  horizonMs: number | null;
  /** Whether the account's tier includes custom polygons. */
  polygons: boolean;
  /** What the request is served as: `trial` or the effective paid tier. */
  tier: AccessTier;
  /** After validation: starts the trial if due, reserves rows, returns the effective page size. */
  open(requestedLimit: number): number;
  /** Records the delivered rows and releases any reservation. Call exactly once after open(). */
  settle(delivered: number): void;
}

export interface KeyIdentity {
  keyId: number;
  accountId: number;
  kind: KeyKind;
}

const caches = new WeakMap<AppContext, AccessCache>();

function cacheOf(ctx: AppContext): AccessCache {
  let cache = caches.get(ctx);
  if (!cache) {
    const created = createAccessCache(ctx.ledger);
    ctx.onLedgerReset.push(() => created.clear());
    caches.set(ctx, (cache = created));
  }
  return cache;
}

const invalidKey = () => new ApiError("invalid_api_key");

/**
 * Stage 1: a well-formed, known, unrevoked bearer key, else 401 `invalid_api_key`. A malformed
 * key is refused without a lookup. When the ledger cannot be read: 503 `policy_unavailable`.
 */
export function authenticate(ctx: AppContext, req: Request): KeyIdentity {
  const key = bearerToken(req);
  if (!key) throw invalidKey();
  const cache = cacheOf(ctx);
  const row = withLedger("policy_unavailable", () => {
    cache.refresh();
    const digest = digestKey(key);
    // A digest the ledger knows is a well-formed key; anything else is checked before a lookup.
    const known = cache.knownKey(digest);
    if (known) return known;
    if (!parseKey(key)) throw invalidKey();
    return cache.key(digest);
  });
  if (!row || row.revokedMs !== null) throw invalidKey();
  return { keyId: row.id, accountId: row.accountId, kind: row.kind };
}

export function authorizeList(ctx: AppContext, scope: RequestScope, request: { geo: boolean }): ListAccess {
  // Until the account's bucket is known, the published limit (401s report it too).
  Object.assign(scope.headers, PUBLISHED_RATE_LIMIT);
  const identity = authenticate(ctx, scope.req);

  // Stage 2: policy, plan, trial state, email verification.
  if (ctx.faults.take("policy_unavailable")) throw unavailable("policy_unavailable");
  const account = withLedger("policy_unavailable", () => cacheOf(ctx).account(identity.accountId));
  if (!account) throw new ApiError("account_not_provisioned", "This key's account has no usable access policy.");
  const meter = ctx.meter;
  const trialRow = account.plan === "none" ? withLedger("trial_unavailable", () => meter.readTrial(account.id)) : undefined;
  // Accounts without a plan are trial accounts or refused below; either way one bucket per account.
  const bucket = bucketFor(account, identity.keyId, account.plan === "none");
  Object.assign(scope.headers, rateLimitHeader(bucket));
  const grant = resolveGrant(account, trialRow, ctx.clock.now());
  const isTrial = grant.tier === "trial";

  // Stage 3: request rate, then the row budget or the trial's capacity.
  const allowance: RowAllowance | null = isTrial
    ? trialAllowance(account.id)
    : grant.rowBudget !== null
      ? budgetAllowance(account.id, grant.rowBudget)
      : null;
  if (ctx.faults.take("rate_limit_unavailable")) throw unavailable("rate_limit_unavailable");
  const now = ctx.clock.now();
  const { verdict, refusal } = withLedger("rate_limit_unavailable", () => {
    meter.assertWritable(() => unavailable("rate_limit_unavailable"));
    const verdict = meter.takeTokens(bucket, requestCost(request.geo), now);
    // The units stay spent even when the allowance refuses: the limiter admitted the request.
    // Checked even when the limiter refuses, so a trial's 429 carries its X-Trial-* headers.
    const refusal = allowance?.check(meter, now) ?? null;
    return { verdict, refusal };
  });
  if (allowance?.kind === "trial") Object.assign(scope.headers, allowance.headers);
  if (!verdict.admitted) throw rateLimited(bucket, verdict);
  if (refusal) throw refusal;

  let hold: Hold | null = null;
  let opened = false;
  let settled = false;
  return {
    accountId: account.id,
    keyId: identity.keyId,
    horizonMs: grant.horizonMs,
    polygons: grant.polygons,
    tier: grant.tier,
    open(requestedLimit) {
      if (opened) throw new Error("ListAccess.open called twice");
      opened = true;
      // The internal_error fault fires here, the last point before rows are selected.
      if (ctx.faults.take("internal_error")) throw new ApiError("internal_error");
      if (!allowance) return requestedLimit;
      const code = allowance.kind === "trial" ? "trial_unavailable" : "rate_limit_unavailable";
      if (allowance.kind === "trial" && ctx.faults.take("trial_unavailable")) throw unavailable("trial_unavailable");
      const nowMs = ctx.clock.now();
      const result = withLedger(code, () => {
        meter.assertWritable(() => unavailable(code));
        return allowance.reserve(meter, requestedLimit, nowMs);
      });
      if (allowance.kind === "trial") Object.assign(scope.headers, allowance.headers);
      if (result instanceof ApiError) throw result;
      hold = result;
      return hold.rows;
    },
    settle(delivered) {
      if (!opened || settled) return;
      settled = true;
      const nowMs = ctx.clock.now();
      const rows = Math.max(0, Math.floor(delivered));
      if (!allowance || !hold) {
        // Unmetered: usage is recorded for the record (a budget set later counts it); a failure
        // to record never fails the page.
        try {
          withLedger("rate_limit_unavailable", () => recordDelivery(meter, account.id, rows, nowMs));
        } catch {
          // withLedger logged it.
        }
      } else {
        settleHold(ctx, allowance, hold, rows, nowMs);
        Object.assign(scope.headers, allowance.headers);
      }
      // Only now: a page withheld by settleHold (503) reports no request-rate counters.
      Object.assign(scope.headers, rateCounters(verdict));
    },
  };
}

/**
 * Releases the hold and counts the rows. When rows were delivered but cannot be counted (the
 * ledger failed, or a trial reservation expired), the page is withheld: 503, no rows (spec).
 * settle(0) after a failure never throws, so it cannot mask the route's own error.
 */
function settleHold(ctx: AppContext, allowance: RowAllowance, hold: Hold, rows: number, nowMs: number): void {
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
