/**
 * What page selection needs to know about the current serving snapshot before it picks an
 * index (db/events-query.ts): its size, how many rows a source prefix or a set of venues
 * covers, and the longest long event. Counts come from tables the snapshot refresh maintains
 * (snapshot_stats, snapshot_sources, snapshot_venue_events; db/replica.ts migrations 2–3) and
 * are cached per snapshot generation, so a request pays for lookups, not for counting.
 */
import { LRUCache } from "lru-cache";
import type { Db } from "./driver.ts";
import { sourceGlob } from "./page-filter.ts";

export interface SnapshotStats {
  /** Bumped by every refresh; keys the caches below. */
  generation: number;
  events: number;
}

export function readSnapshotStats(db: Db): SnapshotStats {
  return (
    db.prepare<SnapshotStats>("SELECT generation, events FROM snapshot_stats WHERE id = 1").get() ?? {
      generation: -1,
      events: 0,
    }
  );
}

/** Sources a kept token's list holds on average at most (the bound on all lists kept, in sources). */
const MATCHED_SOURCES_PER_TOKEN = 64;

/**
 * Counts and the long-event bound of one serving snapshot, kept until its generation moves
 * (every refresh bumps it). Owned by the list path's caches (server/list/caches.ts).
 */
export class SnapshotEstimates {
  readonly #sourceRows: LRUCache<string, number>;
  readonly #matching: LRUCache<string, readonly string[]>;
  #venueRows: { generation: number; counts: Map<number, number> } | null = null;
  #longest: { generation: number; ms: number | null } | null = null;
  #stateRows: { generation: number; counts: Map<string, number> } | null = null;

  constructor(maxSources: number) {
    this.#sourceRows = new LRUCache({ max: maxSources });
    // Bounded by the sources listed too: a short prefix may match thousands.
    this.#matching = new LRUCache({
      max: maxSources,
      maxSize: maxSources * MATCHED_SOURCES_PER_TOKEN,
      sizeCalculation: (list) => list.length + 1,
    });
  }

  /**
   * The snapshot sources matching any token, each token's list (`readMatchingSources`) kept for
   * the generation: snapshot_sources changes only in a refresh (db/snapshot.ts), in the
   * transaction that moves the generation, so the list read in the caller's read transaction is
   * the one kept for its generation.
   */
  matchingSources(db: Db, stats: SnapshotStats, tokens: readonly string[]): readonly string[] {
    if (tokens.length === 1) return this.#matchingOne(db, stats, tokens[0]);
    const out = new Set<string>();
    for (const token of tokens) for (const source of this.#matchingOne(db, stats, token)) out.add(source);
    return [...out];
  }

  #matchingOne(db: Db, stats: SnapshotStats, token: string): readonly string[] {
    const key = `${stats.generation}\n${token}`;
    let list = this.#matching.get(key);
    if (list === undefined) {
      list = readMatchingSources(db, token);
      this.#matching.set(key, list);
    }
    return list;
  }

  /** Snapshot rows whose source matches any token (overlapping tokens count twice: an estimate). */
  sourceRows(db: Db, stats: SnapshotStats, tokens: readonly string[]): number {
    let total = 0;
    for (const token of tokens) {
      const key = `${stats.generation}\n${token}`;
      let n = this.#sourceRows.get(key);
      if (n === undefined) {
        n = Number(
          db
            .prepare<{ n: number | null }>(
              "SELECT sum(events) AS n FROM snapshot_sources WHERE source >= $lo AND source < $hi AND source GLOB $glob",
            )
            .get(sourceGlob(token))?.n ?? 0,
        );
        this.#sourceRows.set(key, n);
      }
      total += n;
    }
    return total;
  }

  /** Snapshot rows at the given venues. */
  venueRows(db: Db, stats: SnapshotStats, venueIds: readonly number[]): number {
    if (this.#venueRows?.generation !== stats.generation) {
      const counts = new Map<number, number>();
      for (const r of db
        .prepare<{ venue_id: number; events: number }>("SELECT venue_id, events FROM snapshot_venue_events")
        .all()) {
        counts.set(r.venue_id, r.events);
      }
      this.#venueRows = { generation: stats.generation, counts };
    }
    let total = 0;
    for (const id of venueIds) total += this.#venueRows.counts.get(id) ?? 0;
    return total;
  }

  /** Snapshot rows in the given states (each counted once per generation). */
  stateRows(db: Db, stats: SnapshotStats, states: readonly string[]): number {
    if (this.#stateRows?.generation !== stats.generation)
      this.#stateRows = { generation: stats.generation, counts: new Map() };
    const counts = this.#stateRows.counts;
    let total = 0;
    for (const state of states) {
      let n = counts.get(state);
      if (n === undefined) {
        n = Number(
          db
            .prepare<{ n: number }>("SELECT count(*) AS n FROM snapshot INDEXED BY snapshot_state WHERE state = $state")
            .get({ state })?.n ?? 0,
        );
        counts.set(state, n);
      }
      total += n;
    }
    return total;
  }

  /** `readLongestLongEventMs`, read once per snapshot generation. */
  longestLongEventMs(db: Db, stats: SnapshotStats): number | null {
    if (this.#longest?.generation !== stats.generation)
      this.#longest = { generation: stats.generation, ms: readLongestLongEventMs(db) };
    return this.#longest.ms;
  }

  clear(): void {
    this.#sourceRows.clear();
    this.#matching.clear();
    this.#venueRows = null;
    this.#longest = null;
    this.#stateRows = null;
  }
}

/** The snapshot sources matching one token, read now (each source once: the table's key). */
function readMatchingSources(db: Db, token: string): string[] {
  return db
    .prepare<{ source: string }>(
      "SELECT source FROM snapshot_sources WHERE source >= $lo AND source < $hi AND source GLOB $glob",
    )
    .all(sourceGlob(token))
    .map((row) => row.source);
}

/** The longest long event (end - start) in the snapshot, from the partial span index. */
export function readLongestLongEventMs(db: Db): number | null {
  const row = db
    .prepare<{ span: number | null }>(
      "SELECT max(end_ms - start_ms) AS span FROM snapshot INDEXED BY snapshot_span WHERE long = 1",
    )
    .get();
  return row?.span ?? null;
}
