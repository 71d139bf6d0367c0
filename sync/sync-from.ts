/**
 * The sync worker (docs/upstream-records.md; docs/api.md, Serving snapshot): reads records from a source, validates each line, applies
 * them in batches (one transaction each, the `seq` watermark advanced in the same transaction)
 * and refreshes the serving snapshot at the end.
 *
 * Failure semantics: a bad line fails the run with its line number. The batch it belongs to is
 * never applied (records are validated before their batch's transaction starts), so nothing is
 * half-applied. Batches committed before it stay applied; the watermark makes the next run skip
 * them and resume right after. The same holds after `kill -9`: every committed batch carries its
 * watermark, so a rerun ends in exactly the state of an uninterrupted run. Who parses a batch
 * (this thread, or a writer thread that has time to spare) changes none of this (sync/pipeline.ts).
 */
import { SYNC } from "../db/contract.ts";
import type { Db } from "../db/driver.ts";
import { readWatermark } from "../db/replica.ts";
import { type BatchCounts, BatchPipeline, type HandOff } from "./pipeline.ts";
import { RecordError } from "./records.ts";
import { snapshotLags } from "./serving-snapshot.ts";
import type { RecordSource, SourcePosition } from "./source.ts";
import { applyBulkSettings, type BatchWriter, openWriter } from "./writer.ts";

export interface SyncProgress {
  /** What the run is doing: reading and applying records, or rebuilding the snapshot. */
  phase: "apply" | "snapshot";
  bytes: number;
  totalBytes: number | undefined;
  lines: number;
  applied: number;
  skipped: number;
  elapsedMs: number;
}

/** The batch counts (lines, records, applied, skipped, batches, watermark) and the rest of a run. */
export interface SyncSummary extends BatchCounts {
  source: string;
  /** Events in the snapshot after the run's refresh; null when the run needed none. */
  snapshotEvents: number | null;
  /** Time spent refreshing the snapshot, included in `elapsedMs`. */
  snapshotMs: number;
  /** Bytes of the input read through (a file offset). */
  bytes: number;
  elapsedMs: number;
  /** Where the input was read to: a later run over the same file may start here. */
  position: SourcePosition;
  /** Whether a writer thread applied the batches (Bun, large or unsized inputs; sync/writer.ts). */
  writerThread: boolean;
}

export interface SyncOptions {
  batchSize?: number;
  /** "now" for the snapshot's timestamp. */
  now?: () => number;
  onProgress?: (p: SyncProgress) => void;
  /** Called after each snapshot refresh (the serving process drops its caches). */
  onSnapshot?: (events: number) => void;
  /** Least time between refreshes while a following source keeps delivering. */
  snapshotEveryMs?: number;
  /** Who parses batches (sync/pipeline.ts); "balance" unless a test says otherwise. */
  handOff?: HandOff;
}

/** A failed run: the line that failed, and what the run had committed before it. */
export class SyncError extends Error {
  constructor(
    readonly line: number,
    message: string,
    readonly summary: SyncSummary,
  ) {
    super(message);
  }
}

export { refreshServingSnapshot, refreshSnapshotIfStale } from "./serving-snapshot.ts";

export async function syncFrom(db: Db, source: RecordSource, options: SyncOptions = {}): Promise<SyncSummary> {
  const restore = applyBulkSettings(db);
  try {
    const remaining = source.size === undefined ? undefined : source.size - (source.startOffset ?? 0);
    const writer = await openWriter(db, remaining);
    try {
      return await run(db, source, writer, options);
    } finally {
      await writer.close();
    }
  } finally {
    restore();
  }
}

async function run(db: Db, source: RecordSource, writer: BatchWriter, options: SyncOptions): Promise<SyncSummary> {
  const now = options.now ?? Date.now;
  const started = performance.now();
  const summary: SyncSummary = {
    source: source.name,
    lines: 0,
    records: 0,
    applied: 0,
    skipped: 0,
    batches: 0,
    watermark: readWatermark(db),
    snapshotEvents: null,
    snapshotMs: 0,
    bytes: 0,
    elapsedMs: 0,
    position: { offset: 0, line: 0 },
    writerThread: writer.threaded,
  };
  const batches = new BatchPipeline(
    writer,
    summary,
    options.batchSize ?? SYNC.batchSize,
    summary.watermark,
    options.handOff ?? "balance",
  );
  let lastRefresh = 0;

  const progress = (phase: SyncProgress["phase"] = "apply") => {
    summary.elapsedMs = performance.now() - started;
    options.onProgress?.({
      phase,
      bytes: summary.bytes,
      totalBytes: source.size,
      lines: summary.lines,
      applied: summary.applied,
      skipped: summary.skipped,
      elapsedMs: summary.elapsedMs,
    });
  };
  /**
   * A bad line or a failed batch ends the run. The batches sent before it come first: they are
   * committed (or one of them holds an earlier bad line, which is then the one reported).
   */
  const failed = async (err: unknown): Promise<unknown> => {
    let cause = err;
    if (cause !== batches.failure) await batches.settle().catch((earlier: unknown) => (cause = earlier));
    await batches.drain();
    if (!(cause instanceof RecordError)) return cause;
    summary.elapsedMs = performance.now() - started;
    const kept =
      summary.applied > 0 ? `; ${summary.applied} records before it stay applied (watermark ${summary.watermark})` : "";
    return new SyncError(cause.line, `${cause.message}${kept}`, summary);
  };
  /** Everything read so far, committed. */
  const flush = async () => {
    try {
      await batches.flush();
    } catch (err) {
      throw await failed(err);
    }
  };
  const refreshNow = async () => {
    progress("snapshot");
    const t = performance.now();
    // On the writer's connection, whose page cache holds what the batches wrote; this one
    // meanwhile copies the committed batches into the database file, so the run's final
    // checkpoint has only the refresh's own pages left to copy.
    const refreshing = writer.refresh(now());
    if (writer.threaded) db.exec("PRAGMA wal_checkpoint(PASSIVE)");
    summary.snapshotEvents = await refreshing;
    summary.snapshotMs += performance.now() - t;
    options.onSnapshot?.(summary.snapshotEvents);
    batches.appliedSince = false;
    lastRefresh = performance.now();
  };

  for await (const chunk of source.chunks()) {
    for (let i = 0; i < chunk.lines.length; i++) {
      const text = chunk.lines[i];
      const lineNo = chunk.firstLine + i;
      summary.lines = lineNo;
      try {
        if (text.trim() === "") batches.blank();
        else {
          const sending = batches.add(text, lineNo, !chunk.wide?.has(i));
          if (sending) await sending;
        }
      } catch (err) {
        throw await failed(err);
      }
    }
    summary.bytes = chunk.endOffset;
    summary.position = { offset: chunk.endOffset, line: chunk.firstLine - 1 + chunk.lines.length };
    if (chunk.caughtUp) {
      // A following source has delivered all there is for now: commit it, refresh now and then.
      await flush();
      const every = options.snapshotEveryMs ?? SYNC.followSnapshotMs;
      if (batches.appliedSince && performance.now() - lastRefresh >= every) {
        await refreshNow();
        db.exec("PRAGMA wal_checkpoint(PASSIVE)"); // a following run never ends: keep the WAL short
      }
    }
    progress();
    // Let the event loop breathe between chunks (signals, a serving process's requests).
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  await flush();
  if (batches.appliedSince || snapshotLags(db)) await refreshNow();
  // One checkpoint for the whole run instead of one per commit (see BULK_PRAGMAS).
  if (summary.applied > 0) db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  progress();
  return summary;
}
