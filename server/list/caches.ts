/**
 * Every cache of the list path, created together with their sizes (db/tuning.ts HOT_PATH) and
 * cleared together. What makes each one exact is written beside it; docs/architecture.md,
 * "Caches", has the whole argument.
 *
 *   parsed     query string → parsed parameters and fingerprint: a pure function of the string
 *              (and the secret), so never stale.
 *   pages      query string + limit + window span → selected keys and the hydrated body, for one
 *              state of the replica (server/list/page-cache.ts).
 *   events     event id → live row and its JSON, for one state of the replica (db/hydrate.ts).
 *   geo        the snapshot's venue table and recent candidate searches, for one snapshot
 *              generation (db/geo.ts).
 *   scans      state index ranges geo pages scan, for one state of the replica (db/kept-scans.ts).
 *   estimates  per-snapshot counts for plan choice (db/snapshot-stats.ts).
 *   longs      the snapshot's long rows, for one snapshot generation (db/long-events.ts).
 *   blocks     the snapshot's short rows by state and week, by source and a span sized to it,
 *              or by day, for one snapshot generation (db/short-blocks.ts).
 *   state      the replica's state read at most HOT_PATH.foreignCommitLagMs ago, for the page
 *              cache's hit path.
 *   headers    one Headers object per sequence of access header names (server/list/response.ts).
 *   scope      what a replica of another deployment cannot answer, for one state of the replica
 *              (server/list/replica-scope.ts).
 *
 * Anything in this process that writes the replica calls `replicaChanged` (server/context.ts
 * `notifyReplicaChange`); the state checks catch what other processes write.
 */
import { LRUCache } from "lru-cache";
import type { Db } from "../../db/driver.ts";
import { GeoIndex } from "../../db/geo.ts";
import { HydratedEvents, RecentReplicaState } from "../../db/hydrate.ts";
import { KeptScans } from "../../db/kept-scans.ts";
import { LongEvents } from "../../db/long-events.ts";
import { SnapshotBlocks } from "../../db/short-blocks.ts";
import { SnapshotEstimates } from "../../db/snapshot-stats.ts";
import { HOT_PATH } from "../../db/tuning.ts";
import { createPageCache, type PageCache } from "./page-cache.ts";
import type { ListQuery } from "./parse.ts";
import { ReplicaScope } from "./replica-scope.ts";
import { ListHeaders } from "./response.ts";

/**
 * What a query string decides, kept by the raw string once it passed stages 4 and 6 (both pure
 * functions of it): the parsed parameters, the filter fingerprint, and the two facts earlier
 * stages need (geo cost, the polygon gate). A request with a known string reads no parameters.
 */
export interface ParsedQuery {
  q: ListQuery;
  fingerprint: string;
  geo: boolean;
  polygon: boolean;
}

export class ListCaches {
  readonly parsed = new LRUCache<string, ParsedQuery>({ max: HOT_PATH.parsedQueries });
  readonly pages: PageCache = createPageCache(HOT_PATH.cachedPages, HOT_PATH.cachedPageBytes);
  readonly events: HydratedEvents;
  readonly geo: GeoIndex;
  readonly scans = new KeptScans(HOT_PATH.keptScanBytes, HOT_PATH.keptScanRows);
  readonly estimates = new SnapshotEstimates(HOT_PATH.sourceEstimates);
  readonly longs = new LongEvents(HOT_PATH.longEventRows);
  readonly blocks = new SnapshotBlocks(HOT_PATH.shortBlockBytes, HOT_PATH.sourceBlockRows);
  readonly state: RecentReplicaState;
  readonly headers = new ListHeaders();
  readonly scope: ReplicaScope;

  constructor(replica: Db, baseUrl: string) {
    this.events = new HydratedEvents(baseUrl, {
      eventBytes: HOT_PATH.hydratedEventBytes,
      venueBytes: HOT_PATH.hydratedVenueBytes,
    });
    this.geo = new GeoIndex(replica, HOT_PATH.geoResults, HOT_PATH.geoResultBytes);
    this.state = new RecentReplicaState(replica, HOT_PATH.foreignCommitLagMs);
    this.scope = new ReplicaScope(replica, this.state);
  }

  /** Drops everything that describes the replica's data (parsed queries do not). */
  replicaChanged(): void {
    this.pages.clear();
    this.events.clear();
    this.geo.clear();
    this.scans.clear();
    this.estimates.clear();
    this.longs.clear();
    this.blocks.clear();
    this.state.clear();
    this.scope.clear();
  }

  clear(): void {
    this.replicaChanged();
    this.parsed.clear();
  }
}
