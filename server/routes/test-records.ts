/**
 * `POST /_test/records` (docs/api.md, Test mode): upstream records through the sync path, then a
 * snapshot refresh. Records never vanish silently: the sync path skips a record at or below the
 * replica's watermark as already applied, which in a test means a seeded event that never shows
 * up. Here such a record refuses the whole body (409 `stale_records`), and a record without `seq`
 * gets the next one after the watermark (or after the record before it).
 */
import { readWatermark } from "../../db/replica.ts";
import { refreshSnapshot } from "../../db/snapshot.ts";
import { applyBatch } from "../../sync/apply.ts";
import { parseRecordValue, RecordError, type UpstreamRecord } from "../../sync/records.ts";
import type { AppContext } from "../context.ts";
import { json } from "../handle.ts";
import type { RouteTable } from "../route-table.ts";
import { testHandle } from "./test-handle.ts";

/** A record at or below the watermark: the line that holds it and the watermark it is under. */
class StaleRecord extends Error {
  constructor(
    readonly line: number,
    readonly seq: number,
    readonly watermark: number,
  ) {
    super(
      `line ${line}: seq ${seq} is not above the replica's watermark ${watermark}, so the sync path would skip it; ` +
        `nothing was applied. Omit seq to append after the watermark, or POST /_test/reset {"replica": true} to start over.`,
    );
  }
}

/** The body's records, each with its seq (given, or the next one); throws RecordError or StaleRecord. */
export function readRecords(text: string, watermark: number): UpstreamRecord[] {
  const records: UpstreamRecord[] = [];
  let line = 0;
  for (const raw of text.split("\n")) {
    line++;
    if (raw.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      throw new RecordError(line, "not valid JSON");
    }
    const previous = records.at(-1)?.seq ?? watermark;
    if (value && typeof value === "object" && !Array.isArray(value) && !("seq" in value)) {
      value = { ...value, seq: previous + 1 };
    }
    const record = parseRecordValue(value, line);
    if (record.seq <= watermark) throw new StaleRecord(line, record.seq, watermark);
    if (records.length > 0 && record.seq <= previous)
      throw new RecordError(line, `seq ${record.seq} does not increase (previous ${previous})`);
    records.push(record);
  }
  return records;
}

export function testRecordRoutes(app: RouteTable, ctx: AppContext): void {
  app.post(
    "/_test/records",
    testHandle(async ({ req }) => {
      const text = await req.text();
      let records: UpstreamRecord[];
      try {
        records = readRecords(text, readWatermark(ctx.replica));
      } catch (err) {
        if (err instanceof RecordError) return json({ error: { code: "invalid_request", message: err.message } }, 400);
        if (err instanceof StaleRecord) {
          const { message, watermark, line, seq } = err;
          return json({ error: { code: "stale_records", message, watermark, line, seq } }, 409);
        }
        throw err;
      }
      const written = await ctx.replicaWrites.apply((db) => {
        const result = applyBatch(db, records);
        return { ...result, snapshotEvents: refreshSnapshot(db, ctx.clock.now()) };
      });
      return json(written);
    }),
  );
}
