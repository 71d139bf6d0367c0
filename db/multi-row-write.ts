/**
 * Multi-row statements for many small writes in one transaction (the meter's groups,
 * server/limits/meter.ts). One statement per row costs a bind, a step and a reset each; one per
 * chunk of rows shares them. Chunks have a few fixed sizes, so each table prepares at most four
 * statements (the driver caches them by text).
 */
import type { Db, SqlValue } from "./driver.ts";

const CHUNKS = [64, 16, 4, 1] as const;

/**
 * Runs `sql(values)` over `rows`, where `values` is the `(?, …), (?, …)` list for a chunk and
 * every row has the same number of values.
 */
export function writeRows(db: Db, sql: (values: string) => string, rows: readonly SqlValue[][]): void {
  if (rows.length === 0) return;
  const tuple = `(${rows[0].map(() => "?").join(", ")})`;
  let at = 0;
  for (const size of CHUNKS) {
    if (rows.length - at < size) continue;
    const stmt = db.prepare(sql(Array(size).fill(tuple).join(", ")));
    for (; rows.length - at >= size; at += size) stmt.run(...rows.slice(at, at + size).flat());
  }
}
