/**
 * The initial copy of a PostgreSQL upstream: both tables read inside the snapshot exported when
 * the replication slot was created, so the copy and the slot's changes after it meet exactly
 * (docs/upstream-records.md, "PostgreSQL tables"). Rows leave PostgreSQL through COPY in its text
 * form, split into lines on bytes and decoded in pieces as an NDJSON file's are, and are applied
 * with an import's bulk settings (sync/writer.ts). A large copy is written by the writer thread
 * while this one reads and checks the rows; a small one on this thread, where a 103,596-row copy
 * once ran faster (1.4 s against 2.8 s; the threshold: sync/postgres/sync.ts). Measured on the
 * 1,035,952-row demo copy (docs/perf-history.md, "Round 10"): rows as JSON (row_to_json, then
 * JSON.parse) cost PostgreSQL ~1.4 s more per 200,000 rows than the columns as text and made
 * 75 % more bytes to decode. The copy is complete once its last transaction, on this connection,
 * commits the slot's starting position with the rejected rows; until then a rerun starts the
 * copy over. The serving snapshot is then rebuilt from the copied rows, before any change
 * streams, on the writer thread's connection when there is one.
 */
import type pg from "pg";
import { to as copyTo } from "pg-copy-streams";
import { readWatermark } from "../../db/replica.ts";
import { RowEncoder } from "../rows.ts";
import { type LineChunk, splitLines } from "../source-lines.ts";
import { applyBulkSettings, openWriterWhen } from "../writer.ts";
import type { Change, ChangeApplier, Reject, Verdict } from "./apply.ts";
import type { Row } from "./records.ts";
import { ident, type PostgresSource, UPSTREAM_COLUMNS, type UpstreamTable } from "./schema.ts";

export interface CopyCounts {
  /** Rows in both tables in the copy's snapshot. */
  total: number;
  copied: number;
  rejects: Reject[];
  /** Whether a writer thread wrote the rows (sync/writer.ts). */
  writerThread: boolean;
  /** Events in the serving snapshot refreshed once the copy was complete. */
  snapshotEvents: number | null;
}

/**
 * A timestamptz as the record form `YYYY-MM-DDTHH:MM:SSZ` (fractions only when present), which
 * the record checks read fastest; the stream's values come the same way (sync/postgres/records.ts).
 */
const instantText = (column: string) =>
  `to_char(${column} AT TIME ZONE 'UTC', CASE WHEN date_trunc('second', ${column}) = ${column} ` +
  `THEN 'YYYY-MM-DD"T"HH24:MI:SS"Z"' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"' END) AS ${column}`;

/**
 * The columns Marquee reads, in COPY's text form: tab-separated, `\N` for null. The categories
 * come as a JSON array and ticket_links as jsonb's JSON text, both parsed as the stream's are
 * (sync/postgres/records.ts).
 */
function copySql(source: PostgresSource, table: UpstreamTable): string {
  const columns = UPSTREAM_COLUMNS[table].map((c) =>
    c === "start_date" || c === "end_date" ? instantText(c) : c === "categories" ? `array_to_json(${c}) AS ${c}` : c,
  );
  return `COPY (SELECT ${columns.join(", ")} FROM ${ident(source.schema)}.${ident(table)} ORDER BY id) TO STDOUT`;
}

/** COPY's text form escapes a backslash, and b, f, n, r, t, v for those control characters, with a backslash. */
const ESCAPED: Record<string, string> = { b: "\b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v" };
const unescapeField = (field: string) =>
  field.includes("\\") ? field.replace(/\\(.)/gs, (_, c: string) => ESCAPED[c] ?? c) : field;

const NULL = "\\N";
const text = (f: string) => (f === NULL ? null : unescapeField(f));
// bigint prints as digits only, float8 as a number Number() reads back exactly (or NaN, Infinity).
const num = (f: string) => (f === NULL ? null : Number(f));
const bool = (f: string) => (f === NULL ? null : f === "t");

/**
 * A COPY line's fields as a row (its values as row_to_json would give them), in the order of
 * UPSTREAM_COLUMNS. Written out as one object literal per table: a row of one fixed shape is
 * built in about two thirds of the time a row filled key by key takes (docs/perf-history.md,
 * "Round 13").
 */
const ROW_OF: Record<UpstreamTable, (f: string[]) => Row> = {
  venues: (f) => ({
    id: num(f[0]),
    name: text(f[1]),
    city: text(f[2]),
    state: text(f[3]),
    timezone: text(f[4]),
    latitude: num(f[5]),
    longitude: num(f[6]),
    geocode_precision: text(f[7]),
    visible: bool(f[8]),
  }),
  events: (f) => ({
    id: num(f[0]),
    venue_id: num(f[1]),
    title: text(f[2]),
    slug: text(f[3]),
    start_date: text(f[4]),
    end_date: text(f[5]),
    cost_text: text(f[6]),
    is_free: bool(f[7]),
    is_sold_out: bool(f[8]),
    is_low_tickets: bool(f[9]),
    age: text(f[10]),
    website: text(f[11]),
    website_broken: bool(f[12]),
    image_url: text(f[13]),
    categories: text(f[14]),
    source: text(f[15]),
    status: text(f[16]),
    duplicate_of: num(f[17]),
    ticketed: bool(f[18]),
    ticket_links: text(f[19]),
  }),
};

// The readers above and the columns COPY is asked for must name the same columns in the same order.
for (const table of Object.keys(ROW_OF) as UpstreamTable[]) {
  const columns = UPSTREAM_COLUMNS[table];
  const read = Object.keys(ROW_OF[table](columns.map(() => NULL)));
  if (read.join() !== columns.join()) throw new Error(`COPY reader of ${table} reads ${read.join()}`);
}

/** Reads one COPY line of `table` into a row. */
function rowReader(table: UpstreamTable): (line: string) => Row {
  const width = UPSTREAM_COLUMNS[table].length;
  const rowOf = ROW_OF[table];
  return (line) => {
    const fields = line.split("\t");
    if (fields.length !== width)
      throw new Error(`COPY of ${table} gave ${fields.length} fields where ${width} columns were asked for`);
    return rowOf(fields);
  };
}

/** The lines of one COPY, a chunk of them at a time (sync/source-lines.ts: split on bytes, decoded in pieces). */
function copyChunks(client: pg.Client, sql: string): AsyncIterable<LineChunk> {
  return splitLines(client.query(copyTo(sql)) as AsyncIterable<Uint8Array>, { offset: 0, line: 0 });
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
  options: {
    batchSize: number;
    /** Copies of at least this many rows are written by a writer thread (sync/writer.ts), where the runtime allows one. */
    threadMinRows: number;
    /** "now" for the snapshot's timestamp. */
    now: () => number;
    onBatch?: (counts: CopyCounts) => void;
    signal?: AbortSignal;
  },
): Promise<CopyCounts> {
  const db = applier.db;
  const counts: CopyCounts = { total: 0, copied: 0, rejects: [], writerThread: false, snapshotEvents: null };
  await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  try {
    await client.query(`SET TRANSACTION SNAPSHOT '${snapshot.replaceAll("'", "''")}'`);
    const { rows } = await client.query<{ n: string }>(
      `SELECT (SELECT count(*) FROM ${ident(source.schema)}.venues) + (SELECT count(*) FROM ${ident(source.schema)}.events) AS n`,
    );
    counts.total = Number(rows[0].n);
    options.onBatch?.(counts);
    const restore = applyBulkSettings(db);
    const writer = await openWriterWhen(db, counts.total >= options.threadMinRows);
    counts.writerThread = writer.threaded;
    try {
      let seq = readWatermark(db);
      const verdicts: Verdict[] = [];
      const outstanding: Array<Promise<unknown>> = [];
      let batch: Change[] = [];
      // One encoder for the whole copy: a committed batch's arrays come back to it (Written.rows).
      const encoder = new RowEncoder();
      const send = async () => {
        const prepared = applier.prepare(batch, seq, { fresh: true, into: encoder });
        seq = prepared.seq;
        verdicts.push(...prepared.verdicts);
        counts.rejects.push(...prepared.rejects);
        counts.copied += batch.length;
        batch = [];
        const written = writer.write(encoder.finish());
        // Awaited below, in order; a committed batch's arrays are the encoder's to fill again.
        written.then((w) => w.rows && encoder.recycle(w.rows)).catch(() => {});
        outstanding.push(written);
        while (outstanding.length >= MAX_OUTSTANDING) await outstanding.shift();
        options.onBatch?.(counts);
      };
      for (const table of ["venues", "events"] as UpstreamTable[]) {
        const read = rowReader(table);
        for await (const chunk of copyChunks(client, copySql(source, table))) {
          if (options.signal?.aborted)
            throw new Error("stopped during the initial copy; run it again to start the copy over");
          const { lines, wide } = chunk;
          for (let i = 0; i < lines.length; i++) {
            batch.push({ op: "upsert", table, row: read(lines[i]), narrow: !wide?.has(i) });
            if (batch.length >= options.batchSize) await send();
          }
        }
      }
      if (batch.length > 0) await send();
      while (outstanding.length > 0) await outstanding.shift();
      db.transaction(() => applier.book(verdicts, position));
      // The copy is complete: the snapshot of exactly its rows (docs/api.md, Serving snapshot).
      // A writer thread rebuilds it on its connection, whose page cache holds the rows it wrote,
      // while this one copies the committed batches into the database file, as the NDJSON import
      // does (sync/sync-from.ts). A run stopped here has its copy: the next one refreshes instead.
      const refreshing = writer.refresh(options.now());
      if (writer.threaded) db.exec("PRAGMA wal_checkpoint(PASSIVE)");
      counts.snapshotEvents = await refreshing;
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
