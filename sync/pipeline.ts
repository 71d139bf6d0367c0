/**
 * The batches of a sync run on their way to the writer (sync/writer.ts): records parsed here and
 * encoded as rows, or now and then raw lines the writer parses itself (sync/lines.ts), so that
 * neither thread of a bulk sync waits for the other. Up to two batches are outstanding while
 * the next one fills; they are committed in order, and a failed one stops the run (the writer
 * applies nothing after it).
 *
 * Whoever parses a batch, it holds `batchSize` records, and a bad line fails it before its
 * transaction starts (docs/upstream-records.md), with the same message.
 */
import type { ApplyResult } from "./apply.ts";
import { type LineBatch, LineCollector } from "./lines.ts";
import { parseNextRecord, parseRecordLine, RecordError } from "./records.ts";
import { RowEncoder } from "./rows.ts";
import type { BatchWriter, Written } from "./writer.ts";

/**
 * Who parses a batch. "balance": the writer takes the next batch raw when it had finished every
 * batch before the one just sent, i.e. it sat waiting for this thread (only when it runs on a
 * thread of its own). That signal needs no timing, and when the writer keeps busy (a slower disk,
 * other processes on the cores) it simply stops firing. Tests force the others.
 *
 * (A rule that measured both threads' costs per batch and handed over the share that evens them
 * out chose about the same batches, 11 of 54 in the million-record import against 15, and was
 * no faster.)
 */
export type HandOff = "balance" | "always" | "never";

/** What a run reports (the fields of its SyncSummary this keeps up to date). */
export interface BatchCounts {
  lines: number;
  records: number;
  applied: number;
  skipped: number;
  batches: number;
  watermark: number;
}

const MAX_OUTSTANDING = 2;

/** A raw batch the writer rejected, with what is needed to report it like any bad line. */
class LinesRejected {
  constructor(
    readonly error: RecordError,
    readonly batch: LineBatch,
    /** Its lines as this thread collected them (a wide line as ""). */
    readonly parts: readonly string[],
    readonly recordsBefore: number,
  ) {}
}

export class BatchPipeline {
  private readonly rows = new RowEncoder();
  private readonly lines = new LineCollector();
  private collecting = false;
  private readonly outstanding: Array<Promise<void>> = [];
  /** Batches sent and not answered yet (`outstanding` also holds answered ones not awaited yet). */
  private unanswered = 0;
  private lastSeq = 0;
  /** The first failed batch's error, once one has been seen. */
  failure: unknown;
  /** Whether a batch committed since the flag was last cleared applied anything. */
  appliedSince = false;

  constructor(
    private readonly writer: BatchWriter,
    private readonly counts: BatchCounts,
    private readonly batchSize: number,
    /** Records at or below it were applied by an earlier run: skipped before any transaction. */
    private readonly startWatermark: number,
    private readonly handOff: HandOff,
  ) {}

  /**
   * One non-blank line. Throws RecordError for a bad line it parses; returns a promise only when
   * the line completed a batch (it settles once the batch is sent, rejecting on a writer's failure).
   */
  add(text: string, line: number, narrow: boolean): Promise<void> | undefined {
    if (this.collecting) {
      this.lines.push(text, line, narrow);
      this.counts.records++;
      return this.lines.records >= this.batchSize ? this.send() : undefined;
    }
    this.parse(text, line, narrow);
    return this.rows.count >= this.batchSize ? this.send() : undefined;
  }

  /** Parses a line here into the rows of the batch. */
  private parse(text: string, line: number, narrow: boolean): void {
    const record = parseNextRecord(text, line, this.lastSeq);
    this.lastSeq = record.seq;
    this.counts.records++;
    if (record.seq <= this.startWatermark) this.counts.skipped++;
    else this.rows.push(record, narrow);
  }

  /** A blank line: nothing to apply, but a raw batch keeps it so its line numbers stay right. */
  blank(): void {
    if (this.collecting) this.lines.blank();
  }

  /** Everything added so far, committed. */
  async flush(): Promise<void> {
    await this.send();
    await this.settle();
  }

  /** The batches already sent, committed. */
  async settle(): Promise<void> {
    while (this.outstanding.length > 0) await this.oldest();
  }

  /** After a failure: waits out the batches still outstanding (the writer refuses them). */
  async drain(): Promise<void> {
    while (this.outstanding.length > 0) await this.oldest().catch(() => {});
  }

  /** Hands the batch filled so far to the writer, once fewer than MAX_OUTSTANDING are. */
  private async send(): Promise<void> {
    while (this.outstanding.length >= MAX_OUTSTANDING) await this.oldest();
    const writerWaited = this.unanswered === 0;
    if (this.collecting && this.lines.records > 0) this.sendLines();
    else if (this.rows.count > 0) this.sendRows();
    this.lines.clear();
    this.collecting = this.handOff === "balance" ? this.writer.parses && writerWaited : this.handOff === "always";
  }

  private sendLines(): void {
    // This thread parses the batch's last line to know the seq the next batch continues from.
    const last = this.lines.last();
    let seq: number | undefined;
    try {
      seq = parseRecordLine(last.text, last.line).seq;
    } catch (err) {
      if (!(err instanceof RecordError)) throw err;
    }
    if (seq === undefined) {
      this.parseCollected(); // it holds a bad line: find the first one here
      return;
    }
    const recordsBefore = this.counts.records - this.lines.records;
    const { batch, parts } = this.lines.finish(this.lastSeq);
    this.lastSeq = seq;
    const written = this.writer.writeLines(batch).then((w: Written) => {
      if (w.lines) this.lines.recycle(w.lines);
      return w.result;
    });
    this.track(written, (error) => new LinesRejected(error, batch, parts, recordsBefore));
  }

  /** Parses the collected lines here, as add() does; throws at the first bad one. */
  private parseCollected(): void {
    const entries = [...this.lines.entries()];
    this.counts.records -= this.lines.records;
    this.lines.clear();
    for (const { text, line, narrow } of entries) if (text.trim() !== "") this.parse(text, line, narrow);
    if (this.rows.count > 0) this.sendRows();
  }

  private sendRows(): void {
    this.track(
      this.writer.write(this.rows.finish()).then((written: Written) => {
        if (written.rows) this.rows.recycle(written.rows);
        return written.result;
      }),
    );
  }

  private track(written: Promise<ApplyResult>, rejected?: (error: RecordError) => LinesRejected): void {
    this.unanswered++;
    const answered = written.finally(() => this.unanswered--);
    const done = answered.then(
      (result) => {
        this.counts.applied += result.applied;
        this.counts.skipped += result.skipped;
        this.counts.watermark = result.watermark;
        this.counts.batches++;
        this.appliedSince ||= result.applied > 0;
      },
      (err: unknown) => {
        throw rejected && err instanceof RecordError ? rejected(err) : err;
      },
    );
    done.catch(() => {}); // thrown where it is awaited (oldest), not as an unhandled rejection
    this.outstanding.push(done);
  }

  /** Waits for the oldest outstanding batch; the first failure is reported as the run's. */
  private async oldest(): Promise<void> {
    try {
      await this.outstanding.shift();
    } catch (err) {
      this.failure ??= this.reported(err);
      throw this.failure;
    }
  }

  /** A rejected raw batch counts, like a batch parsed here, the records before its bad line. */
  private reported(err: unknown): unknown {
    if (!(err instanceof LinesRejected)) return err;
    const { error, batch, parts, recordsBefore } = err;
    const lines = parts.slice(0, error.line - batch.firstLine);
    for (const [i] of batch.wide) if (i < lines.length) lines[i] = "x";
    this.counts.records = recordsBefore + lines.filter((l) => l.trim() !== "").length;
    this.counts.lines = error.line;
    return error;
  }
}
