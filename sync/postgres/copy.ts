/**
 * The initial copy of a PostgreSQL upstream: both tables read inside the snapshot exported when
 * the replication slot was created, so the copy and the slot's changes after it meet exactly
 * (docs/upstream-records.md, "PostgreSQL tables"). Rows leave PostgreSQL as JSON through COPY and are
 * applied with an NDJSON import's bulk settings (sync/writer.ts), on this thread: PostgreSQL
 * renders the JSON in its own process meanwhile, and the writer thread of a bulk import made a
 * 103,596-row copy slower here (2.8 s against 1.4 s). The copy is
 * complete once its last transaction, on this connection, commits the slot's starting position
 * with the rejected rows; until then a rerun starts the copy over.
 */
import type pg from "pg";
import { to as copyTo } from "pg-copy-streams";
import { readWatermark } from "../../db/replica.ts";
import { encodeRecords } from "../rows.ts";
import { applyBulkSettings, inThreadWriter } from "../writer.ts";
import type { Change, ChangeApplier, Reject, Verdict } from "./apply.ts";
import { ident, type PostgresSource, UPSTREAM_COLUMNS, type UpstreamTable } from "./schema.ts";

export interface CopyCounts {
  /** Rows in both tables in the copy's snapshot. */
  total: number;
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
const unescapeCopy = (line: string) =>
  line.includes("\\") ? line.replace(/\\(.)/g, (_, c: string) => (c === "\\" ? "\\" : `\\${c}`)) : line;

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

/** Batches written but not yet committed, at most; the next one fills meanwhile. */
const MAX_OUTSTANDING = 2;

/**
 * Copies both tables in `snapshot` (an exported snapshot name) into the replica, `batchSize`
 * rows to a transaction, and commits `position` last.
 */
export async function copyTables(
  client: pg.Client,
  source: PostgresSource,
  snapshot: string,
  position: string,
  applier: ChangeApplier,
  options: { batchSize: number; onBatch?: (counts: CopyCounts) => void; signal?: AbortSignal },
): Promise<CopyCounts> {
  const db = applier.db;
  const counts: CopyCounts = { total: 0, copied: 0, rejects: [] };
  await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  try {
    await client.query(`SET TRANSACTION SNAPSHOT '${snapshot.replaceAll("'", "''")}'`);
    const { rows } = await client.query<{ n: string }>(
      `SELECT (SELECT count(*) FROM ${ident(source.schema)}.venues) + (SELECT count(*) FROM ${ident(source.schema)}.events) AS n`,
    );
    counts.total = Number(rows[0].n);
    options.onBatch?.(counts);
    const restore = applyBulkSettings(db);
    const writer = inThreadWriter(db);
    try {
      let seq = readWatermark(db);
      const verdicts: Verdict[] = [];
      const outstanding: Array<Promise<unknown>> = [];
      let batch: Change[] = [];
      const send = async () => {
        const prepared = applier.prepare(batch, seq, { fresh: true });
        seq = prepared.seq;
        verdicts.push(...prepared.verdicts);
        counts.rejects.push(...prepared.rejects);
        counts.copied += batch.length;
        batch = [];
        const written = writer.write(encodeRecords(prepared.records));
        written.catch(() => {}); // awaited below, in order
        outstanding.push(written);
        while (outstanding.length >= MAX_OUTSTANDING) await outstanding.shift();
        options.onBatch?.(counts);
      };
      for (const table of ["venues", "events"] as UpstreamTable[]) {
        for await (const line of copyLines(client, copySql(source, table))) {
          if (options.signal?.aborted)
            throw new Error("stopped during the initial copy; run it again to start the copy over");
          batch.push({ op: "upsert", table, row: JSON.parse(unescapeCopy(line)) });
          if (batch.length >= options.batchSize) await send();
        }
      }
      if (batch.length > 0) await send();
      while (outstanding.length > 0) await outstanding.shift();
      db.transaction(() => applier.book(verdicts, position));
    } finally {
      await writer.close();
      restore();
    }
    db.exec("PRAGMA wal_checkpoint(PASSIVE)");
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  }
  return counts;
}
