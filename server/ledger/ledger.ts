/**
 * The ledger seam (docs/architecture.md, "The ledger and the meter"): everything the routes, the portal, test
 * mode and the CLI ask of the ledger, as whole operations, with two implementations:
 *
 * - `SqliteLedger` (server/ledger/sqlite.ts): the SQLite file beside the replica, owned by one
 *   `marquee serve` (the default);
 * - `RedisLedger` (server/ledger/redis.ts): a Redis server shared by any number of processes
 *   (`--ledger redis://…`).
 *
 * Every method is asynchronous, so both implementations fit one signature; the SQLite one
 * answers at once. Each operation that must be exact under concurrency is one atomic step in
 * the implementation (one SQLite transaction, one Redis script): the handoff attempt window, the
 * once-only Continue, the single-use sign-in link, the owner's key ceilings.
 *
 * The request path's counters (token buckets, trials, row budgets and their reservations) are
 * not here: the list route's access stages run on `AccessControl` (server/access.ts for SQLite,
 * server/ledger/redis-access.ts for Redis), which read keys and accounts through this seam.
 *
 * Failures: a method rejects with the implementation's error (SQLite's, or a Redis connection
 * error or timeout); callers turn it into their stage's 503 (server/limits/ledger.ts).
 */
import type { Account, AccountFields, AccountFilter, KeyListing, KeyOrigin, KeyRow } from "../../db/accounts.ts";
import type { KeyKind } from "../../db/contract.ts";
import type { Handoff, Redemption } from "../../db/handoffs.ts";
import type { Session, SignInLink } from "../../db/portal.ts";
import type { BucketSpec, BucketVerdict } from "../../db/rate-buckets.ts";
import type { Trial } from "../../db/trials.ts";
import type { Fault, FaultSpec, FaultTarget } from "../faults.ts";

export type LedgerKind = "sqlite" | "redis";

/** A key about to be stored: only its digest and display prefix, never the key. */
export interface NewKey {
  accountId: number;
  kind: KeyKind;
  digest: string;
  prefix: string;
  origin?: KeyOrigin;
}

/** The owner's two key ceilings (docs/api.md, "Developer portal"). */
export interface OwnerKeyCeilings {
  /** Active keys the account may hold. */
  keyLimit: number;
  /** Keys the owner may create in `windowMs`. */
  perWindow: number;
  windowMs: number;
}

export type OwnerKeyResult =
  | { created: true; id: number }
  | { created: false; refused: "key_limit_reached" }
  /** `oldestMs`: the oldest creation in the window, so the caller can say when the next fits. */
  | { created: false; refused: "key_issuance_rate_limited"; oldestMs: number };

export interface OwnerKeyCounts {
  activeKeys: number;
  /** Keys the owner created since `sinceMs`, and the oldest of them. */
  issued: { count: number; oldestMs: number | null };
}

/** Test mode's shared state: on a shared ledger every server reads and changes the same. */
export interface TestState {
  /** The test clock's fixed instant, or null when it follows the wall clock. */
  readClock(): Promise<number | null>;
  writeClock(ms: number | null): Promise<void>;
  armFault(spec: FaultSpec): Promise<Fault>;
  /**
   * The first armed fault that matches the request (server/faults.ts), one use spent, else null;
   * with the clock as `readClock` gives it, read in the same step (one round trip on Redis).
   */
  takeFault(target: FaultTarget): Promise<{ fault: Fault | null; clockMs: number | null }>;
  /** Armed faults in arming order, with the uses each has left. */
  pendingFaults(): Promise<Fault[]>;
  /** Disarms every fault; resolves to how many there were. */
  clearFaults(): Promise<number>;
}

export interface Ledger {
  readonly kind: LedgerKind;

  /** A named setting, created with `make()` when absent (the HMAC secret). First writer wins. */
  ensureSetting(name: string, make: () => string): Promise<string>;

  // Accounts.
  createAccount(fields: Partial<AccountFields>, nowMs: number): Promise<Account>;
  readAccount(id: number): Promise<Account | undefined>;
  /** The changed account, or undefined when there is no such account. */
  updateAccount(id: number, fields: Partial<AccountFields>, nowMs: number): Promise<Account | undefined>;
  countAccounts(): Promise<number>;
  /** The operator's listing (docs/operations.md, Accounts and keys): id order, every given filter matching. */
  listAccounts(filter?: AccountFilter): Promise<Account[]>;

  // Keys (stored as digests only).
  insertKey(key: NewKey, nowMs: number): Promise<number>;
  /** False when there is no such key; revoking a revoked key keeps its first revocation time. */
  revokeKey(keyId: number, nowMs: number): Promise<boolean>;
  listKeys(accountId: number): Promise<KeyListing[]>;
  /** Every account's keys, in id order (the operator's listing). */
  listAllKeys(): Promise<KeyListing[]>;
  /** The key when it belongs to the account. */
  readAccountKey(accountId: number, keyId: number): Promise<KeyListing | undefined>;
  findKeyByDigest(digest: string): Promise<KeyRow | undefined>;
  /** An owner's key, created only within both ceilings; one atomic step decides. */
  insertOwnerKey(key: NewKey, ceilings: OwnerKeyCeilings, nowMs: number): Promise<OwnerKeyResult>;
  ownerKeyCounts(accountId: number, sinceMs: number): Promise<OwnerKeyCounts>;

  // The developer portal's sign-in links and sessions (digests only).
  insertSignInLink(digest: string, link: SignInLink, nowMs: number, expiresMs: number): Promise<void>;
  /** Marks the link used and returns it when it exists, is unused and live; at most once ever. */
  useSignInLink(digest: string, nowMs: number): Promise<SignInLink | undefined>;
  insertSession(digest: string, session: Session): Promise<void>;
  readSession(digest: string, nowMs: number): Promise<Session | undefined>;
  deleteSession(digest: string): Promise<void>;

  // Ticket handoffs.
  /** Admits and counts one creation attempt unless the account made the limit's worth in the last minute. */
  admitHandoffAttempt(accountId: number, nowMs: number): Promise<boolean>;
  insertHandoff(handoff: Omit<Handoff, "redeemedMs">): Promise<void>;
  readHandoff(id: string): Promise<Handoff | undefined>;
  /** Continue: exactly one caller ever sees `redeemed`, and one click is recorded with it. */
  redeemHandoff(id: string, nowMs: number): Promise<Redemption>;
  countHandoffClicks(id: string): Promise<number>;

  // What the portal shows of the request path's counters.
  readTrial(accountId: number): Promise<Trial | undefined>;
  /** Rows delivered to the account in the rolling window (nowMs - windowMs, nowMs]. */
  rowsDelivered(accountId: number, windowMs: number, nowMs: number): Promise<number>;
  /** A request-rate bucket of the account as it stands now, nothing taken (test mode's account state). */
  readTokens(accountId: number, spec: BucketSpec, nowMs: number): Promise<BucketVerdict>;

  /** Resolves when the ledger answers a trivial read (readiness: docs/operations.md, Health). */
  ping(): Promise<void>;

  /** Test mode: empties accounts, keys, usage, handoffs, sessions and faults; keeps settings. */
  reset(): Promise<void>;
  readonly test: TestState;

  /**
   * Calls `listener` after any account or key changed, through any process on this ledger,
   * within a second (caches of keys and accounts start again). Returns the unsubscribe.
   */
  onAccessChange(listener: () => void): () => void;

  close(): Promise<void>;
}
