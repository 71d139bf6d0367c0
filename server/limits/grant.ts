/**
 * Stage 2 of the list pipeline (docs/api.md, Listing events): what an authenticated account may do, decided
 * from its plan, policy, verification and trial. Pure: the caller reads the account and the
 * trial, this decides.
 *
 * Precedence where docs/api.md leaves it open (docs/api.md, Plans and access):
 * - an active plan checks the policy first: missing, stale or foreign → 403 account_not_provisioned
 *   (docs/api.md, Plans and access; permanent). Verification does not matter to a paid plan.
 * - no plan and a prior subscription → 402 subscription_required, verified or not (a
 *   previous subscription is not extended by a new trial).
 * - no plan, a trial that started → its state: active, or 402 trial_expired / trial_exhausted,
 *   whichever end came first.
 * - no plan, no trial yet, unverified → 403 email_verification_required; verified → the trial,
 *   which starts only when a request passes validation (ListAccess.open).
 * - a replacement subscription is Basic unless upgraded: plan `legacy` on an account that had a
 *   subscription before (hadSubscription) serves as Basic, since Legacy features are kept only
 *   while the original subscription stays active.
 */
import type { Account } from "../../db/accounts.ts";
import { DAY_MS, type KeyKind, type Plan, TIERS, TRIAL } from "../../db/contract.ts";
import { type Trial, trialExpiresMs, trialState } from "../../db/trials.ts";
import { ApiError } from "../errors.ts";
import { trialEnded } from "./allowances.ts";
import { PUBLISHED_RATE_LIMIT, trialHeaders } from "./headers.ts";

export type PaidTier = Exclude<Plan, "none">;
export type AccessTier = PaidTier | "trial";

export interface Grant {
  tier: AccessTier;
  /** Lookahead from now in ms; null = no tier cap. */
  horizonMs: number | null;
  polygons: boolean;
  /** Rolling 24-hour row budget; null = not row-metered (and always null for trials). */
  rowBudget: number | null;
}

const horizon = (days: number | null) => (days === null ? null : days * DAY_MS);

export const accountNotProvisioned = () =>
  new ApiError(
    "account_not_provisioned",
    "This account has no usable access policy. This is permanent: retrying will not clear it; contact support.",
  );

/** Like every 402, it reports the published rate limit. */
export const subscriptionRequired = () =>
  new ApiError("subscription_required", "This account has no active developer plan. Subscribe to continue.", {
    headers: PUBLISHED_RATE_LIMIT,
  });

export const emailVerificationRequired = () =>
  new ApiError("email_verification_required", "Verify the account's email address to start the trial.");

/** An account without a plan that never had one: it is served the trial, or refused for it. */
export const onTrialPath = (account: Pick<Account, "plan" | "hadSubscription">): boolean =>
  account.plan === "none" && !account.hadSubscription;

/** The rolling 24-hour row budget of an account on a paid plan; null when it has none. */
export function rowBudgetOf(account: Pick<Account, "plan" | "hadSubscription" | "rowBudget">): number | null {
  if (account.plan === "none") return null;
  const tier = effectiveTier(account);
  return tier === "enterprise" ? account.rowBudget : TIERS[tier].rowBudget24h;
}

/** The tier an account on a paid plan is served with. */
export function effectiveTier(account: Pick<Account, "plan" | "hadSubscription">): PaidTier {
  const plan = account.plan as PaidTier;
  return plan === "legacy" && account.hadSubscription ? "basic" : plan;
}

export function resolveGrant(account: Account, trial: Trial | undefined, nowMs: number): Grant {
  if (account.plan !== "none") {
    if (account.policy !== "ok") throw accountNotProvisioned();
    const tier = effectiveTier(account);
    const t = TIERS[tier];
    return {
      tier,
      horizonMs: horizon(t.horizonDays),
      polygons: t.polygons,
      rowBudget: rowBudgetOf(account),
    };
  }
  if (account.hadSubscription) throw subscriptionRequired();
  if (trial) {
    const state = trialState(trial, nowMs);
    if (state !== "active") throw trialEnded(state, trialHeaders(TRIAL.rows - trial.rowsUsed, trialExpiresMs(trial)));
  } else if (!account.verified) {
    throw emailVerificationRequired();
  }
  return { tier: "trial", horizonMs: horizon(TRIAL.horizonDays), polygons: TRIAL.polygons, rowBudget: null };
}

/**
 * Which keys create ticket handoffs (docs/api.md, Ticket handoffs): "a site-issued free Builder
 * key or a paid live key". A `builder` key of any account; a `live` key whose account holds an
 * active paid plan with a usable policy. Not a `legacy` key, nor the `live` key of a trial,
 * unpaid, unverified or unprovisioned account: those get 401 `invalid_api_key`.
 */
export function createsHandoffs(kind: KeyKind, account: Pick<Account, "plan" | "policy"> | undefined): boolean {
  if (kind === "builder") return true;
  return kind === "live" && account !== undefined && account.plan !== "none" && account.policy === "ok";
}
