/**
 * Everything of a SQLite ledger that outlives a request, read in one read transaction so the
 * parts agree with each other (docs/operations.md, Moving the ledger to Redis): accounts (with
 * their plans and policies), keys (digests only), trials, delivered-row usage, handoffs and their
 * clicks, and settings. What is left out lives seconds or minutes: rate buckets (they start full),
 * handoff attempts (a 60-second window), sign-in links and portal sessions (owners sign in again).
 */
import { type Account, type KeyListing, listAccounts, listAllKeys } from "./accounts.ts";
import type { Db } from "./driver.ts";
import type { Handoff } from "./handoffs.ts";
import type { UsageEntry } from "./row-usage.ts";
import type { Trial } from "./trials.ts";

export interface HandoffClick {
  handoffId: string;
  accountId: number;
  keyId: number;
  eventId: number;
  seller: string;
  sellerUrl: string;
  clickedMs: number;
}

export interface LedgerSnapshot {
  accounts: Account[];
  keys: Array<KeyListing & { digest: string }>;
  trials: Trial[];
  usage: Array<UsageEntry & { accountId: number }>;
  handoffs: Handoff[];
  clicks: HandoffClick[];
  /** Named settings (the cursor secret), without the SQLite ledger's own bookkeeping. */
  settings: Array<{ key: string; value: string }>;
}

/** Settings that only mean something to the SQLite ledger (the access epoch its servers poll). */
const SQLITE_ONLY_SETTINGS = ["access_epoch"];

export function readLedgerSnapshot(db: Db): LedgerSnapshot {
  // A deferred BEGIN takes no write lock: a server may keep writing meanwhile, unseen here.
  db.exec("BEGIN");
  try {
    const digests = new Map(
      db
        .prepare<{ id: number; digest: string }>("SELECT id, digest FROM api_keys")
        .all()
        .map((r) => [r.id, r.digest]),
    );
    return {
      accounts: listAccounts(db),
      keys: listAllKeys(db).map((k) => ({ ...k, digest: digests.get(k.id)! })),
      trials: db
        .prepare<Trial>(
          "SELECT account_id AS accountId, started_ms AS startedMs, rows_used AS rowsUsed, exhausted_ms AS exhaustedMs FROM trials ORDER BY account_id",
        )
        .all(),
      usage: db
        .prepare<UsageEntry & { accountId: number }>(
          "SELECT account_id AS accountId, total_rows AS totalRows, at_ms AS atMs FROM row_usage ORDER BY account_id, total_rows",
        )
        .all(),
      handoffs: db
        .prepare<Handoff>(
          `SELECT id, account_id AS accountId, key_id AS keyId, event_id AS eventId, seller, seller_url AS sellerUrl,
             created_ms AS createdMs, expires_ms AS expiresMs, redeemed_ms AS redeemedMs FROM handoffs ORDER BY created_ms`,
        )
        .all(),
      clicks: db
        .prepare<HandoffClick>(
          `SELECT handoff_id AS handoffId, account_id AS accountId, key_id AS keyId, event_id AS eventId, seller,
             seller_url AS sellerUrl, clicked_ms AS clickedMs FROM handoff_clicks`,
        )
        .all(),
      settings: db
        .prepare<{ key: string; value: string }>("SELECT key, value FROM settings ORDER BY key")
        .all()
        .filter((s) => !SQLITE_ONLY_SETTINGS.includes(s.key)),
    };
  } finally {
    db.exec("COMMIT");
  }
}
