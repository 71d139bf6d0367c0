/**
 * One `marquee serve` per ledger (docs/api.md, Plans and access). The meter keeps each
 * account's counters in the serving process (server/limits/meter.ts), so a second server on the
 * same ledger would grant every key its limits again and write delivered-row totals that clash
 * with the first server's: the first clash left that server answering 503 until it restarted.
 *
 * The server therefore holds an exclusive SQLite lock on a small file beside the ledger
 * (`<ledger>-serve.lock`) for its whole life. SQLite's locks are the operating system's, so the
 * lock goes with the process however it ends, kill -9 included, and a second server is refused
 * at start with one line instead.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { type Db, openDb } from "./driver.ts";
import { isLedgerBusy } from "./storage-failure.ts";

/**
 * Takes the lock, or throws (the one line `marquee serve` prints) when another process holds it.
 * The returned handle releases it on close (the process ending does too). A memory ledger needs
 * no lock.
 */
export async function lockLedgerForServing(ledgerPath: string): Promise<Db | null> {
  if (ledgerPath === ":memory:") return null;
  const path = `${ledgerPath}-serve.lock`;
  // The first start on a new path: the lock comes before the replica, which would create the folder.
  mkdirSync(dirname(path), { recursive: true });
  let db: Db | undefined;
  try {
    // No waiting: a lock that is held stays held while its server runs. A rollback journal (never
    // WAL, whose extra files a start would create for nothing) and exclusive locking mode: the
    // lock taken by the first write is kept until the connection closes. What the file holds only
    // says who took the lock, which is the operating system's: it is never synced to disk.
    db = await openDb(path, { busyTimeoutMs: 0, journalMode: "DELETE", synchronous: "OFF" });
    db.exec("PRAGMA locking_mode = EXCLUSIVE");
    db.exec("CREATE TABLE IF NOT EXISTS serving (pid INTEGER NOT NULL, since_ms INTEGER NOT NULL)");
    db.transaction(() => {
      db!.exec("DELETE FROM serving");
      db!.prepare("INSERT INTO serving (pid, since_ms) VALUES (?, ?)").run(process.pid, Date.now());
    });
    return db;
  } catch (err) {
    db?.close();
    if (isLedgerBusy(err)) {
      throw new Error(
        `another marquee serve is using the ledger ${ledgerPath} (one server per ledger; its lock is ${path})`,
      );
    }
    throw err;
  }
}
