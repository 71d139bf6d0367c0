// bun:sqlite adapter. Runtime-specific on purpose: only Bun loads this file.
import { Database } from "bun:sqlite";
import { applyPragmas, type BindParams, type Db, type OpenOptions, type Statement } from "./driver.ts";

export function open(path: string, options: OpenOptions): Db {
  const raw = new Database(path, { strict: true, readonly: options.readonly, create: !options.readonly });
  const cache = new Map<string, Statement<any>>();
  const db: Db = {
    path,
    exec: (sql) => void raw.exec(sql),
    prepare<Row>(sql: string): Statement<Row> {
      let stmt = cache.get(sql);
      if (!stmt) {
        const s = raw.prepare(sql);
        stmt = {
          all: (...p: BindParams) => s.all(...(p as any[])) as Row[],
          get: (...p: BindParams) => (s.get(...(p as any[])) ?? undefined) as Row | undefined,
          run: (...p: BindParams) => {
            const r = s.run(...(p as any[]));
            return { changes: r.changes, lastInsertRowid: r.lastInsertRowid };
          },
        };
        cache.set(sql, stmt);
      }
      return stmt;
    },
    transaction<T>(fn: () => T): T {
      raw.exec("BEGIN IMMEDIATE");
      try {
        const out = fn();
        raw.exec("COMMIT");
        return out;
      } catch (err) {
        if (raw.inTransaction) raw.exec("ROLLBACK");
        throw err;
      }
    },
    pragma: (name) => {
      const row = raw.prepare(`PRAGMA ${name}`).get() as Record<string, unknown> | null;
      return row ? Object.values(row)[0] : undefined;
    },
    close: () => raw.close(),
  };
  applyPragmas(db, options);
  return db;
}
