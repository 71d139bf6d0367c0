/**
 * The developer portal's ledger rows (db/ledger-portal.ts): one-time sign-in links, sessions,
 * and the counts behind the owner's key ceilings. Tokens arrive here as SHA-256 digests only.
 */
import type { KeyListing } from "./accounts.ts";
import type { Db } from "./driver.ts";

export interface SignInLink {
  accountId: number;
  owner: string;
}

export interface Session {
  accountId: number;
  owner: string;
  csrfToken: string;
  createdMs: number;
  expiresMs: number;
}

export function insertSignInLink(db: Db, digest: string, link: SignInLink, nowMs: number, expiresMs: number): void {
  // Links past their expiry can never be used again: forget them as new ones are issued.
  db.prepare("DELETE FROM portal_sign_in_links WHERE expires_ms <= $now").run({ now: nowMs });
  db.prepare(
    `INSERT INTO portal_sign_in_links(digest, account_id, owner, created_ms, expires_ms)
     VALUES ($digest, $accountId, $owner, $now, $expiresMs)`,
  ).run({ digest, accountId: link.accountId, owner: link.owner, now: nowMs, expiresMs });
}

/**
 * Marks the link used and returns it, when it exists, is unused and has not expired; else
 * undefined. One conditional UPDATE decides, so concurrent opens sign in at most once.
 */
export function useSignInLink(db: Db, digest: string, nowMs: number): SignInLink | undefined {
  return db
    .prepare<SignInLink>(
      `UPDATE portal_sign_in_links SET used_ms = $now
       WHERE digest = $digest AND used_ms IS NULL AND expires_ms > $now
       RETURNING account_id AS accountId, owner`,
    )
    .get({ digest, now: nowMs });
}

export function insertSession(db: Db, digest: string, session: Session): void {
  db.prepare("DELETE FROM portal_sessions WHERE expires_ms <= $now").run({ now: session.createdMs });
  db.prepare(
    `INSERT INTO portal_sessions(digest, account_id, owner, csrf_token, created_ms, expires_ms)
     VALUES ($digest, $accountId, $owner, $csrfToken, $createdMs, $expiresMs)`,
  ).run({ digest, ...session });
}

/** The session when it exists and has not expired. */
export function readSession(db: Db, digest: string, nowMs: number): Session | undefined {
  return db
    .prepare<Session>(
      `SELECT account_id AS accountId, owner, csrf_token AS csrfToken, created_ms AS createdMs, expires_ms AS expiresMs
       FROM portal_sessions WHERE digest = $digest AND expires_ms > $now`,
    )
    .get({ digest, now: nowMs });
}

export function deleteSession(db: Db, digest: string): void {
  db.prepare("DELETE FROM portal_sessions WHERE digest = $digest").run({ digest });
}

export function countActiveKeys(db: Db, accountId: number): number {
  return db
    .prepare<{ n: number }>("SELECT count(*) AS n FROM api_keys WHERE account_id = $accountId AND revoked_ms IS NULL")
    .get({ accountId })!.n;
}

/** Keys the owner created after `sinceMs` (exclusive), and when the oldest of them was created. */
export function readOwnerIssuance(
  db: Db,
  accountId: number,
  sinceMs: number,
): { count: number; oldestMs: number | null } {
  return db
    .prepare<{ count: number; oldestMs: number | null }>(
      `SELECT count(*) AS count, min(created_ms) AS oldestMs FROM api_keys
       WHERE account_id = $accountId AND issued_by = 'owner' AND created_ms > $sinceMs`,
    )
    .get({ accountId, sinceMs })!;
}

/** One of the account's keys; undefined when the id is unknown or belongs to another account. */
export function readAccountKey(db: Db, accountId: number, keyId: number): KeyListing | undefined {
  return db
    .prepare<KeyListing>(
      `SELECT id, account_id AS accountId, kind, prefix, created_ms AS createdMs, revoked_ms AS revokedMs, label,
         issued_by AS issuedBy
       FROM api_keys WHERE id = $keyId AND account_id = $accountId`,
    )
    .get({ keyId, accountId });
}
