/**
 * Every cache of the list path, sized by db/tuning.ts HOT_PATH and declared with the key it follows (`Keyed`), and the
 * one way this process writes the replica (`ReplicaWrites`), which drops the caches whose key moved
 * (docs/architecture.md, "Freshness"; "Caches" says why each is exact).
 */
import type { Db } from "../../db/driver.ts";
import { GeoIndex } from "../../db/geo.ts";
import { HydratedEvents, RecentReplicaState, readReplicaState } from "../../db/hydrate.ts";
import { KeptScans } from "../../db/kept-scans.ts";
import { SnapshotBlocks } from "../../db/snapshot-blocks.ts";
import { KeptUntilMoved, readSnapshotStats, SnapshotEstimates } from "../../db/snapshot-stats.ts";
import { HOT_PATH } from "../../db/tuning.ts";
import { TwoGenerations } from "../../db/two-generations.ts";
import { createPageCache } from "./page-cache.ts";
import { type ParsedQuery, readScopeCheck, type ScopeCheck } from "./parse.ts";
import { ListHeaders } from "./response.ts";

/** What makes a cache stale: nothing (`query`), every commit (`replica`), every snapshot refresh (`snapshot`). */
export type Freshness = "query" | "replica" | "snapshot";

/** A cache and the key it follows, so its declaration says what invalidates it. */
export type Keyed<F extends Freshness, C> = C & { readonly follows: F };

/** Declares `cache` as following `follows`; only a `query` cache may lack `clear`. */
const keyed = <F extends Freshness, C extends F extends "query" ? object : { clear(): void }>(follows: F, cache: C) =>
  Object.assign(cache, { follows }) as Keyed<F, C>;

export class ListCaches {
  readonly parsed = keyed("query", new TwoGenerations<string, ParsedQuery>({ entries: HOT_PATH.parsedQueries }));
  readonly headers = keyed("query", new ListHeaders());
  readonly pages = keyed("replica", createPageCache(HOT_PATH.cachedPages, HOT_PATH.cachedPageBytes));
  readonly events: Keyed<"replica", HydratedEvents>;
  readonly scans = keyed("replica", new KeptScans(HOT_PATH.keptScanBytes, HOT_PATH.keptScanRows));
  readonly replicaMark: Keyed<"replica", RecentReplicaState>;
  readonly scope = keyed("replica", new KeptUntilMoved<string, ScopeCheck | null>(readScopeCheck));
  readonly geo: Keyed<"snapshot", GeoIndex>;
  readonly estimates = keyed("snapshot", new SnapshotEstimates(HOT_PATH.sourceEstimates));
  readonly blocks = keyed("snapshot", new SnapshotBlocks(HOT_PATH));

  constructor(replica: Db, baseUrl: string) {
    const bytes = { eventBytes: HOT_PATH.hydratedEventBytes, venueBytes: HOT_PATH.hydratedVenueBytes };
    this.events = keyed("replica", new HydratedEvents(baseUrl, bytes));
    this.replicaMark = keyed("replica", new RecentReplicaState(replica, HOT_PATH.foreignCommitLagMs));
    this.geo = keyed("snapshot", new GeoIndex(replica, HOT_PATH.geoResults, HOT_PATH.geoResultBytes));
  }

  /** Drops every cache that follows `key`; "snapshot" drops the replica's too (a refresh is a commit). */
  moved(key: "replica" | "snapshot"): void {
    for (const c of this.#all()) if (c.follows === "replica" || c.follows === key) c.clear?.();
  }

  clear(): void {
    for (const c of this.#all()) c.clear?.();
  }

  /** Every field above: a cache declared with `keyed` cannot be left out of `moved`. */
  #all = () => Object.values(this) as Keyed<Freshness, { clear?(): void }>[];
}

type Keys = Record<"replica" | "snapshot", string>;

/** The replica's mark and snapshot generation; null when they cannot be read (a closed connection). */
function readKeys(db: Db): Keys | null {
  try {
    return { replica: readReplicaState(db), snapshot: String(readSnapshotStats(db).generation) };
  } catch {
    return null;
  }
}

/**
 * The one way the serving process writes its replica: writers go through `apply`, followers committing in their own
 * loops call `changed`; either drops the caches following a key that moved, so a writer need not know what it stales.
 */
export class ReplicaWrites {
  #keys: Keys | null;

  constructor(
    private readonly db: Db,
    private readonly caches: ListCaches,
  ) {
    this.#keys = readKeys(db);
  }

  /** Runs `write`, then `changed`, also when it fails (a sync keeps the batches it committed). */
  async apply<T>(write: (db: Db) => T | Promise<T>): Promise<T> {
    try {
      return await write(this.db);
    } finally {
      this.changed();
    }
  }

  readonly changed = (): void => {
    const was = this.#keys;
    const now = readKeys(this.db);
    this.#keys = now;
    if (now && was && now.replica === was.replica) return;
    this.caches.moved(now && was && now.snapshot === was.snapshot ? "replica" : "snapshot");
  };
}
