/**
 * What an account owner may do with keys in the developer portal, and what the portal shows of
 * the account (docs/api.md, "Developer portal"):
 *
 * - create a key, `live` for an account with a paid plan and `builder` otherwise, within two
 *   ceilings: the account's active keys (`key_limit`, 409 `key_limit_reached`) and keys created
 *   by the owner in a rolling hour (429 `key_issuance_rate_limited`). The active-key ceiling is
 *   checked first: waiting does not lift it, so it is the answer that tells the owner what to do.
 *   A refused request creates nothing; revoked keys do not count toward the active ceiling.
 * - revoke one of the account's own keys. The access caches of every server on the ledger see
 *   the change at once or within a second (server/limits/cache.ts, `Ledger.onAccessChange`), so
 *   the key is refused on `/v1/events` and `/mcp`.
 */
import type { Account, KeyListing } from "../../db/accounts.ts";
import { ACCESS, DAY_MS, type KeyKind, PORTAL, TIERS, TRIAL } from "../../db/contract.ts";
import { type Trial, trialExpiresMs, trialState } from "../../db/trials.ts";
import { ApiError } from "../errors.ts";
import { newKey } from "../keys.ts";
import type { Ledger } from "../ledger/ledger.ts";
import { effectiveTier } from "../limits/grant.ts";
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

export async function listOwnerKeys(ledger: Ledger, accountId: number): Promise<OwnerKey[]> {
  return (await ledger.listKeys(accountId)).map(toOwnerKey);
}

const portalError = (
  code: "key_limit_reached" | "key_issuance_rate_limited",
  message: string,
  headers: Record<string, string> = {},
) => new ApiError(code, message, { envelope: "portal", headers });

const CEILINGS = { perWindow: PORTAL.issuancePerWindow, windowMs: PORTAL.issuanceWindowMs };

/** Creates a key for the owner within both ceilings, or throws the refusal; one atomic ledger step decides. */
export async function createOwnerKey(
  ledger: Ledger,
  account: Account,
  label: string | null,
  nowMs: number,
): Promise<CreatedKey> {
  const kind = keyKindFor(account);
  const { key, stored } = newKey(account.id, kind, { label, issuedBy: "owner" });
  const result = await ledger.insertOwnerKey(stored, { keyLimit: account.keyLimit, ...CEILINGS }, nowMs);
  if (result.created) return { id: result.id, kind, label, prefix: stored.prefix, createdAt: iso(nowMs), key };
  if (result.refused === "key_limit_reached") {
    throw portalError(
      "key_limit_reached",
      `This account already has ${account.keyLimit} active keys, its limit. Revoke a key you no longer use to create another.`,
    );
  }
  const retryAfterS = Math.max(1, Math.ceil((result.oldestMs + PORTAL.issuanceWindowMs - nowMs) / 1000));
  throw portalError(
    "key_issuance_rate_limited",
    `At most ${PORTAL.issuancePerWindow} keys can be created per hour. Try again in ${retryAfterS} seconds.`,
    { "retry-after": String(retryAfterS) },
  );
}

/** Revokes one of the account's keys (again is a no-op); undefined when it is not the account's. */
export async function revokeOwnerKey(
  ledger: Ledger,
  accountId: number,
  keyId: number,
  nowMs: number,
): Promise<OwnerKey | undefined> {
  const key = await ledger.readAccountKey(accountId, keyId);
  if (!key) return undefined;
  if (key.revokedMs === null) await ledger.revokeKey(keyId, nowMs);
  return toOwnerKey((await ledger.readAccountKey(accountId, keyId))!);
}

export async function readOwnerKey(ledger: Ledger, accountId: number, keyId: number): Promise<OwnerKey | undefined> {
  const key = await ledger.readAccountKey(accountId, keyId);
  return key && toOwnerKey(key);
}

/** The account as its owner sees it: plan, trial or row budget, and where the key ceilings stand. */
export async function describeAccount(ledger: Ledger, account: Account, nowMs: number): Promise<PortalAccount> {
  const paid = account.plan !== "none";
  const tier = paid ? effectiveTier(account) : null;
  const budget = tier === null ? null : tier === "enterprise" ? account.rowBudget : TIERS[tier].rowBudget24h;
  const counts = await ledger.ownerKeyCounts(account.id, nowMs - PORTAL.issuanceWindowMs);
  return {
    id: account.id,
    email: account.email,
    plan: account.plan,
    tier,
    provisioned: !paid || account.policy === "ok",
    keyKind: keyKindFor(account),
    keyLimit: account.keyLimit,
    activeKeys: counts.activeKeys,
    keysCreatedThisHour: counts.issued.count,
    issuancePerHour: PORTAL.issuancePerWindow,
    trial: paid || account.hadSubscription ? null : trialView(await ledger.readTrial(account.id), nowMs),
    rowBudget:
      budget === null
        ? null
        : {
            limit: budget,
            used: await ledger.rowsDelivered(account.id, ACCESS.rowBudgetWindowMs, nowMs),
            windowHours: ACCESS.rowBudgetWindowMs / 3_600_000,
          },
  };
}

function trialView(trial: Trial | undefined, nowMs: number): TrialView {
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
