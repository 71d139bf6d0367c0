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
 * Headers decided here (rate-limit counters, trial and row-budget headers) go on
 * `scope.headers`, which both the success response and any later error carry.
 *
 * This first version authenticates the key only; plans, trials, rate limits and row budgets
 * slot in behind the same interface.
 */
import { findKeyByDigest } from "../db/accounts.ts";
import type { AppContext } from "./context.ts";
import { ApiError } from "./errors.ts";
import type { RequestScope } from "./handle.ts";
import { bearerToken, digestKey, parseKey } from "./keys.ts";

export interface ListAccess {
  accountId: number;
  keyId: number;
  /** Lookahead horizon measured from now, in ms; null = no tier cap. */
  horizonMs: number | null;
  /** Whether the account's tier includes custom polygons. */
  polygons: boolean;
  /** After validation: starts the trial if due, reserves rows, returns the effective page size. */
  open(requestedLimit: number): number;
  /** Records the delivered rows and releases any reservation. Call exactly once after open(). */
  settle(delivered: number): void;
}

export interface KeyIdentity {
  keyId: number;
  accountId: number;
  kind: string;
}

/** Stage 1: a well-formed, known, unrevoked bearer key, else 401 `invalid_api_key`. */
export function authenticate(ctx: AppContext, req: Request): KeyIdentity {
  const key = bearerToken(req);
  if (!key || !parseKey(key)) throw new ApiError("invalid_api_key");
  const row = findKeyByDigest(ctx.ledger, digestKey(key));
  if (!row || row.revokedMs !== null) throw new ApiError("invalid_api_key");
  return { keyId: row.id, accountId: row.accountId, kind: row.kind };
}

export function authorizeList(ctx: AppContext, scope: RequestScope, _request: { geo: boolean }): ListAccess {
  const identity = authenticate(ctx, scope.req);
  return {
    accountId: identity.accountId,
    keyId: identity.keyId,
    horizonMs: null,
    polygons: true,
    open: (requestedLimit) => requestedLimit,
    settle: () => {},
  };
}
