import type { Db } from "./driver.ts";

/** A versioned migration: `PRAGMA user_version` records the last one applied. */
export interface Migration {
  version: number;
  sql: string;
}

/**
 * Applies every migration newer than the file's `user_version`, each in its own transaction; a
 * new file gets them all in one (one commit, so one sync to disk: a new replica or ledger, a test
 * instance's say, is ready sooner).
 */
export function migrate(db: Db, migrations: readonly Migration[]): number {
  let current = Number(db.pragma("user_version"));
  const pending = [...migrations].sort((a, b) => a.version - b.version).filter((m) => m.version > current);
  if (current === 0 && pending.length > 0) {
    const last = pending[pending.length - 1].version;
    db.transaction(() => {
      for (const m of pending) db.exec(m.sql);
      db.exec(`PRAGMA user_version = ${last}`);
    });
    return last;
  }
  for (const m of pending) {
    db.transaction(() => {
      db.exec(m.sql);
      db.exec(`PRAGMA user_version = ${m.version}`);
    });
    current = m.version;
  }
  return current;
}
