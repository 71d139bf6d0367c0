/**
 * The ledger in the SQLite file beside the replica (docs/architecture.md, "The ledger and the
 * meter"), owned by one `marquee serve`: every operation of the seam (server/ledger/ledger.ts)
 * over the db/ functions, each one statement or one BEGIN IMMEDIATE transaction, so concurrent
 * callers (and the CLI in another process) are serialised by SQLite.
 *
 * Durability: the ledger runs with synchronous=FULL (db/ledger.ts), so accounts, keys, sign-in
 * links, sessions and the once-only Continue are durable when the promise settles; handoff
 * attempts and handoffs (15 minutes of life, recreated at will) commit without an fsync
 * (server/limits/ledger.ts, `withoutFsync`).
 *
 * Trials and delivered rows are read through the process's meter (server/limits/meter.ts), which
 * holds the counters it has not written yet. Test mode's clock and faults are this process's own
 * (server/clock.ts, server/faults.ts): one server per SQLite ledger.
 */
import {
  type Account,
  type AccountFields,
  type AccountFilter,
  createAccount,
  findKeyByDigest,
  insertKey,
  type KeyListing,
  type KeyRow,
  listAccounts,
  listAllKeys,
  listKeys,
  readAccount,
  revokeKey,
  updateAccount,
} from "../../db/accounts.ts";
import type { Db } from "../../db/driver.ts";
import {
  admitHandoffAttempt,
  countHandoffClicks,
  type Handoff,
  insertHandoff,
  type Redemption,
  readHandoff,
  redeemHandoff,
} from "../../db/handoffs.ts";
import { ensureSetting, openLedger } from "../../db/ledger.ts";
import { readAccessEpoch } from "../../db/ledger-access.ts";
import type { SchemaLog } from "../../db/migrate.ts";
import {
  countActiveKeys,
  deleteSession,
  insertSession,
  insertSignInLink,
  readAccountKey,
  readOwnerIssuance,
  readSession,
  type Session,
  type SignInLink,
  useSignInLink,
} from "../../db/portal.ts";
import type { BucketSpec, BucketVerdict } from "../../db/rate-buckets.ts";
import type { Trial } from "../../db/trials.ts";
import type { Clock } from "../clock.ts";
import type { Faults } from "../faults.ts";
import { withoutFsync } from "../limits/ledger.ts";
import { createMeter, type Meter } from "../limits/meter.ts";
import type { Ledger, NewKey, OwnerKeyCeilings, OwnerKeyCounts, OwnerKeyResult, TestState } from "./ledger.ts";

/** How often the access epoch is read while someone listens for changes (within a second). */
const ACCESS_POLL_MS = 200;

export class SqliteLedger implements Ledger {
  readonly kind = "sqlite" as const;
  readonly test: TestState;
  readonly #faults: Faults;
  readonly #listeners = new Set<() => void>();
  #poll: ReturnType<typeof setInterval> | null = null;
  #epoch = "";

  /**
   * `db` stays reachable for the request path's access stages and meter (server/access.ts,
   * server/limits/), which work on the SQLite connection directly.
   */
  constructor(
    readonly db: Db,
    readonly meter: Meter,
    clock: Clock,
    faults: Faults,
  ) {
    this.test = {
      readClock: async () => (clock.frozen ? clock.now() : null),
      writeClock: async (ms) => (ms === null ? clock.unfreeze() : clock.set(ms)),
      armFault: async (spec) => faults.arm(spec),
      takeFault: async (target) => ({ fault: faults.take(target), clockMs: clock.frozen ? clock.now() : null }),
      pendingFaults: async () => faults.pending(),
      clearFaults: async () => faults.clear(),
    };
    this.#faults = faults;
  }

  async ensureSetting(name: string, make: () => string): Promise<string> {
    return ensureSetting(this.db, name, make);
  }

  async createAccount(fields: Partial<AccountFields>, nowMs: number): Promise<Account> {
    return readAccount(this.db, createAccount(this.db, fields, nowMs))!;
  }

  async readAccount(id: number): Promise<Account | undefined> {
    return readAccount(this.db, id);
  }

  async updateAccount(id: number, fields: Partial<AccountFields>, nowMs: number): Promise<Account | undefined> {
    return updateAccount(this.db, id, fields, nowMs);
  }

  async countAccounts(): Promise<number> {
    return Number(this.db.prepare<{ n: number }>("SELECT count(*) AS n FROM accounts").get()!.n);
  }

  async listAccounts(filter?: AccountFilter): Promise<Account[]> {
    return listAccounts(this.db, filter);
  }

  async insertKey(key: NewKey, nowMs: number): Promise<number> {
    return insertKey(this.db, key.accountId, key.kind, key.digest, key.prefix, nowMs, key.origin);
  }

  async revokeKey(keyId: number, nowMs: number): Promise<boolean> {
    return revokeKey(this.db, keyId, nowMs);
  }

  async listKeys(accountId: number): Promise<KeyListing[]> {
    return listKeys(this.db, accountId);
  }

  async listAllKeys(): Promise<KeyListing[]> {
    return listAllKeys(this.db);
  }

  async readAccountKey(accountId: number, keyId: number): Promise<KeyListing | undefined> {
    return readAccountKey(this.db, accountId, keyId);
  }

  async findKeyByDigest(digest: string): Promise<KeyRow | undefined> {
    return findKeyByDigest(this.db, digest);
  }

  /** The active-key ceiling first: waiting does not lift it (docs/api.md, "Developer portal"). */
  async insertOwnerKey(key: NewKey, ceilings: OwnerKeyCeilings, nowMs: number): Promise<OwnerKeyResult> {
    const db = this.db;
    return db.transaction((): OwnerKeyResult => {
      if (countActiveKeys(db, key.accountId) >= ceilings.keyLimit) {
        return { created: false, refused: "key_limit_reached" };
      }
      const issued = readOwnerIssuance(db, key.accountId, nowMs - ceilings.windowMs);
      if (issued.count >= ceilings.perWindow) {
        return { created: false, refused: "key_issuance_rate_limited", oldestMs: issued.oldestMs! };
      }
      const origin = { ...key.origin, issuedBy: "owner" as const };
      return { created: true, id: insertKey(db, key.accountId, key.kind, key.digest, key.prefix, nowMs, origin) };
    });
  }

  async ownerKeyCounts(accountId: number, sinceMs: number): Promise<OwnerKeyCounts> {
    return { activeKeys: countActiveKeys(this.db, accountId), issued: readOwnerIssuance(this.db, accountId, sinceMs) };
  }

  async insertSignInLink(digest: string, link: SignInLink, nowMs: number, expiresMs: number): Promise<void> {
    this.db.transaction(() => insertSignInLink(this.db, digest, link, nowMs, expiresMs));
  }

  async useSignInLink(digest: string, nowMs: number): Promise<SignInLink | undefined> {
    return useSignInLink(this.db, digest, nowMs);
  }

  async insertSession(digest: string, session: Session): Promise<void> {
    this.db.transaction(() => insertSession(this.db, digest, session));
  }

  async readSession(digest: string, nowMs: number): Promise<Session | undefined> {
    return readSession(this.db, digest, nowMs);
  }

  async deleteSession(digest: string): Promise<void> {
    deleteSession(this.db, digest);
  }

  async admitHandoffAttempt(accountId: number, nowMs: number): Promise<boolean> {
    return withoutFsync(this.db, () => admitHandoffAttempt(this.db, accountId, nowMs));
  }

  async insertHandoff(handoff: Omit<Handoff, "redeemedMs">): Promise<void> {
    withoutFsync(this.db, () => insertHandoff(this.db, handoff));
  }

  async readHandoff(id: string): Promise<Handoff | undefined> {
    return readHandoff(this.db, id);
  }

  async redeemHandoff(id: string, nowMs: number): Promise<Redemption> {
    return redeemHandoff(this.db, id, nowMs);
  }

  async countHandoffClicks(id: string): Promise<number> {
    return countHandoffClicks(this.db, id);
  }

  async readTrial(accountId: number): Promise<Trial | undefined> {
    return this.meter.readTrial(accountId);
  }

  async rowsDelivered(accountId: number, windowMs: number, nowMs: number): Promise<number> {
    return this.meter.rowsDelivered(accountId, windowMs, nowMs);
  }

  async readTokens(_accountId: number, spec: BucketSpec, nowMs: number): Promise<BucketVerdict> {
    return this.meter.peekTokens(spec, nowMs);
  }

  async ping(): Promise<void> {
    this.db.prepare("SELECT 1 FROM settings LIMIT 1").get();
  }

  /** Every table but settings (the HMAC secret, the access epoch), with the meter's unwritten counters. */
  async reset(): Promise<void> {
    const db = this.db;
    const tables = db
      .prepare<{ name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'settings'",
      )
      .all();
    db.transaction(() => {
      // Every table is emptied, so references are checked once at commit, not table by table.
      db.exec("PRAGMA defer_foreign_keys = ON");
      for (const { name } of tables) db.exec(`DELETE FROM "${name}"`);
    });
    this.meter.clear();
    this.#faults.clear();
  }

  /**
   * The access epoch (db/ledger-access.ts) moves with every change to accounts or keys, from any
   * connection; it is read every ACCESS_POLL_MS while a listener is registered.
   */
  onAccessChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    if (!this.#poll) {
      this.#epoch = readAccessEpoch(this.db);
      this.#poll = setInterval(() => this.#checkEpoch(), ACCESS_POLL_MS);
      (this.#poll as { unref?: () => void }).unref?.();
    }
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) this.#stopPolling();
    };
  }

  #checkEpoch(): void {
    let epoch: string;
    try {
      epoch = readAccessEpoch(this.db);
    } catch {
      return; // a locked or failing file: the next tick reads again
    }
    if (epoch === this.#epoch) return;
    this.#epoch = epoch;
    for (const listener of [...this.#listeners]) listener();
  }

  #stopPolling(): void {
    if (this.#poll) clearInterval(this.#poll);
    this.#poll = null;
  }

  /** Writes the meter's last counters, then closes the file. */
  async close(): Promise<void> {
    this.#stopPolling();
    this.#listeners.clear();
    this.meter.close();
    this.db.close();
  }
}

/** Opens (and migrates) the SQLite ledger at `path`, with a meter of its own over the same connection. */
export async function openSqliteLedger(
  path: string,
  clock: Clock,
  faults: Faults,
  options: { log?: SchemaLog } = {},
): Promise<SqliteLedger> {
  const db = await openLedger(path, options);
  return new SqliteLedger(db, createMeter(db), clock, faults);
}
