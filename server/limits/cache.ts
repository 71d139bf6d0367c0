/**
 * Per-process caches of keys (by digest) and accounts (by id), so the common request does no
 * ledger lookup for them. Freshness: the ledger's access epoch, which triggers bump on every
 * change to `accounts` or `api_keys` from any connection or process (db/ledger-access.ts), is
 * read when this process changed accounts or keys (test-mode accounts: the very next request sees it)
 * and otherwise at most every `HOT_PATH.foreignCommitLagMs`. A key revoked or a plan changed by
 * the CLI while the server runs therefore takes effect within milliseconds, well inside the
 * one second the issue allows.
 */
import { LRUCache } from "lru-cache";
import { type Account, connectionChanges, findKeyByDigest, type KeyRow, readAccount } from "../../db/accounts.ts";
import { ACCESS } from "../../db/contract.ts";
import type { Db } from "../../db/driver.ts";
import { readAccessEpoch } from "../../db/ledger-access.ts";
import { HOT_PATH } from "../../db/tuning.ts";

/** LRU values cannot be undefined; a box also caches "no such key" answers. */
interface Box<T> {
  value: T | undefined;
}

export interface AccessCache {
  /** Drops everything when the ledger's access epoch moved. Call once per request. */
  refresh(): void;
  key(digest: string): KeyRow | undefined;
  /** The key when it is cached as known, without a lookup; undefined otherwise. */
  knownKey(digest: string): KeyRow | undefined;
  account(id: number): Account | undefined;
  clear(): void;
}

export function createAccessCache(ledger: Db): AccessCache {
  const keys = new LRUCache<string, Box<KeyRow>>({ max: ACCESS.cacheEntries });
  const accounts = new LRUCache<number, Box<Account>>({ max: ACCESS.cacheEntries });
  let epoch: string | undefined;
  let checkedChanges = -1;
  let checkedAt = -Infinity;
  const clear = () => {
    keys.clear();
    accounts.clear();
    epoch = undefined;
    checkedChanges = -1;
  };
  return {
    refresh() {
      // This process's own writes (test-mode accounts) count at once; other processes' within the lag.
      const changes = connectionChanges(ledger);
      const at = performance.now();
      if (changes === checkedChanges && at - checkedAt < HOT_PATH.foreignCommitLagMs) return;
      checkedChanges = changes;
      checkedAt = at;
      const now = readAccessEpoch(ledger);
      if (now !== epoch) {
        clear();
        epoch = now;
      }
    },
    key(digest) {
      let box = keys.get(digest);
      if (!box) keys.set(digest, (box = { value: findKeyByDigest(ledger, digest) }));
      return box.value;
    },
    knownKey: (digest) => keys.get(digest)?.value,
    account(id) {
      let box = accounts.get(id);
      if (!box) accounts.set(id, (box = { value: readAccount(ledger, id) }));
      return box.value;
    },
    clear,
  };
}
