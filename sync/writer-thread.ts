/**
 * The writer thread of a bulk sync (sync/writer.ts): owns its own connection to the replica and
 * applies the batches the parsing thread sends, one transaction each, answering each when it is
 * committed, and refreshes the snapshot when asked. Batches of raw lines it parses first
 * (sync/lines.ts). Once a batch fails, later ones already sent are refused: a run stops at its
 * first failed batch. Bun only (a Bun Worker); everything it runs is the same code as the
 * in-thread path.
 */
import { type Db, openDb } from "../db/driver.ts";
import { applyRows } from "./apply.ts";
import { applyLines } from "./lines.ts";
import { RecordError } from "./records.ts";
import { refreshServingSnapshot } from "./serving-snapshot.ts";
import { applyBulkSettings, type FromWriter, lineBuffers, rowBuffers, type ToWriter } from "./writer.ts";

declare const self: Worker;

const reply = (m: FromWriter, transfer: Transferable[] = []) => self.postMessage(m, transfer);

/** The thread's connection and whether a batch failed live in this closure, for the thread's life. */
function serve(): void {
  let db: Db | undefined;
  let failed: string | undefined;

  self.onmessage = async (e: MessageEvent<ToWriter>) => {
    const m = e.data;
    try {
      if (failed !== undefined && (m.type === "batch" || m.type === "lines")) {
        return reply({ type: "failed", message: `not applied: an earlier batch failed (${failed})` });
      }
      switch (m.type) {
        case "open":
          db = await openDb(m.path, { synchronous: "NORMAL" });
          db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(m.busyTimeoutMs))}`);
          applyBulkSettings(db); // for this connection's life, which is the run's
          return reply({ type: "ready" });
        // A batch goes back with the answer: its arrays are the next batch's to fill.
        case "batch":
          return reply({ type: "applied", result: applyRows(db!, m.batch), rows: m.batch }, rowBuffers(m.batch));
        case "lines":
          return reply({ type: "applied", result: applyLines(db!, m.batch), lines: m.batch }, lineBuffers(m.batch));
        case "refresh":
          return reply({ type: "refreshed", events: refreshServingSnapshot(db!, m.nowMs) });
        case "close":
          db?.close();
          db = undefined;
          return reply({ type: "closed" });
      }
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (m.type === "batch" || m.type === "lines") failed = message;
      if (err instanceof RecordError) return reply({ type: "invalid", line: err.line, detail: err.detail });
      reply({ type: "failed", message });
    }
  };
}

serve();
