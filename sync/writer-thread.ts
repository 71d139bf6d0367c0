/**
 * The writer thread of a bulk sync (sync/writer.ts): owns its own connection to the replica and
 * applies the batches the parsing thread sends, one transaction each, answering each when it is
 * committed, and refreshes the snapshot when asked. Bun only (a Bun Worker); everything it runs is the same code as the in-thread path.
 */
import { openDb, type Db } from "../db/driver.ts";
import { applyRows } from "./apply.ts";
import { refreshServingSnapshot } from "./serving-snapshot.ts";
import { applyBulkSettings, type FromWriter, type ToWriter } from "./writer.ts";

declare const self: Worker;

let db: Db | undefined;
const reply = (m: FromWriter) => self.postMessage(m);

self.onmessage = async (e: MessageEvent<ToWriter>) => {
  const m = e.data;
  try {
    switch (m.type) {
      case "open":
        db = await openDb(m.path, { synchronous: "NORMAL" });
        db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(m.busyTimeoutMs))}`);
        applyBulkSettings(db); // for this connection's life, which is the run's
        return reply({ type: "ready" });
      case "batch":
        return reply({ type: "applied", result: applyRows(db!, m.batch) });
      case "refresh":
        return reply({ type: "refreshed", events: refreshServingSnapshot(db!, m.nowMs) });
      case "close":
        db?.close();
        db = undefined;
        return reply({ type: "closed" });
    }
  } catch (err) {
    reply({ type: "failed", message: err instanceof Error ? err.message : String(err) });
  }
};
