/** Per-process caches of keys (by digest, "no such key" too) and accounts, kept fresh as docs/architecture.md, Caches says. */
import { type Account, findKeyByDigest, type KeyRow, readAccount } from "../../db/accounts.ts";
import { ACCESS } from "../../db/contract.ts";
import type { Db } from "../../db/driver.ts";
import { readAccessEpoch } from "../../db/ledger-access.ts";
import { HOT_PATH } from "../../db/tuning.ts";
import { TwoGenerations } from "../../db/two-generations.ts";
import type { Maybe } from "./counters.ts";

/** Where keys and accounts are read; a promise when the ledger must be asked over the network. */
export interface AccessSource {
  findKey(digest: string): Maybe<KeyRow | undefined>;
  readAccount(id: number): Maybe<Account | undefined>;
  /** Asked once per request: true when what was read may have changed since. */
  changed?(): boolean;
}

/** A cached value cannot be undefined; a box also caches "no such key" answers. */
type Box<T> = { value: T | undefined };

export function createAccessCache(source: AccessSource) {
  const keys = new TwoGenerations<string, Box<KeyRow>>({ entries: ACCESS.cacheEntries });
  const accounts = new TwoGenerations<number, Box<Account>>({ entries: ACCESS.cacheEntries });
  // Moves on every clear, so a lookup that started before a change is not cached after it.
  let generation = 0;
  function read<K extends {}, V extends object>(
    cache: TwoGenerations<K, Box<V>>,
    k: K,
    load: (k: K) => Maybe<V | undefined>,
  ) {
    const box = cache.get(k);
    if (box) return box.value;
    const value = load(k);
    const at = generation;
    const keep = (v: V | undefined) => {
      if (at === generation) cache.set(k, { value: v });
      return v;
    };
    return value instanceof Promise ? value.then(keep) : keep(value);
  }
  const clear = () => {
    generation++;
    keys.clear();
    accounts.clear();
  };
  return {
    /** Drops everything when the source says it changed. Call once per request. */
    refresh() {
      if (source.changed?.()) clear();
    },
    key: (digest: string) => read(keys, digest, (d) => source.findKey(d)),
    /** The key when it is cached as known, without a lookup; undefined otherwise. */
    knownKey: (digest: string) => keys.get(digest)?.value,
    account: (id: number) => read(accounts, id, (i) => source.readAccount(i)),
    clear,
  };
}

/** The SQLite ledger's keys and accounts, changed when its access epoch moved. */
export function sqliteAccessSource(ledger: Db): AccessSource {
  let epoch: string | undefined;
  let checkedChanges = -1;
  let checkedAt = -Infinity;
  return {
    findKey: (digest) => findKeyByDigest(ledger, digest),
    readAccount: (id) => readAccount(ledger, id),
    changed() {
      // This process's own writes (test-mode accounts) count at once; other processes' within the lag.
      const changes = ledger.writes;
      const at = performance.now();
      if (changes === checkedChanges && at - checkedAt < HOT_PATH.foreignCommitLagMs) return false;
      checkedChanges = changes;
      checkedAt = at;
      const previous = epoch;
      epoch = readAccessEpoch(ledger);
      return epoch !== previous;
    },
  };
}
