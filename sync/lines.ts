/**
 * Batches of raw NDJSON lines that the writer parses itself. In a bulk sync the reading thread
 * (read, parse, validate, derive, encode: ~300 ms per 20,000 records) is slower than the writer
 * thread (SQLite inserts: ~175 ms), so now and then the reading thread hands a batch over
 * unparsed and reads on while the writer does both for it (sync/pipeline.ts decides when). The
 * same checks run on either side (parseNextRecord), and a batch with a bad line is not applied.
 */
import type { Db } from "../db/driver.ts";
import { type ApplyResult, applyRows } from "./apply.ts";
import { parseNextRecord } from "./records.ts";
import { Latin1Text, latin1String, RowEncoder } from "./rows.ts";

/** Consecutive lines of the input, as they cross to the writer. */
export interface LineBatch {
  /** Line number (1-based) of the first line. */
  firstLine: number;
  /**
   * The lines separated by "\n", latin1, one byte per character: the first `textBytes` bytes.
   * A wide line (sync/source.ts decodeLines) is empty here and travels in `wide`. The array can
   * be transferred to the writer and back: posting the same lines as one 12 MB string cost the
   * reading thread ~45 ms a batch.
   */
  text: Uint8Array;
  textBytes: number;
  wide: Array<[index: number, line: string]>;
  /** seq of the record before the first line. */
  previousSeq: number;
}

/** Collects the lines of one LineBatch. */
export class LineCollector {
  private parts: string[] = [];
  private wide: Array<[number, string]> = [];
  private readonly text = new Latin1Text(1024 * 1024);
  private firstLine = 0;
  /** Blank lines since the last record, kept only once another record follows them. */
  private blanks = 0;
  /** Lines collected, each a record if it passes. */
  records = 0;

  /** A non-blank line. */
  push(text: string, line: number, narrow: boolean): void {
    if (this.parts.length === 0) this.firstLine = line;
    for (; this.blanks > 0; this.blanks--) this.append("");
    if (narrow) this.append(text);
    else {
      this.wide.push([this.parts.length, text]);
      this.append("");
    }
    this.records++;
  }

  /** One line of the batch, after a "\n" unless it is the first. */
  private append(text: string): void {
    if (this.parts.length > 0) this.text.write("\n");
    this.parts.push(text);
    this.text.write(text);
  }

  /** A blank line: kept between records, so that line numbers stay those of the input. */
  blank(): void {
    if (this.parts.length > 0) this.blanks++;
  }

  /** The last record's line, with its number (the reading thread parses it to learn its seq). */
  last(): { text: string; line: number } {
    const i = this.parts.length - 1;
    const wide =
      this.wide.length > 0 && this.wide[this.wide.length - 1][0] === i ? this.wide[this.wide.length - 1][1] : undefined;
    return { text: wide ?? this.parts[i], line: this.firstLine + i };
  }

  /** Every line collected, with its number and whether it is narrow, in order. */
  *entries(): Generator<{ text: string; line: number; narrow: boolean }> {
    let w = 0;
    for (let i = 0; i < this.parts.length; i++) {
      const wide = w < this.wide.length && this.wide[w][0] === i ? this.wide[w++][1] : undefined;
      yield { text: wide ?? this.parts[i], line: this.firstLine + i, narrow: wide === undefined };
    }
  }

  /** The batch, and the lines it holds as this thread keeps them (a wide line as ""), to report a bad one. */
  finish(previousSeq: number): { batch: LineBatch; parts: readonly string[] } {
    const textBytes = this.text.length;
    const batch: LineBatch = {
      firstLine: this.firstLine,
      text: this.text.take(),
      textBytes,
      wide: this.wide,
      previousSeq,
    };
    const parts = this.parts;
    this.clear();
    return { batch, parts };
  }

  /** A batch's array back from the writer, free to fill again (a detached one is left out). */
  recycle(batch: LineBatch): void {
    this.text.recycle(batch.text);
  }

  clear(): void {
    this.parts = [];
    this.wide = [];
    this.text.clear();
    this.blanks = 0;
    this.records = 0;
  }
}

/** One encoder for every raw batch of the thread: its arrays are filled again batch after batch. */
const encoder = new RowEncoder();

/** Parses, validates and derives a LineBatch, then applies it as one batch. Throws RecordError on a bad line, before any write. */
export function applyLines(db: Db, batch: LineBatch): ApplyResult {
  const lines = latin1String(batch.text, batch.textBytes).split("\n");
  const wide = new Set<number>();
  for (const [i, text] of batch.wide) {
    lines[i] = text;
    wide.add(i);
  }
  let seq = batch.previousSeq;
  try {
    for (let i = 0; i < lines.length; i++) {
      if (lines[i].trim() === "") continue;
      const record = parseNextRecord(lines[i], batch.firstLine + i, seq);
      seq = record.seq;
      encoder.push(record, !wide.has(i));
    }
  } catch (err) {
    encoder.recycle(encoder.finish()); // the records before the bad line are dropped, not carried into the next batch
    throw err;
  }
  const rows = encoder.finish();
  try {
    return applyRows(db, rows);
  } finally {
    encoder.recycle(rows);
  }
}
