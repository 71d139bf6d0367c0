/**
 * Sign-in links and sessions of the developer portal (docs/api.md, "Developer portal").
 *
 * The operator's site asks for a link (`marquee accounts sign-in-link ID`) and hands it to the
 * account owner; opening it once starts a session. Link tokens and session ids are random and
 * stored only as SHA-256 digests, like keys. A session belongs to the account's owner at sign-in:
 * once the account is gone or has another owner (its email changed), the session is over.
 */
import type { Account } from "../../db/accounts.ts";
import { PORTAL } from "../../db/contract.ts";
import type { Session } from "../../db/portal.ts";
import { digestKey, randomBase62 } from "../keys.ts";
import type { Ledger } from "../ledger/ledger.ts";

const newToken = () => randomBase62(PORTAL.tokenChars);
const TOKEN_PATTERN = new RegExp(`^[0-9A-Za-z]{${PORTAL.tokenChars}}$`);

export interface IssuedLink {
  url: string;
  expiresAt: string;
}

/** A one-time sign-in URL for the account's owner; undefined when there is no such account. */
export async function createSignInLink(
  ledger: Ledger,
  baseUrl: string,
  accountId: number,
  nowMs: number,
): Promise<IssuedLink | undefined> {
  const account = await ledger.readAccount(accountId);
  if (!account) return undefined;
  const token = newToken();
  const expiresMs = nowMs + PORTAL.signInLinkTtlMs;
  await ledger.insertSignInLink(digestKey(token), { accountId, owner: account.email }, nowMs, expiresMs);
  return { url: `${baseUrl}/developers/sign-in?token=${token}`, expiresAt: new Date(expiresMs).toISOString() };
}

export interface SignedIn {
  /** The cookie value: shown to the browser once, stored only as a digest. */
  sessionId: string;
  session: Session;
}

/**
 * Uses the link and starts a session, or undefined when the link is unknown, used, expired, or
 * its account has since gone or changed owner (the link was meant for someone else). Using the
 * link is the one atomic step: of concurrent opens at most one goes on to start a session.
 */
export async function signIn(ledger: Ledger, token: string, nowMs: number): Promise<SignedIn | undefined> {
  if (!TOKEN_PATTERN.test(token)) return undefined;
  const link = await ledger.useSignInLink(digestKey(token), nowMs);
  if (!link || !ownerStill(await ledger.readAccount(link.accountId), link.owner)) return undefined;
  const sessionId = newToken();
  const session: Session = {
    accountId: link.accountId,
    owner: link.owner,
    csrfToken: newToken(),
    createdMs: nowMs,
    expiresMs: nowMs + PORTAL.sessionTtlMs,
  };
  await ledger.insertSession(digestKey(sessionId), session);
  return { sessionId, session };
}

export interface ActiveSession {
  session: Session;
  account: Account;
  /** The digest the ledger knows the session by (sign-out deletes it). */
  digest: string;
}

/** The session named by the cookie value, when it is live and its account still has the same owner. */
export async function resolveSession(
  ledger: Ledger,
  sessionId: string | null,
  nowMs: number,
): Promise<ActiveSession | undefined> {
  if (!sessionId || !TOKEN_PATTERN.test(sessionId)) return undefined;
  const digest = digestKey(sessionId);
  const session = await ledger.readSession(digest, nowMs);
  if (!session) return undefined;
  const account = await ledger.readAccount(session.accountId);
  if (!account || !ownerStill(account, session.owner)) {
    await ledger.deleteSession(digest);
    return undefined;
  }
  return { session, account, digest };
}

export async function endSession(ledger: Ledger, digest: string): Promise<void> {
  await ledger.deleteSession(digest);
}

const ownerStill = (account: Account | undefined, owner: string): account is Account => account?.email === owner;
