/**
 * What an account owner may do with keys in the developer portal, and what the portal shows of
 * the account (docs/api.md, "The developer portal"):
 *
 * - create a key, `live` for an account with a paid plan and `builder` otherwise, within two
 *   ceilings: the account's active keys (`key_limit`, 409 `key_limit_reached`) and keys created
 *   by the owner in a rolling hour (429 `key_issuance_rate_limited`). The active-key ceiling is
 *   checked first: waiting does not lift it, so it is the answer that tells the owner what to do.
 *   A refused request creates nothing; revoked keys do not count toward the active ceiling.
 * - revoke one of the account's own keys. The write goes through the ledger connection the
 *   request path reads keys from, whose access cache sees this process's writes on the next
 *   request (server/limits/cache.ts), so the key is refused at once on `/v1/events` and `/mcp`.
 */
import { type Account, type KeyListing, listKeys, revokeKey } from "../../db/accounts.ts";
import { ACCESS, DAY_MS, type KeyKind, PORTAL, TIERS, TRIAL } from "../../db/contract.ts";
import type { Db } from "../../db/driver.ts";
import { countActiveKeys, readAccountKey, readOwnerIssuance } from "../../db/portal.ts";
import { trialExpiresMs, trialState } from "../../db/trials.ts";
import { ApiError } from "../errors.ts";
import { issueKey } from "../keys.ts";
import { effectiveTier } from "../limits/grant.ts";
import type { Meter } from "../limits/meter.ts";
import type { CreatedDeveloperKey, DeveloperAccount, DeveloperKey } from "./schemas.ts";

export type OwnerKey = DeveloperKey;
export type CreatedKey = CreatedDeveloperKey;
export type PortalAccount = DeveloperAccount;
type TrialView = NonNullable<DeveloperAccount["trial"]>;

const iso = (ms: number) => new Date(ms).toISOString();

export const keyKindFor = (account: Account): KeyKind => (account.plan === "none" ? "builder" : "live");

export function toOwnerKey(k: KeyListing): OwnerKey {
  return {
    id: k.id,
    kind: k.kind,
    label: k.label,
    prefix: k.prefix,
    createdAt: iso(k.createdMs),
    revokedAt: k.revokedMs === null ? null : iso(k.revokedMs),
    status: k.revokedMs === null ? "active" : "revoked",
  };
}

export function listOwnerKeys(ledger: Db, accountId: number): OwnerKey[] {
  return listKeys(ledger, accountId).map(toOwnerKey);
}

const portalError = (
  code: "key_limit_reached" | "key_issuance_rate_limited",
  message: string,
  headers: Record<string, string> = {},
) => new ApiError(code, message, { envelope: "portal", headers });

/** Creates a key for the owner within both ceilings, or throws the refusal; one transaction decides. */
export function createOwnerKey(ledger: Db, account: Account, label: string | null, nowMs: number): CreatedKey {
  const kind = keyKindFor(account);
  return ledger.transaction(() => {
    if (countActiveKeys(ledger, account.id) >= account.keyLimit) {
      throw portalError(
        "key_limit_reached",
        `This account already has ${account.keyLimit} active keys, its limit. Revoke a key you no longer use to create another.`,
      );
    }
    const issued = readOwnerIssuance(ledger, account.id, nowMs - PORTAL.issuanceWindowMs);
    if (issued.count >= PORTAL.issuancePerWindow) {
      const retryAfterS = Math.max(1, Math.ceil((issued.oldestMs! + PORTAL.issuanceWindowMs - nowMs) / 1000));
      throw portalError(
        "key_issuance_rate_limited",
        `At most ${PORTAL.issuancePerWindow} keys can be created per hour. Try again in ${retryAfterS} seconds.`,
        { "retry-after": String(retryAfterS) },
      );
    }
    const { id, key, prefix } = issueKey(ledger, account.id, kind, nowMs, { label, issuedBy: "owner" });
    return { id, kind, label, prefix, createdAt: iso(nowMs), key };
  });
}

/** Revokes one of the account's keys (again is a no-op); undefined when it is not the account's. */
export function revokeOwnerKey(ledger: Db, accountId: number, keyId: number, nowMs: number): OwnerKey | undefined {
  const key = readAccountKey(ledger, accountId, keyId);
  if (!key) return undefined;
  if (key.revokedMs === null) revokeKey(ledger, keyId, nowMs);
  return toOwnerKey(readAccountKey(ledger, accountId, keyId)!);
}

export function readOwnerKey(ledger: Db, accountId: number, keyId: number): OwnerKey | undefined {
  const key = readAccountKey(ledger, accountId, keyId);
  return key && toOwnerKey(key);
}

/** The account as its owner sees it: plan, trial or row budget, and where the key ceilings stand. */
export function describeAccount(ledger: Db, meter: Meter, account: Account, nowMs: number): PortalAccount {
  const paid = account.plan !== "none";
  const tier = paid ? effectiveTier(account) : null;
  const budget = tier === null ? null : tier === "enterprise" ? account.rowBudget : TIERS[tier].rowBudget24h;
  return {
    id: account.id,
    email: account.email,
    plan: account.plan,
    tier,
    provisioned: !paid || account.policy === "ok",
    keyKind: keyKindFor(account),
    keyLimit: account.keyLimit,
    activeKeys: countActiveKeys(ledger, account.id),
    keysCreatedThisHour: readOwnerIssuance(ledger, account.id, nowMs - PORTAL.issuanceWindowMs).count,
    issuancePerHour: PORTAL.issuancePerWindow,
    trial: paid || account.hadSubscription ? null : trialView(meter, account.id, nowMs),
    rowBudget:
      budget === null
        ? null
        : {
            limit: budget,
            used: meter.rowsDelivered(account.id, ACCESS.rowBudgetWindowMs, nowMs),
            windowHours: ACCESS.rowBudgetWindowMs / 3_600_000,
          },
  };
}

function trialView(meter: Meter, accountId: number, nowMs: number): TrialView {
  const trial = meter.readTrial(accountId);
  if (!trial) return { state: "not_started", rowsUsed: 0, rowLimit: TRIAL.rows, expiresAt: null, daysLeft: null };
  const expiresMs = trialExpiresMs(trial);
  const state = trialState(trial, nowMs);
  return {
    state,
    rowsUsed: Math.min(trial.rowsUsed, TRIAL.rows),
    rowLimit: TRIAL.rows,
    expiresAt: iso(expiresMs),
    daysLeft: state === "active" ? Math.ceil((expiresMs - nowMs) / DAY_MS) : 0,
  };
}
