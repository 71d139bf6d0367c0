/**
 * What page selection knows of the serving snapshot before it picks an index (db/events-query.ts): its size, the rows a
 * source prefix, venues or states cover, the longest long event; from tables every refresh maintains, per generation.
 */
import type { Db } from "./driver.ts";
import { sourceGlob } from "./page-filter.ts";
import { TwoGenerations } from "./two-generations.ts";

/** `generation` is bumped by every refresh and keys the caches below. */
export type SnapshotStats = { generation: number; events: number };

export function readSnapshotStats(db: Db): SnapshotStats {
  const stats = db.prepare<SnapshotStats>("SELECT generation, events FROM snapshot_stats WHERE id = 1").get();
  return stats ?? { generation: -1, events: 0 };
}

/** A value read again only when its key (a snapshot generation, a replica mark) moves, in the caller's transaction. */
export class KeptUntilMoved<K extends number | string, T> {
  #kept: { key: K; value: T } | null = null;

  constructor(private readonly read: (db: Db) => T) {}

  at(db: Db, key: K): T {
    if (this.#kept?.key !== key) this.#kept = { key, value: this.read(db) };
    return this.#kept.value;
  }

  clear(): void {
    this.#kept = null;
  }
}

/** A value read once per snapshot generation. */
export class PerGeneration<T> extends KeptUntilMoved<number, T> {
  readonly get = (db: Db, stats: SnapshotStats): T => this.at(db, stats.generation);
}

/** Sources a kept token's list holds on average at most (the bound on all lists kept, in sources). */
const MATCHED_SOURCES_PER_TOKEN = 64;

const TOKEN_SQL =
  "SELECT source, events FROM snapshot_sources WHERE source >= $lo AND source < $hi AND source GLOB $glob";

/** Counts and the long-event bound of one snapshot, until its generation moves. Owned by server/list/caches.ts. */
export class SnapshotEstimates {
  /** By generation and token: the snapshot sources it matches and their rows. */
  readonly #tokens: TwoGenerations<string, { sources: readonly string[]; rows: number }>;
  readonly #venueRows = new PerGeneration((db) => {
    const rows = db.prepare<{ venue_id: number; events: number }>("SELECT venue_id, events FROM snapshot_venue_events");
    return new Map(rows.all().map((r) => [r.venue_id, r.events]));
  });
  readonly #stateRows = new PerGeneration(() => new Map<string, number>());
  /** The longest long event (end - start) in the snapshot, from the partial span index. */
  readonly longest = new PerGeneration((db) => {
    const sql = "SELECT max(end_ms - start_ms) AS span FROM snapshot INDEXED BY snapshot_span WHERE long = 1";
    return db.prepare<{ span: number | null }>(sql).get()?.span ?? null;
  });

  constructor(maxTokens: number) {
    // Bounded by the sources listed too: a short prefix may match thousands.
    const maxSize = maxTokens * MATCHED_SOURCES_PER_TOKEN;
    this.#tokens = new TwoGenerations({ entries: maxTokens, size: maxSize, sizeOf: (t) => t.sources.length + 1 });
  }

  /** The snapshot sources matching any token, exactly (they decide a page's rows): kept only per generation. */
  matchingSources(db: Db, stats: SnapshotStats, tokens: readonly string[]): readonly string[] {
    if (tokens.length === 1) return this.#token(db, stats, tokens[0]).sources;
    const out = new Set<string>();
    for (const token of tokens) for (const source of this.#token(db, stats, token).sources) out.add(source);
    return [...out];
  }

  /** Snapshot rows whose source matches any token (overlapping tokens count twice: an estimate). */
  sourceRows(db: Db, stats: SnapshotStats, tokens: readonly string[]): number {
    let total = 0;
    for (const token of tokens) total += this.#token(db, stats, token).rows;
    return total;
  }

  #token(db: Db, stats: SnapshotStats, token: string): { sources: readonly string[]; rows: number } {
    const key = `${stats.generation}\n${token}`;
    let t = this.#tokens.get(key);
    if (t === undefined) {
      const found = db.prepare<{ source: string; events: number }>(TOKEN_SQL).all(sourceGlob(token));
      t = { sources: found.map((r) => r.source), rows: found.reduce((n, r) => n + Number(r.events), 0) };
      this.#tokens.set(key, t);
    }
    return t;
  }

  /** Snapshot rows at the given venues. */
  venueRows(db: Db, stats: SnapshotStats, venueIds: readonly number[]): number {
    const counts = this.#venueRows.get(db, stats);
    let total = 0;
    for (const id of venueIds) total += counts.get(id) ?? 0;
    return total;
  }

  /** Snapshot rows in the given states (each counted once per generation). */
  stateRows(db: Db, stats: SnapshotStats, states: readonly string[]): number {
    const counts = this.#stateRows.get(db, stats);
    let total = 0;
    for (const state of states) {
      let n = counts.get(state);
      if (n === undefined) {
        const sql = "SELECT count(*) AS n FROM snapshot INDEXED BY snapshot_state WHERE state = $state";
        n = Number(db.prepare<{ n: number }>(sql).get({ state })?.n ?? 0);
        counts.set(state, n);
      }
      total += n;
    }
    return total;
  }

  clear(): void {
    this.#tokens.clear();
    this.#venueRows.clear();
    this.#stateRows.clear();
    this.longest.clear();
  }
}
