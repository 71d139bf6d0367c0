/**
 * Batches of raw NDJSON lines that the writer parses itself. In a bulk sync the reading thread
 * (read, parse, validate, derive, encode: ~210 ms per 20,000 records) is slower than the writer
 * thread (SQLite inserts: ~125 ms), so now and then the reading thread hands a batch over
 * unparsed and reads on while the writer does both for it (sync/worker.ts decides when). The
 * same checks run on either side (parseNextRecord), and a batch with a bad line is not applied.
 */
import type { Db } from "../db/driver.ts";
import { applyRows, type ApplyResult } from "./apply.ts";
import { parseNextRecord } from "./records.ts";
import { RowEncoder } from "./rows.ts";

/** Consecutive lines of the input, as they cross to the writer. */
export interface LineBatch {
  /** Line number (1-based) of the first line. */
  firstLine: number;
  /**
   * The lines joined with "\n" (one flat string crosses a thread boundary far cheaper than an
   * array of them); a wide line (sync/source.ts decodeLines) is empty here, so the string stays
   * one byte per character, and travels in `wide`.
   */
  text: string;
  wide: Array<[index: number, line: string]>;
  /** seq of the record before the first line. */
  previousSeq: number;
}

/** Collects the lines of one LineBatch. */
export class LineCollector {
  private parts: string[] = [];
  private wide: Array<[number, string]> = [];
  private firstLine = 0;
  /** Blank lines since the last record, kept only once another record follows them. */
  private blanks = 0;
  /** Lines collected, each a record if it passes. */
  records = 0;

  /** A non-blank line. */
  push(text: string, line: number, narrow: boolean): void {
    if (this.parts.length === 0) this.firstLine = line;
    for (; this.blanks > 0; this.blanks--) this.parts.push("");
    if (narrow) this.parts.push(text);
    else {
      this.wide.push([this.parts.length, text]);
      this.parts.push("");
    }
    this.records++;
  }

  /** A blank line: kept between records, so that line numbers stay those of the input. */
  blank(): void {
    if (this.parts.length > 0) this.blanks++;
  }

  /** The last record's line, with its number (the reading thread parses it to learn its seq). */
  last(): { text: string; line: number } {
    const i = this.parts.length - 1;
    const wide = this.wide.length > 0 && this.wide[this.wide.length - 1][0] === i ? this.wide[this.wide.length - 1][1] : undefined;
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

  finish(previousSeq: number): LineBatch {
    const batch: LineBatch = { firstLine: this.firstLine, text: this.parts.join("\n"), wide: this.wide, previousSeq };
    this.clear();
    return batch;
  }

  clear(): void {
    this.parts = [];
    this.wide = [];
    this.blanks = 0;
    this.records = 0;
  }
}

/** One encoder for every raw batch of the thread: its arrays are filled again batch after batch. */
const encoder = new RowEncoder();

/** Parses, validates and derives a LineBatch, then applies it as one batch. Throws RecordError on a bad line, before any write. */
export function applyLines(db: Db, batch: LineBatch): ApplyResult {
  const lines = batch.text.split("\n");
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
