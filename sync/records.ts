/**
 * Parsing upstream record lines (docs/upstream-records.md): JSON, then the fast path
 * (sync/fast-records.ts), then the valibot schema (sync/record-schema.ts) for anything the fast
 * path is unsure of and for the error message of a bad line.
 */
import * as v from "valibot";
import { parseIsoInstant } from "../db/instant.ts";
import { fastRecord } from "./fast-records.ts";
import { UpstreamRecord } from "./record-schema.ts";

export { DeleteRecord, EventRecord, TicketLink, UpstreamRecord, VenueRecord } from "./record-schema.ts";

export class RecordError extends Error {
  constructor(
    readonly line: number,
    readonly detail: string,
  ) {
    super(`line ${line}: ${detail}`);
  }
}

const isInstant = (s: string) => parseIsoInstant(s) !== null;

/** Parses and validates one NDJSON line. Throws RecordError naming the line. */
export function parseRecordLine(text: string, line: number): UpstreamRecord {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new RecordError(line, "not valid JSON");
  }
  return parseRecordValue(json, line);
}

/** Validates one line's parsed JSON. Throws RecordError naming the line. */
export function parseRecordValue(json: unknown, line: number): UpstreamRecord {
  const fast = fastRecord(json, isInstant);
  if (fast) return fast;
  const result = v.safeParse(UpstreamRecord, json);
  if (!result.success) {
    const issue = result.issues[0];
    const path = issue.path?.map((p) => p.key).join(".") ?? "";
    // "Invalid key: Expected "seq" but received undefined" says less than "seq: missing".
    const detail = issue.received === "undefined" && issue.path?.length ? "missing" : issue.message;
    throw new RecordError(line, path ? `${path}: ${detail}` : detail);
  }
  return result.output;
}

/** parseRecordLine, plus the stream's order (docs/upstream-records.md, The stream): each seq above the one before it. */
export function parseNextRecord(text: string, line: number, previousSeq: number): UpstreamRecord {
  const record = parseRecordLine(text, line);
  if (record.seq <= previousSeq)
    throw new RecordError(line, `seq ${record.seq} does not increase (previous ${previousSeq})`);
  return record;
}
