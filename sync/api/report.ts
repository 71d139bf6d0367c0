/**
 * What a pass tells its operator (docs/operations.md, The program): a progress line redrawn in
 * place on a terminal, and one summary line always, saying whether the pass was complete and,
 * when not, why it removed nothing.
 */
import type { PassProgress, PassSummary } from "./pass.ts";

/** Said before the first pass spends it: `--aggregators` costs a second walk. */
export const AGGREGATORS_NOTE =
  "--aggregators: every pass walks the scope twice (once with exclude_aggregators=true), spending about twice the rows";

const n = (x: number) => Math.round(x).toLocaleString("en-US");
const count = (x: number, what: string) => `${n(x)} ${what}${x === 1 ? "" : "s"}`;
const REDRAW_MS = 100;

export function formatPassProgress(label: string, p: PassProgress): string {
  if (p.phase === "sweep") return `${label}  ${n(p.events)} events; removing what the pass did not see …`;
  if (p.phase === "snapshot") return `${label}  ${n(p.events)} events; refreshing the serving snapshot …`;
  const walk = p.walk === "aggregators" ? "aggregator walk" : p.source ? `source ${p.source}` : "events";
  return `${label}  ${walk}, window ${p.window}  ${n(p.events)} events  ${n(p.pages)} pages  ${n(p.rows)} rows`;
}

/** A progress line on `stream` (a TTY); no-ops elsewhere, so pipes and logs stay clean. */
export function createPassProgress(stream: { isTTY?: boolean; write(s: string): unknown }, label: string) {
  if (!stream.isTTY) return { update: (_p: PassProgress) => {}, clear: () => {} };
  let last = 0;
  let shown = false;
  return {
    update(p: PassProgress) {
      const now = performance.now();
      if (now - last < REDRAW_MS && p.phase === "walk") return;
      last = now;
      shown = true;
      stream.write(`\r\x1b[2K${formatPassProgress(label, p)}`);
    },
    clear() {
      if (shown) stream.write("\r\x1b[2K");
    },
  };
}

export function formatPassSummary(s: PassSummary): string {
  const seconds = (s.elapsedMs / 1000).toFixed(1);
  const aggregators = s.aggregatorRows > 0 ? ` (${n(s.aggregatorRows)} of them on the aggregator walk)` : "";
  const spent = `${count(s.pages, "page")}, ${count(s.rows, "row")} spent${aggregators}, ${count(s.requests, "request")}`;
  const waits = s.rateLimited > 0 ? ` (${n(s.rateLimited)} rate-limited, waited out)` : "";
  const snapshot = s.snapshotEvents === null ? "snapshot unchanged" : `snapshot ${n(s.snapshotEvents)} events`;
  if (s.complete)
    return (
      `synced ${s.source}: ${count(s.upserted, "event")} upserted, ${n(s.removed)} removed; ` +
      `${spent}${waits} in ${seconds} s; ${snapshot}`
    );
  const why = s.cutShort!.reason === "refused" ? "stopped" : `cut short (${s.cutShort!.reason})`;
  return (
    `pass over ${s.source} ${why}: ${s.cutShort!.message}; ${count(s.upserted, "event")} upserted, nothing removed; ` +
    `${spent}${waits} in ${seconds} s; ${snapshot}`
  );
}
