/**
 * Online copies of the replica and the ledger (docs/operations.md, Backups): SQLite's
 * `VACUUM INTO` reads the file in one read transaction, so the copy is the state of one moment,
 * WAL included, while a server keeps reading and writing it. It runs through the driver seam
 * (db/driver.ts), the same SQL on bun:sqlite and better-sqlite3; no `sqlite3` shell is needed.
 */
import { existsSync, renameSync, rmSync, statSync } from "node:fs";
import { openDb } from "./driver.ts";
import { readSchemaVersion } from "./migrate.ts";

export interface BackupCopy {
  from: string;
  to: string;
  bytes: number;
  schemaVersion: number;
}

export class BackupError extends Error {}

/**
 * Copies the database at `from` to `to` (which must not exist), checks the copy
 * (`PRAGMA quick_check`) and only then gives it its name: a failed backup leaves nothing that
 * looks like one.
 */
export async function backupDatabase(from: string, to: string): Promise<BackupCopy> {
  if (!existsSync(from)) throw new BackupError(`no database at ${from}`);
  if (existsSync(to)) throw new BackupError(`${to} exists already; back up into an empty folder`);
  const partial = `${to}.partial`;
  rmSync(partial, { force: true });
  const source = await openDb(from, { readonly: true });
  try {
    source.exec(`VACUUM INTO '${partial.replaceAll("'", "''")}'`);
  } catch (err) {
    rmSync(partial, { force: true });
    throw new BackupError(`could not copy ${from}: ${(err as Error).message}`);
  } finally {
    source.close();
  }
  const copy = await openDb(partial, { readonly: true });
  let check: unknown;
  let schemaVersion: number;
  try {
    check = copy.pragma("quick_check");
    schemaVersion = readSchemaVersion(copy);
  } finally {
    copy.close();
  }
  if (check !== "ok") {
    rmSync(partial, { force: true });
    throw new BackupError(`the copy of ${from} failed its check: ${String(check)}`);
  }
  renameSync(partial, to);
  return { from, to, bytes: statSync(to).size, schemaVersion };
}
