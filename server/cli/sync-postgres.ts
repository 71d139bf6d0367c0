/**
 * `marquee sync --from postgres://…` (docs/postgres.md, "Follow your PostgreSQL"): the initial
 * copy and the slot's changes, a progress line on a terminal, one summary line always.
 */
import type { Db } from "../../db/driver.ts";
import { createRefresher } from "../../sync/postgres/refresher.ts";
import { dropSlot } from "../../sync/postgres/slot.ts";
import { type PostgresProgress, type PostgresSummary, syncFromPostgres } from "../../sync/postgres/sync.ts";
import { refreshServingSnapshot, snapshotLags } from "../../sync/serving-snapshot.ts";
import { applyBulkSettings } from "../../sync/writer.ts";
import { abortOnSignals, UsageError } from "./args.ts";

const n = (x: number) => Math.round(x).toLocaleString("en-US");

/** Most time a change waits for its snapshot refresh while `--follow` streams: well under the 1 s a change may take to be served. */
const FOLLOW_REFRESH_MS = 200;

export function formatPostgresSummary(s: PostgresSummary): string {
  return (
    `synced postgres ${s.source}: ${n(s.copied)} rows copied, ${n(s.changes)} changes applied, ${n(s.rejects)} rejected ` +
    `in ${(s.elapsedMs / 1000).toFixed(1)} s, ${n(s.rowsPerSecond)} rows/s; slot ${s.slot}, lag ` +
    `${s.lagBytes === null ? "unknown" : `${n(s.lagBytes)} bytes`}, position ${s.position ?? "none"}; ` +
    (s.snapshotEvents === null ? "snapshot unchanged" : `snapshot ${n(s.snapshotEvents)} events`)
  );
}

const BAR_WIDTH = 28;

function progressLine(p: PostgresProgress): string {
  const rate = p.elapsedMs > 0 ? ((p.copied + p.changes) * 1000) / p.elapsedMs : 0;
  if (p.phase === "stream") return `streaming  ${n(p.copied)} rows copied, ${n(p.changes)} changes applied`;
  const fraction = p.total > 0 ? Math.min(1, p.copied / p.total) : 0;
  const filled = Math.round(fraction * BAR_WIDTH);
  const bar = "#".repeat(filled) + ".".repeat(BAR_WIDTH - filled);
  return `copying [${bar}] ${String(Math.floor(fraction * 100)).padStart(3)}%  ${n(p.copied)} of ${n(p.total)} rows  ${n(rate)} rows/s`;
}

/**
 * The run's snapshot refresh with an import's bulk settings (sync/writer.ts: sorter threads, no
 * automatic checkpoints), then one checkpoint. The initial copy rebuilds the snapshot itself
 * (sync/postgres/copy.ts); this refresh covers the changes applied after it, or a full rebuild
 * when a run was stopped between the copy's last commit and its rebuild.
 */
function refreshAfterSync(db: Db): number {
  const restore = applyBulkSettings(db);
  try {
    const events = refreshServingSnapshot(db, Date.now());
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    return events;
  } finally {
    restore();
  }
}

export async function runPostgresSync(
  db: Db,
  spec: string,
  flags: {
    follow: boolean;
    slot?: string;
    dropSlot: boolean;
    resync?: boolean;
    json: boolean;
    batchSize?: number;
    threadRows?: number;
  },
): Promise<number> {
  if (flags.dropSlot && flags.resync)
    throw new UsageError("--drop-slot and --resync contradict each other (--resync makes the slot anew)");
  if (flags.dropSlot) {
    const { slot, dropped } = await dropSlot(db, spec, flags.slot);
    const human = dropped
      ? `dropped replication slot ${slot}; the next sync copies the tables again`
      : `no replication slot ${slot} to drop`;
    console.log(flags.json ? JSON.stringify({ slot, dropped }) : human);
    return 0;
  }
  const controller = new AbortController();
  const release = abortOnSignals(controller);
  const tty = Boolean(process.stderr.isTTY);
  let drawn = 0;
  const refresher = createRefresher(db, { gapMs: FOLLOW_REFRESH_MS, now: Date.now });
  try {
    const summary = await syncFromPostgres(db, spec, {
      slot: flags.slot,
      follow: flags.follow,
      resync: flags.resync,
      copyBatchSize: flags.batchSize,
      copyThreadMinRows: flags.threadRows,
      signal: controller.signal,
      onProgress: (p) => {
        if (!tty || performance.now() - drawn < 100) return;
        drawn = performance.now();
        process.stderr.write(`\r\x1b[2K${progressLine(p)}`);
      },
      onReject: (r) => console.error(`marquee sync: rejected ${r.table} ${r.id}: ${r.reason}`),
      onApplied: () => {
        if (flags.follow) refresher.changed();
      },
    });
    refresher.cancel();
    if (tty) process.stderr.write("\r\x1b[2K");
    // The initial copy refreshed the snapshot itself; changes streamed after it need another.
    let snapshotEvents = summary.snapshotEvents;
    if (snapshotLags(db)) snapshotEvents = refreshAfterSync(db);
    else if (summary.copied > 0) db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    const full = { ...summary, snapshotEvents };
    console.log(flags.json ? JSON.stringify(full) : formatPostgresSummary(full));
    return 0;
  } finally {
    refresher.cancel();
    release();
  }
}
