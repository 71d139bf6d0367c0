// bun:sqlite adapter. Runtime-specific on purpose: only Bun loads this file.
import { Database, type SQLQueryBindings } from "bun:sqlite";
import { type BindParams, createDb, type Db, type OpenOptions } from "./sqlite-connection.ts";

export function open(path: string, options: OpenOptions): Db {
  const raw = new Database(path, { strict: true, readonly: options.readonly, create: !options.readonly });
  return createDb(
    path,
    {
      exec: (sql) => void raw.exec(sql),
      prepare(sql) {
        const s = raw.prepare<Record<string, unknown>, SQLQueryBindings[]>(sql);
        return {
          all: (...p: BindParams) => s.all(...(p as SQLQueryBindings[])),
          // bun:sqlite answers null for no row.
          get: (...p: BindParams) => s.get(...(p as SQLQueryBindings[])) ?? undefined,
          run: (...p: BindParams) => {
            const r = s.run(...(p as SQLQueryBindings[]));
            return { changes: r.changes, lastInsertRowid: r.lastInsertRowid };
          },
        };
      },
      preparePragma(sql) {
        const s = raw.prepare<Record<string, unknown>, []>(sql);
        return () => {
          // A pragma that sets something returns no row.
          const row = s.get();
          return row ? Object.values(row)[0] : undefined;
        };
      },
      inTransaction: () => raw.inTransaction,
      close: () => raw.close(),
    },
    options,
  );
}
