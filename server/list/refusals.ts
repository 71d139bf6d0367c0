/**
 * What a refused `GET /v1/events` answers for test mode's faults (docs/api.md, "Faults"): the error each stage raises,
 * built by the stages' own functions, with the headers the stages had put on the request's scope (the renderer adds
 * them, server/handle.ts), counters taken as they would stand at that refusal, and nothing spent.
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

/** The codes `account` can be refused with: `trial_` ones only on the trial path, `row_budget_exhausted` with a budget. */
export const refusableWith = (account: Account, codes: readonly ListFaultCode[]): ListFaultCode[] =>
  codes.filter((c) =>
    c.startsWith("trial_") ? onTrialPath(account) : c !== "row_budget_exhausted" || rowBudgetOf(account) !== null,
  );

export interface RefusalFacts {
  account: Account;
  keyId: number;
  /** The account's trial when it is on the trial path and the trial has started. */
  trial: Trial | undefined;
  /** The request has geo parameters (it would cost 5 units). */
  geo: boolean;
  nowMs: number;
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
function stageRefusal(list: ListService, code: ListFaultCode, nowMs: number): ApiError {
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

/** The refusal of `code` for this request, and the headers the stages had put on its scope. */
export function listRefusal(list: ListService, code: ListFaultCode, facts: RefusalFacts) {
  const { account, keyId, trial, nowMs } = facts;
  const bucket = bucketFor(account, keyId, account.plan === "none");
  const limit = { [H.rateLimit]: String(bucket.capacity) };
  const expiresMs = trial ? trialExpiresMs(trial) : null;
  const trialLeft = TRIAL.rows - (trial?.rowsUsed ?? 0);
  // From stage 3 on, a trial account's responses carry the trial's headers.
  const stage3 = onTrialPath(account) ? { ...limit, ...trialHeaders(trialLeft, expiresMs) } : limit;
  const refusals: Partial<Record<ListFaultCode, () => [ApiError, Record<string, string>]>> = {
    invalid_api_key: () => [new ApiError("invalid_api_key"), PUBLISHED_RATE_LIMIT],
    policy_unavailable: () => [unavailable("policy_unavailable"), PUBLISHED_RATE_LIMIT],
    account_not_provisioned: () => [accountNotProvisioned(), limit],
    subscription_required: () => [subscriptionRequired(), limit],
    email_verification_required: () => [emailVerificationRequired(), limit],
    trial_expired: () => [trialEnded("expired", trialHeaders(trialLeft, expiresMs)), limit],
    trial_exhausted: () => [trialEnded("exhausted", trialHeaders(0, expiresMs)), limit],
    rate_limit_unavailable: () => [unavailable("rate_limit_unavailable"), limit],
    rate_limited: () => {
      const empty = spendTokens({ tokens: 0, updatedMs: nowMs }, bucket, requestCost(facts.geo), nowMs);
      return [rateLimited(bucket, empty.verdict), stage3];
    },
    row_budget_exhausted: () => [
      budgetExhausted(budgetHeaders(rowBudgetOf(account) ?? 0, 0), seconds(ACCESS.rowBudgetWindowMs)),
      limit,
    ],
    trial_capacity_reserved: () => [trialCapacityReserved(trialHeaders(0, expiresMs)), limit],
    trial_unavailable: () => [unavailable("trial_unavailable"), stage3],
    internal_error: () => [new ApiError("internal_error"), stage3],
  };
  const [error, scopeHeaders] = refusals[code]?.() ?? [stageRefusal(list, code, nowMs), stage3];
  return { error, scopeHeaders };
}
