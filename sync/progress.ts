/**
 * What a sync run tells its operator: a progress bar redrawn in place on a terminal, and one
 * summary line always (docs/operations.md, The program).
 */
import type { SyncProgress, SyncSummary } from "./sync-from.ts";

const BAR_WIDTH = 28;
const REDRAW_MS = 100;

const n = (x: number) => Math.round(x).toLocaleString("en-US");
const rate = (count: number, ms: number) => (ms > 0 ? (count * 1000) / ms : 0);

function mib(bytes: number): string {
  return `${(bytes / 1048576).toFixed(bytes < 10 * 1048576 ? 1 : 0)} MiB`;
}

export function formatProgress(label: string, p: SyncProgress): string {
  const done = p.applied + p.skipped;
  if (p.phase === "snapshot") return `${label}  ${n(done)} records applied; refreshing the serving snapshot …`;
  const speed = `${n(rate(done, p.elapsedMs))} records/s`;
  if (p.totalBytes) {
    const fraction = Math.min(1, p.bytes / p.totalBytes);
    const filled = Math.round(fraction * BAR_WIDTH);
    const bar = "#".repeat(filled) + ".".repeat(BAR_WIDTH - filled);
    return `${label} [${bar}] ${String(Math.floor(fraction * 100)).padStart(3)}%  ${n(done)} records  ${speed}`;
  }
  return `${label}  ${n(done)} records  ${mib(p.bytes)}  ${speed}`;
}

/** A progress bar on `stream` (a TTY); returns no-ops elsewhere, so pipes and logs stay clean. */
export function createProgressBar(stream: { isTTY?: boolean; write(s: string): unknown }, label: string) {
  if (!stream.isTTY) return { update: (_p: SyncProgress) => {}, clear: () => {} };
  let last = 0;
  let shown = false;
  return {
    update(p: SyncProgress) {
      const now = performance.now();
      if (now - last < REDRAW_MS && p.phase === "apply") return;
      last = now;
      shown = true;
      stream.write(`\r\x1b[2K${formatProgress(label, p)}`);
    },
    clear() {
      if (shown) stream.write("\r\x1b[2K");
    },
  };
}

export function formatSummary(s: SyncSummary): string {
  const seconds = s.elapsedMs / 1000;
  const snapshot = s.snapshotEvents === null ? "snapshot unchanged" : `snapshot ${n(s.snapshotEvents)} events`;
  return (
    `synced ${s.source}: ${n(s.records)} records (${n(s.applied)} applied, ${n(s.skipped)} already applied) ` +
    `in ${seconds.toFixed(1)} s, ${n(rate(s.records, s.elapsedMs))} records/s; watermark ${n(s.watermark)}; ${snapshot}`
  );
}
