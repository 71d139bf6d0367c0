// bun:sqlite adapter. Runtime-specific on purpose: only Bun loads this file.
import { Database } from "bun:sqlite";
import { applyPragmas, transactionRunner, type BindParams, type Db, type OpenOptions, type Statement } from "./driver.ts";

export function open(path: string, options: OpenOptions): Db {
  const raw = new Database(path, { strict: true, readonly: options.readonly, create: !options.readonly });
  const cache = new Map<string, Statement<any>>();
  // Pragma reads (data_version, synchronous) and transaction control run on every request:
  // prepared once here, not re-parsed per call.
  const pragmas = new Map<string, ReturnType<Database["prepare"]>>();
  const control = (sql: string) => {
    const s = raw.prepare(sql);
    return () => void s.run();
  };
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
    transaction: transactionRunner(control, () => raw.inTransaction),
    pragma: (name) => {
      let stmt = pragmas.get(name);
      if (!stmt) pragmas.set(name, (stmt = raw.prepare(`PRAGMA ${name}`)));
      const row = stmt.get() as Record<string, unknown> | null;
      return row ? Object.values(row)[0] : undefined;
    },
    close: () => raw.close(),
  };
  applyPragmas(db, options);
  return db;
}
