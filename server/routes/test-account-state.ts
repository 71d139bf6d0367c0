/**
 * `GET /_test/accounts/{id}` (docs/api.md, Test mode, Account state): an account as the ledger
 * holds it, with what the request path counts for it, read without spending anything: its trial,
 * the rows delivered in the last 24 hours against its budget, its request-rate buckets and its
 * keys (ids, kinds and display prefixes; never a key). Either ledger answers the same.
 */
import type { Account } from "../../db/accounts.ts";
import { ACCESS, TRIAL } from "../../db/contract.ts";
import { isoUtc } from "../../db/instant.ts";
import { type Trial, trialExpiresMs, trialState } from "../../db/trials.ts";
import type { AppContext } from "../context.ts";
import { effectiveTier, onTrialPath, rowBudgetOf } from "../limits/grant.ts";
import { bucketFor } from "../limits/rate.ts";

const iso = (ms: number | null) => (ms === null ? null : isoUtc(ms));

/** The trial as the account state shows it; null for an account that never had one and is off the trial path. */
function trialView(trial: Trial | undefined, nowMs: number) {
  if (!trial) return { state: "not_started", startedAt: null, expiresAt: null, rowsUsed: 0, rowsLeft: TRIAL.rows };
  return {
    state: trialState(trial, nowMs),
    startedAt: isoUtc(trial.startedMs),
    expiresAt: isoUtc(trialExpiresMs(trial)),
    rowsUsed: trial.rowsUsed,
    rowsLeft: Math.max(0, TRIAL.rows - trial.rowsUsed),
  };
}

export async function readAccountState(ctx: AppContext, account: Account) {
  const { ledger } = ctx;
  const nowMs = ctx.clock.now();
  const keys = await ledger.listKeys(account.id);
  const trial = await ledger.readTrial(account.id);
  const rowsUsed24h = await ledger.rowsDelivered(account.id, ACCESS.rowBudgetWindowMs, nowMs);
  const budget = rowBudgetOf(account);
  // One bucket per key, or one for the account (trials, negotiated rates): as stage 3 picks them.
  const buckets = new Map<string, { keyId: number | null; spec: ReturnType<typeof bucketFor> }>();
  for (const key of keys) {
    if (key.revokedMs !== null) continue;
    const spec = bucketFor(account, key.id, account.plan === "none");
    if (!buckets.has(spec.bucket))
      buckets.set(spec.bucket, { keyId: spec.bucket.startsWith("key:") ? key.id : null, spec });
  }
  const requestRate = [];
  for (const { keyId, spec } of buckets.values()) {
    const verdict = await ledger.readTokens(account.id, spec, nowMs);
    requestRate.push({
      bucket: spec.bucket,
      keyId,
      capacity: spec.capacity,
      refillPerMinute: spec.refillPerSecond * 60,
      tokens: Math.floor(verdict.tokens + 1e-9),
      fullAt: isoUtc(verdict.fullAtMs),
    });
  }
  const onTrial = onTrialPath(account);
  return {
    ...account,
    access: account.plan !== "none" ? effectiveTier(account) : onTrial ? "trial" : null,
    trial: onTrial || trial ? trialView(trial, nowMs) : null,
    rowsUsed24h,
    rowsLeft24h: budget === null ? null : Math.max(0, budget - rowsUsed24h),
    requestRate,
    keys: keys.map((k) => ({
      id: k.id,
      kind: k.kind,
      prefix: k.prefix,
      label: k.label,
      issuedBy: k.issuedBy,
      createdAt: isoUtc(k.createdMs),
      revokedAt: iso(k.revokedMs),
    })),
  };
}
