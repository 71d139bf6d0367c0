/**
 * `marquee sync --from postgres://…` and `serve --sync-from postgres://…`: checks the upstream,
 * makes the publication and the replica's slot when missing, copies both tables once, then
 * applies the slot's changes (docs/upstream-records.md, "PostgreSQL tables"; docs/postgres.md,
 * "Follow your PostgreSQL").
 */
import type { Db } from "../../db/driver.ts";
import { readUpstreamState, readWatermark, writeUpstreamState } from "../../db/replica.ts";
import { stopTracking } from "../../db/snapshot.ts";
import { ChangeApplier, type ChangeResult, type Reject } from "./apply.ts";
import { assertReady, connect, explain, UpstreamError } from "./connect.ts";
import { type CopyCounts, copyTables } from "./copy.ts";
import { compareLsn } from "./lsn.ts";
import { COPY_THREAD_MIN_ROWS, ident, type PostgresSource, parsePostgresUrl } from "./schema.ts";
import { assertFollowsPostgres, ensurePublication, publicationName, readLag, slotExists, slotOf } from "./slot.ts";
import { streamChanges } from "./stream.ts";

export interface PostgresSyncOptions {
  slot?: string;
  follow?: boolean;
  signal?: AbortSignal;
  now?: () => number;
  /** Rows per SQLite transaction during the initial copy. */
  copyBatchSize?: number;
  /** An initial copy of at least this many rows is written by a writer thread (default COPY_THREAD_MIN_ROWS). */
  copyThreadMinRows?: number;
  onProgress?: (p: PostgresProgress) => void;
  /** After each applied batch of changes (the serving process refreshes its snapshot). */
  onApplied?: (result: ChangeResult, position: string) => void;
  /** Once the replica's slot is known to be one it can copy from or resume (before any copying or streaming). */
  onChecked?: () => void;
  /** Once connected and streaming (the serving process resets its backoff). */
  onStreaming?: () => void;
  onReject?: (reject: Reject) => void;
  /** While following: the slot's lag in bytes, every `lagEveryMs` (default 2 s). */
  onLag?: (bytes: number | null) => void;
  lagEveryMs?: number;
  /**
   * Copy both tables again from a new slot, whatever the replica held (`sync --resync`): the way
   * back for a replica that can no longer follow its slot (`ReplicaBehindError`).
   */
  resync?: boolean;
}

/**
 * The replica is behind the position its slot confirmed: it was restored from a backup or
 * copied, or another replica streams from the same slot. The changes in between are gone from
 * the slot, so resuming would serve a replica that silently misses them; only copying the tables
 * again (`--resync`) brings it back (docs/operations.md, Backups).
 */
export class ReplicaBehindError extends UpstreamError {}

export interface PostgresProgress {
  phase: "copy" | "stream";
  /** Rows the initial copy will copy (0 until known). */
  total: number;
  copied: number;
  changes: number;
  elapsedMs: number;
}

export interface PostgresSummary {
  source: string;
  slot: string;
  publication: string;
  /** Rows copied by this run's initial copy (0 when the replica was already copied). */
  copied: number;
  /** Row changes applied from the slot by this run. */
  changes: number;
  rejects: number;
  position: string | null;
  watermark: number;
  /** Bytes of log the slot holds back on the server after the run. */
  lagBytes: number | null;
  elapsedMs: number;
  rowsPerSecond: number;
  /** Whether a writer thread wrote this run's initial copy (see COPY_THREAD_MIN_ROWS). */
  copyWriterThread: boolean;
  /** Events in the serving snapshot refreshed after this run's initial copy; null without one. */
  snapshotEvents: number | null;
}

/** Empties the rows an interrupted initial copy left, so the next copy starts clean. */
function clearReplica(db: Db): void {
  db.transaction(() => {
    db.exec("DELETE FROM events; DELETE FROM venues; DELETE FROM venue_rtree; DELETE FROM upstream_rejects;");
    stopTracking(db);
  });
}

export async function syncFromPostgres(
  db: Db,
  spec: string,
  options: PostgresSyncOptions = {},
): Promise<PostgresSummary> {
  const source = parsePostgresUrl(spec);
  const started = performance.now();
  assertFollowsPostgres(db);
  const slot = slotOf(db, options.slot);
  const publication = publicationName(source.schema);
  const summary: PostgresSummary = {
    source: source.display,
    slot,
    publication,
    copied: 0,
    changes: 0,
    rejects: 0,
    position: null,
    watermark: readWatermark(db),
    lagBytes: null,
    elapsedMs: 0,
    rowsPerSecond: 0,
    copyWriterThread: false,
    snapshotEvents: null,
  };
  const progress = (phase: PostgresProgress["phase"]) =>
    options.onProgress?.({
      phase,
      total,
      copied: summary.copied,
      changes: summary.changes,
      elapsedMs: performance.now() - started,
    });
  const rejected = (rejects: readonly Reject[]) => {
    summary.rejects += rejects.length;
    for (const r of rejects) options.onReject?.(r);
  };
  const applier = new ChangeApplier(db, options.now);
  let total = 0;

  const client = await connect(source);
  try {
    try {
      await assertReady(client, source);
      await ensurePublication(client, source, publication);
    } catch (err) {
      throw explain(err, source);
    }
    const state = readUpstreamState(db);
    if (state.position === null || options.resync) {
      // No finished copy: a slot left by an interrupted one points past rows never copied.
      const existing = await slotExists(client, slot);
      if (existing?.active)
        throw new UpstreamError(`replication slot ${slot} is in use by another process; stop it first`);
      if (existing && state.slot !== slot) {
        // Not one this replica made: it may be another replica's, which must keep its changes.
        throw new UpstreamError(
          `replication slot ${slot} already exists at ${source.display} and is not this replica's; choose another --slot, or drop that one if nothing uses it`,
        );
      }
      if (existing) await client.query("SELECT pg_drop_replication_slot($1)", [slot]);
      // A resync stopped half way must not look like a replica that finished a copy.
      if (options.resync) writeUpstreamState(db, { position: null });
      if (readWatermark(db) > 0) clearReplica(db);
      writeUpstreamState(db, { kind: "postgres", slot });
      options.onChecked?.();
      const copied = await initialCopy(source, slot, applier, options, (n, rows, rejects) => {
        total = rows;
        summary.copied = n;
        rejected(rejects);
        progress("copy");
      });
      summary.position = copied.position;
      summary.copyWriterThread = copied.writerThread;
      summary.snapshotEvents = copied.snapshotEvents;
    } else {
      const existing = await slotExists(client, slot);
      if (existing?.active)
        throw new UpstreamError(
          `replication slot ${slot} is in use by another process (a sync or server of this replica, or of a copy of it); ` +
            "stop it first, or give this replica a slot of its own with --resync --slot NEW_NAME",
        );
      if (!existing) {
        throw new ReplicaBehindError(
          `replication slot ${slot} is gone from ${source.display}, so changes since position ${state.position} are lost; ` +
            "run marquee sync with --resync: the replica copies the tables anew",
        );
      }
      if (existing.confirmed !== null && compareLsn(state.position, existing.confirmed) < 0) {
        throw new ReplicaBehindError(
          `this replica (${db.path}) is at position ${state.position} but its replication slot ${slot} at ${source.display} ` +
            `confirmed ${existing.confirmed}: it was restored from a backup or copied, or another replica follows the same slot, ` +
            "so the changes in between are lost to it; run marquee sync with --resync to copy the tables again " +
            "(a copy meant to go on beside the original: --resync --slot NEW_NAME)",
        );
      }
      if (state.slot !== slot) writeUpstreamState(db, { slot });
      summary.position = state.position;
      options.onChecked?.();
    }
    progress("stream");
    // A one-off run stops once it has read what the server has flushed: every committed
    // transaction (with synchronous_commit on). The insert position may lie beyond records the
    // server has not flushed yet and that no commit will flush soon.
    const until = options.follow
      ? undefined
      : (await client.query<{ lsn: string }>("SELECT pg_current_wal_flush_lsn()::text AS lsn")).rows[0].lsn;
    const lagTimer = options.onLag
      ? setInterval(() => void readLag(client, slot).then(options.onLag, () => {}), options.lagEveryMs ?? LAG_EVERY_MS)
      : undefined;
    lagTimer?.unref?.();
    let streamed: Awaited<ReturnType<typeof streamChanges>>;
    try {
      streamed = await streamChanges(source, applier, {
        slot,
        publication,
        position: summary.position!,
        until,
        signal: options.signal,
        onStart: options.onStreaming,
        onApplied: (result, position, changes) => {
          summary.changes += changes;
          summary.position = position;
          rejected(result.rejects);
          progress("stream");
          options.onApplied?.(result, position);
        },
      });
    } finally {
      clearInterval(lagTimer);
    }
    summary.position = streamed.position;
    summary.lagBytes = await readLag(client, slot).catch(() => null);
  } finally {
    await client.end().catch(() => {});
  }
  summary.watermark = readWatermark(db);
  summary.elapsedMs = performance.now() - started;
  summary.rowsPerSecond = summary.elapsedMs > 0 ? ((summary.copied + summary.changes) * 1000) / summary.elapsedMs : 0;
  return summary;
}

/**
 * Creates the slot, exporting its starting snapshot, and copies both tables in it. The
 * replication connection that created the slot must stay open and idle until the copy has
 * taken its snapshot: the export lives only that long.
 */
async function initialCopy(
  source: PostgresSource,
  slot: string,
  applier: ChangeApplier,
  options: PostgresSyncOptions,
  onBatch: (copied: number, total: number, rejects: Reject[]) => void,
): Promise<{ position: string; writerThread: boolean; snapshotEvents: number | null }> {
  const replication = await connect(source, true);
  try {
    let created: { consistent_point: string; snapshot_name: string };
    try {
      created = (await replication.query(`CREATE_REPLICATION_SLOT ${ident(slot)} LOGICAL pgoutput (SNAPSHOT 'export')`))
        .rows[0];
    } catch (err) {
      throw explain(err, source);
    }
    const copier = await connect(source);
    let result: CopyCounts;
    try {
      let reported = 0;
      result = await copyTables(copier, source, created.snapshot_name, created.consistent_point, applier, {
        batchSize: options.copyBatchSize ?? COPY_BATCH_ROWS,
        threadMinRows: options.copyThreadMinRows ?? COPY_THREAD_MIN_ROWS,
        now: options.now ?? Date.now,
        signal: options.signal,
        onBatch: (counts) => {
          onBatch(counts.copied, counts.total, counts.rejects.slice(reported));
          reported = counts.rejects.length;
        },
      });
    } catch (err) {
      throw err instanceof SyntaxError ? err : explain(err, source);
    } finally {
      await copier.end().catch(() => {});
    }
    return {
      position: created.consistent_point,
      writerThread: result.writerThread,
      snapshotEvents: result.snapshotEvents,
    };
  } finally {
    await replication.end().catch(() => {});
  }
}

const LAG_EVERY_MS = 2000;

/** Rows per transaction of the initial copy. */
const COPY_BATCH_ROWS = 5000;
