/**
 * Accounts and keys in the ledger. Keys are stored only as SHA-256 digests.
 */
import { type KeyKind, type Plan, PORTAL, type PolicyState } from "./contract.ts";
import type { Db } from "./driver.ts";

export interface AccountFields {
  email: string;
  plan: Plan;
  verified: boolean;
  hadSubscription: boolean;
  rowBudget: number | null;
  rateSustained: number | null;
  rateBurst: number | null;
  policy: PolicyState;
  /** Active keys the owner may hold (docs/api.md, "Developer portal"). */
  keyLimit: number;
}

export interface Account extends AccountFields {
  id: number;
  createdMs: number;
  updatedMs: number;
}

export interface KeyRow {
  id: number;
  accountId: number;
  kind: KeyKind;
  prefix: string;
  createdMs: number;
  revokedMs: number | null;
}

/** Who created a key: the operator (CLI, test mode) or the account owner in the portal. */
export type KeyIssuer = "operator" | "owner";

/** A key as listings show it: the request path's row plus what only people read. */
export interface KeyListing extends KeyRow {
  label: string | null;
  issuedBy: KeyIssuer;
}

export const ACCOUNT_DEFAULTS: AccountFields = {
  email: "",
  plan: "none",
  verified: true,
  hadSubscription: false,
  rowBudget: null,
  rateSustained: null,
  rateBurst: null,
  policy: "ok",
  keyLimit: PORTAL.defaultKeyLimit,
};

const ACCOUNT_COLUMNS = `id, email, plan, verified, had_subscription AS hadSubscription, row_budget AS rowBudget,
  rate_sustained AS rateSustained, rate_burst AS rateBurst, policy, key_limit AS keyLimit, created_ms AS createdMs, updated_ms AS updatedMs`;

const toRow = (f: AccountFields) => ({
  email: f.email,
  plan: f.plan,
  verified: f.verified ? 1 : 0,
  hadSubscription: f.hadSubscription ? 1 : 0,
  rowBudget: f.rowBudget,
  rateSustained: f.rateSustained,
  rateBurst: f.rateBurst,
  policy: f.policy,
  keyLimit: f.keyLimit,
});

export function createAccount(db: Db, fields: Partial<AccountFields>, nowMs: number): number {
  const f = { ...ACCOUNT_DEFAULTS, ...fields };
  const { lastInsertRowid } = db
    .prepare(
      `INSERT INTO accounts(email, plan, verified, had_subscription, row_budget, rate_sustained, rate_burst, policy,
         key_limit, created_ms, updated_ms)
       VALUES ($email, $plan, $verified, $hadSubscription, $rowBudget, $rateSustained, $rateBurst, $policy, $keyLimit,
         $now, $now)`,
    )
    .run({ ...toRow(f), now: nowMs });
  return Number(lastInsertRowid);
}

type AccountRow = Omit<Account, "verified" | "hadSubscription"> & { verified: number; hadSubscription: number };

const fromRow = (row: AccountRow): Account => ({
  ...row,
  verified: Boolean(row.verified),
  hadSubscription: Boolean(row.hadSubscription),
});

export function readAccount(db: Db, id: number): Account | undefined {
  const row = db.prepare<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $id`).get({ id });
  return row && fromRow(row);
}

/** Applies the given fields; returns the updated account, or undefined when it does not exist. */
export function updateAccount(db: Db, id: number, fields: Partial<AccountFields>, nowMs: number): Account | undefined {
  const current = readAccount(db, id);
  if (!current) return undefined;
  const f = { ...current, ...stripUndefined(fields) };
  // Ending a paid plan leaves a prior subscription behind: no new trial, and a later plan is a
  // replacement subscription (docs/api.md, Plans and access). An explicit value still wins.
  if (current.plan !== "none" && f.plan === "none" && fields.hadSubscription === undefined) f.hadSubscription = true;
  db.prepare(
    `UPDATE accounts SET email=$email, plan=$plan, verified=$verified, had_subscription=$hadSubscription,
       row_budget=$rowBudget, rate_sustained=$rateSustained, rate_burst=$rateBurst, policy=$policy, key_limit=$keyLimit,
       updated_ms=$now
     WHERE id = $id`,
  ).run({ ...toRow(f), now: nowMs, id });
  return readAccount(db, id);
}

export interface KeyOrigin {
  label?: string | null;
  issuedBy?: KeyIssuer;
}

export function insertKey(
  db: Db,
  accountId: number,
  kind: KeyKind,
  digest: string,
  prefix: string,
  nowMs: number,
  origin: KeyOrigin = {},
): number {
  const { lastInsertRowid } = db
    .prepare(
      `INSERT INTO api_keys(account_id, kind, digest, prefix, created_ms, label, issued_by)
       VALUES ($accountId, $kind, $digest, $prefix, $now, $label, $issuedBy)`,
    )
    .run({
      accountId,
      kind,
      digest,
      prefix,
      now: nowMs,
      label: origin.label ?? null,
      issuedBy: origin.issuedBy ?? "operator",
    });
  return Number(lastInsertRowid);
}

/** Marks a key revoked; returns false when there is no such key. Revoking twice keeps the first time. */
export function revokeKey(db: Db, keyId: number, nowMs: number): boolean {
  const { changes } = db
    .prepare("UPDATE api_keys SET revoked_ms = coalesce(revoked_ms, $now) WHERE id = $id")
    .run({ id: keyId, now: nowMs });
  return changes > 0;
}

const KEY_COLUMNS = "id, account_id AS accountId, kind, prefix, created_ms AS createdMs, revoked_ms AS revokedMs";

export function listKeys(db: Db, accountId: number): KeyListing[] {
  return db
    .prepare<KeyListing>(
      `SELECT ${KEY_COLUMNS}, label, issued_by AS issuedBy FROM api_keys WHERE account_id = $accountId ORDER BY id`,
    )
    .all({ accountId });
}

export function findKeyByDigest(db: Db, digest: string): KeyRow | undefined {
  return db.prepare<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE digest = $digest`).get({ digest });
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

// ---- the operator's listings (docs/operations.md, Accounts and keys) ---------------------------

export interface AccountFilter {
  /** The whole address, in any case. */
  email?: string;
  plan?: Plan;
}

/** Accounts in id order, those matching every given filter. */
export function listAccounts(db: Db, filter: AccountFilter = {}): Account[] {
  return db
    .prepare<AccountRow>(
      `SELECT ${ACCOUNT_COLUMNS} FROM accounts
       WHERE ($email IS NULL OR lower(email) = lower($email)) AND ($plan IS NULL OR plan = $plan)
       ORDER BY id`,
    )
    .all({ email: filter.email ?? null, plan: filter.plan ?? null })
    .map(fromRow);
}

/** Every account's keys, in id order. */
export function listAllKeys(db: Db): KeyListing[] {
  return db.prepare<KeyListing>(`SELECT ${KEY_COLUMNS}, label, issued_by AS issuedBy FROM api_keys ORDER BY id`).all();
}
