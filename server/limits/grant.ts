/** Stage 2, pure: what an account may do, in the order of docs/api.md, Plans and access. */
import type { Account } from "../../db/accounts.ts";
import { DAY_MS, type KeyKind, type Plan, TIERS, TRIAL } from "../../db/contract.ts";
import { type Trial, trialExpiresMs, trialState } from "../../db/trials.ts";
import { refusal, trialEnded } from "./allowances.ts";
import { PUBLISHED_RATE_LIMIT, trialHeaders } from "./headers.ts";

export type PaidTier = Exclude<Plan, "none">;

export interface Grant {
  tier: PaidTier | "trial";
  /** Lookahead from now in ms; null = no tier cap. */
  horizonMs: number | null;
  polygons: boolean;
  /** Rolling 24-hour row budget; null = not row-metered (and always null for trials). */
  rowBudget: number | null;
}

const horizon = (days: number | null) => (days === null ? null : days * DAY_MS);

/** What a trial serves, known before its state is read. */
export const TRIAL_GRANT: Grant = Object.freeze({
  tier: "trial",
  horizonMs: horizon(TRIAL.horizonDays),
  polygons: TRIAL.polygons,
  rowBudget: null,
});

export const accountNotProvisioned = () => refusal("account_not_provisioned");
/** Like every 402, it reports the published rate limit. */
export const subscriptionRequired = () => refusal("subscription_required", PUBLISHED_RATE_LIMIT);
export const emailVerificationRequired = () => refusal("email_verification_required");

/** An account without a plan that never had one: it is served the trial, or refused for it. */
export const onTrialPath = (account: Pick<Account, "plan" | "hadSubscription">): boolean =>
  account.plan === "none" && !account.hadSubscription;

/** The rolling 24-hour row budget of an account on a paid plan; null when it has none. */
export function rowBudgetOf(account: Pick<Account, "plan" | "hadSubscription" | "rowBudget">): number | null {
  if (account.plan === "none") return null;
  const tier = effectiveTier(account);
  return tier === "enterprise" ? account.rowBudget : TIERS[tier].rowBudget24h;
}

/** The tier a paid plan is served with: a replacement subscription serves Legacy as Basic. */
export function effectiveTier(account: Pick<Account, "plan" | "hadSubscription">): PaidTier {
  const plan = account.plan as PaidTier;
  return plan === "legacy" && account.hadSubscription ? "basic" : plan;
}

export function resolveGrant(account: Account, trial: Trial | undefined, nowMs: number): Grant {
  if (account.plan !== "none") {
    if (account.policy !== "ok") throw accountNotProvisioned();
    const tier = effectiveTier(account);
    const t = TIERS[tier];
    return { tier, horizonMs: horizon(t.horizonDays), polygons: t.polygons, rowBudget: rowBudgetOf(account) };
  }
  if (account.hadSubscription) throw subscriptionRequired();
  if (trial) {
    const state = trialState(trial, nowMs);
    if (state !== "active") throw trialEnded(state, trialHeaders(TRIAL.rows - trial.rowsUsed, trialExpiresMs(trial)));
  } else if (!account.verified) throw emailVerificationRequired();
  return TRIAL_GRANT;
}

/** Which keys create ticket handoffs (docs/api.md, Ticket handoffs); any other gets 401 `invalid_api_key`. */
export function createsHandoffs(kind: KeyKind, account: Pick<Account, "plan" | "policy"> | undefined): boolean {
  if (kind === "builder") return true;
  return kind === "live" && account !== undefined && account.plan !== "none" && account.policy === "ok";
}
