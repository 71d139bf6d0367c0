/**
 * What a refused `GET /v1/events` answers, for test mode's faults (docs/api.md, Test mode, Faults):
 * the error each stage raises for the code, built by the stages' own functions, with the headers
 * a real refusal would carry for the account, and nothing spent (no rate units, rows or trial).
 * The headers come in two parts, as on the real path: the error's own, and those the stages had
 * put on the request's scope (X-RateLimit-Limit, a trial's from stage 3 on), which the renderer
 * adds (server/handle.ts). A refusal that depends on counters answers as they would stand at that
 * moment: `rate_limited` as an empty bucket, `row_budget_exhausted` as a budget spent now,
 * `trial_exhausted` and `trial_capacity_reserved` with no trial rows left. A parameter's code
 * answers with the message its stage gives for a typical bad value.
 */
import type { Account } from "../../db/accounts.ts";
import { ACCESS, DAY_MS, type ListFaultCode, TRIAL } from "../../db/contract.ts";
import { spendTokens } from "../../db/rate-buckets.ts";
import { type Trial, trialExpiresMs } from "../../db/trials.ts";
import { ApiError, isApiError } from "../errors.ts";
import { budgetExhausted, trialCapacityReserved, trialEnded } from "../limits/allowances.ts";
import {
  accountNotProvisioned,
  emailVerificationRequired,
  onTrialPath,
  rowBudgetOf,
  subscriptionRequired,
} from "../limits/grant.ts";
import { budgetHeaders, H, PUBLISHED_RATE_LIMIT, seconds, trialHeaders } from "../limits/headers.ts";
import { unavailable } from "../limits/ledger.ts";
import { bucketFor, rateLimited, requestCost } from "../limits/rate.ts";
import { ListRequest, type ListService } from "./service.ts";

/** Codes that arise only for an account on the trial path. */
const TRIAL_CODES: ReadonlySet<ListFaultCode> = new Set([
  "trial_expired",
  "trial_exhausted",
  "trial_capacity_reserved",
  "trial_unavailable",
]);

/**
 * The codes a request of `account` can be refused with: all but the trial's for an account off
 * the trial path, and `row_budget_exhausted` only where the plan has a budget (nothing else can
 * build their headers as a real refusal carries them).
 */
export function refusableWith(account: Account, codes: readonly ListFaultCode[]): ListFaultCode[] {
  return codes.filter((code) =>
    TRIAL_CODES.has(code)
      ? onTrialPath(account)
      : code === "row_budget_exhausted"
        ? rowBudgetOf(account) !== null
        : true,
  );
}

export interface RefusalFacts {
  account: Account;
  keyId: number;
  /** The account's trial when it is on the trial path and the trial has started. */
  trial: Trial | undefined;
  /** The request has geo parameters (it would cost 5 units). */
  geo: boolean;
  nowMs: number;
}

export interface Refusal {
  error: ApiError;
  /** Headers the stages had put on the request's scope when they refused. */
  scopeHeaders: Record<string, string>;
}

/** Representative requests of the codes stages 4–8 raise, and the terms they are checked under. */
const STAGE_QUERIES: Partial<Record<ListFaultCode, string | ((nowMs: number) => string)>> = {
  unsupported_pagination: "page=2",
  feature_not_in_plan: "polygon=",
  invalid_state: "state=ZZ",
  invalid_date: "starts_after=soon",
  invalid_source: "source=%21",
  invalid_exclude_aggregators: "exclude_aggregators=yes",
  invalid_exclude_sold_out: "exclude_sold_out=yes",
  invalid_include_centroids: "include_centroids=yes",
  invalid_limit: "limit=0",
  invalid_cursor: "cursor=%21",
  invalid_coordinates: "lat=91&lng=0&radius_miles=1",
  invalid_radius: "lat=40&lng=-74&radius_miles=30",
  invalid_polygon: "polygon=40,-74",
  conflicting_geo_filters: "lat=40&lng=-74&radius_miles=1&polygon=40,-74;40.1,-74;40,-74.1",
  invalid_date_range: "starts_after=2030-01-02&starts_before=2030-01-01",
  lookahead_not_in_plan: (nowMs) => `starts_before=${new Date(nowMs + 2 * DAY_MS).toISOString()}`,
};

/** The error stages 4–8 raise for `code`, from the representative request run through them. */
export function stageRefusal(list: ListService, code: ListFaultCode, nowMs: number): ApiError {
  const query = STAGE_QUERIES[code];
  if (query === undefined) throw new Error(`${code} is not raised by stages 4–8`);
  const search = typeof query === "string" ? query : query(nowMs);
  // Polygons allowed except for the polygon gate itself, and a one-day horizon.
  const terms = { horizonMs: DAY_MS, polygons: code !== "feature_not_in_plan" };
  try {
    list.validate(new ListRequest(`?${search}`, undefined, new URLSearchParams(search)), terms, nowMs);
  } catch (err) {
    if (isApiError(err) && err.code === code) return err;
    throw err;
  }
  throw new Error(`?${search} passed stages 4–8`);
}

/** The refusal of `code` for this request (docs/api.md, Test mode, Faults). */
export function listRefusal(list: ListService, code: ListFaultCode, facts: RefusalFacts): Refusal {
  const { account, keyId, trial, nowMs } = facts;
  const bucket = bucketFor(account, keyId, account.plan === "none");
  const limit = { [H.rateLimit]: String(bucket.capacity) };
  const expiresMs = trial ? trialExpiresMs(trial) : null;
  const trialLeft = TRIAL.rows - (trial?.rowsUsed ?? 0);
  // From stage 3 on, a trial account's responses carry the trial's headers.
  const stage3 = onTrialPath(account) ? { ...limit, ...trialHeaders(trialLeft, expiresMs) } : limit;
  const refusal = (error: ApiError, scopeHeaders: Record<string, string>) => ({ error, scopeHeaders });
  switch (code) {
    case "invalid_api_key":
      return refusal(new ApiError("invalid_api_key"), PUBLISHED_RATE_LIMIT);
    case "policy_unavailable":
      return refusal(unavailable(code), PUBLISHED_RATE_LIMIT);
    case "account_not_provisioned":
      return refusal(accountNotProvisioned(), limit);
    case "subscription_required":
      return refusal(subscriptionRequired(), limit);
    case "email_verification_required":
      return refusal(emailVerificationRequired(), limit);
    case "trial_expired":
      return refusal(trialEnded("expired", trialHeaders(trialLeft, expiresMs)), limit);
    case "trial_exhausted":
      return refusal(trialEnded("exhausted", trialHeaders(0, expiresMs)), limit);
    case "rate_limit_unavailable":
      return refusal(unavailable(code), limit);
    case "rate_limited": {
      const empty = spendTokens({ tokens: 0, updatedMs: nowMs }, bucket, requestCost(facts.geo), nowMs);
      return refusal(rateLimited(bucket, empty.verdict), stage3);
    }
    case "row_budget_exhausted": {
      const headers = budgetHeaders(rowBudgetOf(account) ?? 0, 0);
      return refusal(budgetExhausted(headers, seconds(ACCESS.rowBudgetWindowMs)), limit);
    }
    case "trial_capacity_reserved":
      return refusal(trialCapacityReserved(trialHeaders(0, expiresMs)), limit);
    case "trial_unavailable":
      return refusal(unavailable(code), stage3);
    case "internal_error":
      return refusal(new ApiError("internal_error"), stage3);
    default:
      return refusal(stageRefusal(list, code, nowMs), stage3);
  }
}
