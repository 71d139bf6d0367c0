/**
 * The initial copy of a PostgreSQL upstream: both tables read inside the snapshot exported when
 * the replication slot was created, so the copy and the slot's changes after it meet exactly
 * (docs/upstream-records.md, "PostgreSQL"). Rows leave PostgreSQL as JSON through COPY, a few
 * thousand to a SQLite transaction; the last transaction also commits the slot's starting
 * position, which is what marks the copy complete.
 */
import type pg from "pg";
import { to as copyTo } from "pg-copy-streams";
import type { ChangeApplier, Change, Reject } from "./apply.ts";
import { ident, UPSTREAM_COLUMNS, type PostgresSource, type UpstreamTable } from "./schema.ts";

export interface CopyCounts {
  copied: number;
  rejects: Reject[];
}

/**
 * A timestamptz as the record form `YYYY-MM-DDTHH:MM:SSZ` (fractions only when present), which
 * the record checks read fastest; the stream's values come the same way (sync/postgres/records.ts).
 */
const instantText = (column: string) =>
  `to_char(${column} AT TIME ZONE 'UTC', CASE WHEN date_trunc('second', ${column}) = ${column} ` +
  `THEN 'YYYY-MM-DD"T"HH24:MI:SS"Z"' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"' END) AS ${column}`;

/** One JSON object a row, with the columns Marquee reads. */
function copySql(source: PostgresSource, table: UpstreamTable): string {
  const columns = UPSTREAM_COLUMNS[table].map((c) => (c === "start_date" || c === "end_date" ? instantText(c) : c));
  return `COPY (SELECT row_to_json(t) FROM (SELECT ${columns.join(", ")} FROM ${ident(source.schema)}.${ident(table)} ORDER BY id) t) TO STDOUT`;
}

/** COPY's text format doubles backslashes (row_to_json's output holds no other character it escapes). */
const unescape = (line: string) => (line.includes("\\") ? line.replace(/\\(.)/g, (_, c: string) => (c === "\\" ? "\\" : `\\${c}`)) : line);

async function* copyLines(client: pg.Client, sql: string): AsyncGenerator<string> {
  const stream = client.query(copyTo(sql));
  const decoder = new TextDecoder();
  let rest = "";
  for await (const chunk of stream as AsyncIterable<Uint8Array>) {
    const text = rest + decoder.decode(chunk, { stream: true });
    const lines = text.split("\n");
    rest = lines.pop()!;
    for (const line of lines) yield line;
  }
  if (rest !== "") yield rest;
}

/**
 * Copies both tables in `snapshot` (an exported snapshot name) through `applier`, `batchSize`
 * rows to a transaction, and commits `position` with the last one.
 */
export async function copyTables(
  client: pg.Client,
  source: PostgresSource,
  snapshot: string,
  position: string,
  applier: ChangeApplier,
  options: { batchSize: number; onBatch?: (counts: CopyCounts) => void; signal?: AbortSignal },
): Promise<CopyCounts> {
  const counts: CopyCounts = { copied: 0, rejects: [] };
  await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  try {
    await client.query(`SET TRANSACTION SNAPSHOT '${snapshot.replaceAll("'", "''")}'`);
    // Dates as UTC ISO text, the form an NDJSON record gives them.
    await client.query("SET LOCAL TimeZone = 'UTC'");
    let batch: Change[] = [];
    const flush = (last: boolean) => {
      const result = applier.apply(batch, last ? position : null, { fresh: true });
      counts.copied += batch.length;
      counts.rejects.push(...result.rejects);
      batch = [];
      options.onBatch?.(counts);
    };
    for (const table of ["venues", "events"] as UpstreamTable[]) {
      for await (const line of copyLines(client, copySql(source, table))) {
        if (options.signal?.aborted) throw new Error("stopped during the initial copy; run it again to start the copy over");
        batch.push({ op: "upsert", table, row: JSON.parse(unescape(line)) });
        if (batch.length >= options.batchSize) flush(false);
      }
    }
    flush(true);
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  }
  return counts;
}
