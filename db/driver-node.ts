// better-sqlite3 adapter. Runtime-specific on purpose: only Node loads this file.
import { createRequire } from "node:module";
import type BetterSqlite3 from "better-sqlite3";
import { type BindParams, createDb, type Db, type OpenOptions } from "./sqlite-connection.ts";

const require = createRequire(import.meta.url);
const Database = require("better-sqlite3") as typeof BetterSqlite3;

export function open(path: string, options: OpenOptions): Db {
  const raw = new Database(path, { readonly: Boolean(options.readonly), fileMustExist: Boolean(options.readonly) });
  return createDb(
    path,
    {
      exec: (sql) => void raw.exec(sql),
      prepare(sql) {
        const s = raw.prepare(sql);
        // better-sqlite3 refuses all() and get() on a statement that returns no rows (a pragma
        // that sets something, an INSERT): run it and answer no rows, as bun:sqlite does.
        const returnsRows = s.reader;
        return {
          all: (...p: BindParams) => {
            if (returnsRows) return s.all(...p) as Record<string, unknown>[];
            s.run(...p);
            return [];
          },
          get: (...p: BindParams) => {
            if (returnsRows) return s.get(...p) as Record<string, unknown> | undefined;
            s.run(...p);
            return undefined;
          },
          run: (...p: BindParams) => {
            const r = s.run(...p);
            return { changes: r.changes, lastInsertRowid: r.lastInsertRowid };
          },
        };
      },
      preparePragma(sql) {
        const s = raw.prepare(sql);
        if (!s.reader) {
          // A pragma that sets something returns no row.
          return () => {
            s.run();
            return undefined;
          };
        }
        s.pluck();
        return () => s.get();
      },
      inTransaction: () => raw.inTransaction,
      close: () => raw.close(),
    },
    options,
  );
}
