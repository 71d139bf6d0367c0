/**
 * Sign-in links and sessions of the developer portal (docs/api.md, "The developer portal").
 *
 * The operator's site asks for a link (`marquee accounts sign-in-link ID`) and hands it to the
 * account owner; opening it once starts a session. Link tokens and session ids are random and
 * stored only as SHA-256 digests, like keys. A session belongs to the account's owner at sign-in:
 * once the account is gone or has another owner (its email changed), the session is over.
 */
import { type Account, readAccount } from "../../db/accounts.ts";
import { PORTAL } from "../../db/contract.ts";
import type { Db } from "../../db/driver.ts";
import {
  deleteSession,
  insertSession,
  insertSignInLink,
  readSession,
  type Session,
  useSignInLink,
} from "../../db/portal.ts";
import { digestKey, randomBase62 } from "../keys.ts";

const newToken = () => randomBase62(PORTAL.tokenChars);
const TOKEN_PATTERN = new RegExp(`^[0-9A-Za-z]{${PORTAL.tokenChars}}$`);

export interface IssuedLink {
  url: string;
  expiresAt: string;
}

/** A one-time sign-in URL for the account's owner; undefined when there is no such account. */
export function createSignInLink(
  ledger: Db,
  baseUrl: string,
  accountId: number,
  nowMs: number,
): IssuedLink | undefined {
  const account = readAccount(ledger, accountId);
  if (!account) return undefined;
  const token = newToken();
  const expiresMs = nowMs + PORTAL.signInLinkTtlMs;
  insertSignInLink(ledger, digestKey(token), { accountId, owner: account.email }, nowMs, expiresMs);
  return { url: `${baseUrl}/developers/sign-in?token=${token}`, expiresAt: new Date(expiresMs).toISOString() };
}

export interface SignedIn {
  /** The cookie value: shown to the browser once, stored only as a digest. */
  sessionId: string;
  session: Session;
}

/**
 * Uses the link and starts a session, or undefined when the link is unknown, used, expired, or
 * its account has since gone or changed owner (the link was meant for someone else).
 */
export function signIn(ledger: Db, token: string, nowMs: number): SignedIn | undefined {
  if (!TOKEN_PATTERN.test(token)) return undefined;
  return ledger.transaction(() => {
    const link = useSignInLink(ledger, digestKey(token), nowMs);
    if (!link || !ownerStill(readAccount(ledger, link.accountId), link.owner)) return undefined;
    const sessionId = newToken();
    const session: Session = {
      accountId: link.accountId,
      owner: link.owner,
      csrfToken: newToken(),
      createdMs: nowMs,
      expiresMs: nowMs + PORTAL.sessionTtlMs,
    };
    insertSession(ledger, digestKey(sessionId), session);
    return { sessionId, session };
  });
}

export interface ActiveSession {
  session: Session;
  account: Account;
  /** The digest the ledger knows the session by (sign-out deletes it). */
  digest: string;
}

/** The session named by the cookie value, when it is live and its account still has the same owner. */
export function resolveSession(ledger: Db, sessionId: string | null, nowMs: number): ActiveSession | undefined {
  if (!sessionId || !TOKEN_PATTERN.test(sessionId)) return undefined;
  const digest = digestKey(sessionId);
  const session = readSession(ledger, digest, nowMs);
  if (!session) return undefined;
  const account = readAccount(ledger, session.accountId);
  if (!account || !ownerStill(account, session.owner)) {
    deleteSession(ledger, digest);
    return undefined;
  }
  return { session, account, digest };
}

export function endSession(ledger: Db, digest: string): void {
  deleteSession(ledger, digest);
}

const ownerStill = (account: Account | undefined, owner: string): account is Account => account?.email === owner;
