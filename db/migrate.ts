import type { Db } from "./driver.ts";

/** A versioned migration: `PRAGMA user_version` records the last one applied. */
export interface Migration {
  version: number;
  sql: string;
}

/** Applies every migration newer than the file's `user_version`, each in its own transaction. */
export function migrate(db: Db, migrations: readonly Migration[]): number {
  let current = Number(db.pragma("user_version"));
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    if (m.version <= current) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.exec(`PRAGMA user_version = ${m.version}`);
    });
    current = m.version;
  }
  return current;
}
