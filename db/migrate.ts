import type { Db } from "./driver.ts";

/** A versioned migration: `PRAGMA user_version` records the last one applied. */
export interface Migration {
  version: number;
  sql: string;
  /** Run after `sql`, in its transaction: what SQL alone cannot write. */
  fill?: (db: Db) => void;
}

/** Where migration lines go (docs/operations.md, Upgrades and schema versions). */
export type SchemaLog = (line: string) => void;

export const logToStderr: SchemaLog = (line) => console.error(line);

export interface MigrateOptions {
  /** What the file is, for log lines and refusals: `replica data/marquee.db`. */
  name?: string;
  /** One line per migration applied to a file that had a schema already; a new file is created silently. */
  log?: SchemaLog;
}

/**
 * Refused before anything is written: a file whose schema is newer than every migration this
 * build knows was written by a newer Marquee, whose tables and meanings this build cannot read.
 */
export class NewerSchemaError extends Error {}

export function latestVersion(migrations: readonly Migration[]): number {
  return migrations.reduce((max, m) => Math.max(max, m.version), 0);
}

export function readSchemaVersion(db: Db): number {
  return Number(db.pragma("user_version"));
}

/** Throws NewerSchemaError when the file's schema version is above the latest of `migrations`. */
export function assertSchemaKnown(db: Db, migrations: readonly Migration[], name = db.path): void {
  const found = readSchemaVersion(db);
  const known = latestVersion(migrations);
  if (found <= known) return;
  throw new NewerSchemaError(
    `${name} has schema version ${found}, written by a newer Marquee; this one knows up to version ${known}: ` +
      "run the newer Marquee, or restore a backup taken before the upgrade (docs/operations.md, Upgrades and schema versions)",
  );
}

/**
 * Applies every migration newer than the file's `user_version`, each in its own transaction,
 * after refusing a file from a newer Marquee; a new file gets them all in one (one commit, so one
 * sync to disk: a new replica or ledger, a test instance's say, is ready sooner).
 */
export function migrate(db: Db, migrations: readonly Migration[], options: MigrateOptions = {}): number {
  const name = options.name ?? db.path;
  assertSchemaKnown(db, migrations, name);
  let current = readSchemaVersion(db);
  const pending = [...migrations].sort((a, b) => a.version - b.version).filter((m) => m.version > current);
  if (current === 0 && pending.length > 0) {
    const last = pending[pending.length - 1].version;
    db.transaction(() => {
      for (const m of pending) {
        db.exec(m.sql);
        m.fill?.(db);
      }
      db.exec(`PRAGMA user_version = ${last}`);
    });
    return last;
  }
  for (const m of pending) {
    const started = performance.now();
    db.transaction(() => {
      db.exec(m.sql);
      m.fill?.(db);
      db.exec(`PRAGMA user_version = ${m.version}`);
    });
    (options.log ?? logToStderr)(
      `migrated ${name}: schema version ${current} → ${m.version} (${Math.round(performance.now() - started)} ms)`,
    );
    current = m.version;
  }
  return current;
}
