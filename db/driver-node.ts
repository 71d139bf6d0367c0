// better-sqlite3 adapter. Runtime-specific on purpose: only Node loads this file.
import { createRequire } from "node:module";
import type BetterSqlite3 from "better-sqlite3";
import { applyPragmas, transactionRunner, type BindParams, type Db, type OpenOptions, type Statement } from "./driver.ts";

const require = createRequire(import.meta.url);
const Database = require("better-sqlite3") as typeof BetterSqlite3;

export function open(path: string, options: OpenOptions): Db {
  const raw = new Database(path, { readonly: Boolean(options.readonly), fileMustExist: Boolean(options.readonly) });
  const cache = new Map<string, Statement<any>>();
  // Pragma reads (data_version, synchronous) and transaction control run on every request:
  // prepared once here, not re-parsed per call (raw.pragma prepares on every call).
  const pragmas = new Map<string, BetterSqlite3.Statement>();
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
        const returnsRows = s.reader;
        stmt = {
          all: (...p: BindParams) => (returnsRows ? s.all(...p) : (s.run(...p), [])) as Row[],
          get: (...p: BindParams) => (returnsRows ? s.get(...p) : (s.run(...p), undefined)) as Row | undefined,
          run: (...p: BindParams) => {
            const r = s.run(...p);
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
      // A pragma that returns nothing (a setter) keeps better-sqlite3's own behaviour.
      return stmt.reader ? stmt.pluck().get() : raw.pragma(name, { simple: true });
    },
    close: () => raw.close(),
  };
  applyPragmas(db, options);
  return db;
}
