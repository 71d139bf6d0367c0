/**
 * Where a sync run's batches are written. A bulk sync spends about as long parsing, validating
 * and deriving records in JavaScript as SQLite spends writing them; under Bun a writer thread
 * with its own connection to the replica file does the writing, so the two overlap on two cores
 * (the million-record import: test/bench/RESULTS.md). Each batch is still one
 * transaction that advances the watermark (docs/upstream-records.md), so kill -9 and resuming behave as with
 * one thread. Under Node (vitest), for an in-memory replica, for small inputs, or when the thread
 * cannot start (a compiled binary without the thread's entry point), batches are applied in-thread.
 */
import { SYNC } from "../db/contract.ts";
import type { Db } from "../db/driver.ts";
import { onBun } from "../db/runtime.ts";
import { type ApplyResult, applyRows } from "./apply.ts";
import { applyLines, type LineBatch } from "./lines.ts";
import { RecordError } from "./records.ts";
import type { RowBatch } from "./rows.ts";
import { refreshServingSnapshot } from "./serving-snapshot.ts";

/** A committed batch: what it applied, and the batch back, its arrays free to fill again (RowEncoder.recycle, LineCollector.recycle). */
export interface Written {
  result: ApplyResult;
  rows?: RowBatch;
  lines?: LineBatch;
}

export interface BatchWriter {
  /** Applies one batch; resolves once it is committed. Callers wait for one before sending the next. */
  write(batch: RowBatch): Promise<Written>;
  /**
   * Parses and applies one batch of raw lines (sync/lines.ts); rejects with a RecordError, and
   * applies none of it, when a line is bad. Up to two writes may be outstanding; they are applied
   * in the order they were made, and once one fails, none after it is applied.
   */
  writeLines(batch: LineBatch): Promise<Written>;
  /** Whether handing raw lines over pays: the writer runs beside the caller, on another thread. */
  readonly parses: boolean;
  /**
   * Refreshes the serving snapshot on the writer's connection (sync/serving-snapshot.ts): after
   * a bulk import its page cache holds the rows the refresh reads. Resolves to the snapshot size.
   */
  refresh(nowMs: number): Promise<number>;
  /** Whether batches are written by another thread (the caller's connection is then free). */
  readonly threaded: boolean;
  close(): Promise<void>;
}

/**
 * Connection settings for the length of a run: a page cache big enough for a bulk load, two
 * sorter threads for the snapshot rebuild (it creates its indexes by sorting in runs, db/snapshot.ts),
 * with temporary files for the sorted runs: SQLite gives a sort no worker threads under
 * temp_store=MEMORY. And no automatic WAL checkpoints: with them every commit copied the pages
 * it touched into the database file again (the million-record import spent ~40% of its time
 * there); the run ends with one checkpoint instead. Returns a function that brings the
 * connection's own settings back.
 */
const BULK_PRAGMAS = { cache_size: SYNC.bulkCacheKiB * -1, temp_store: 1, wal_autocheckpoint: 0, threads: 2 } as const;

export function applyBulkSettings(db: Db): () => void {
  const saved = Object.keys(BULK_PRAGMAS).map((name) => [name, db.pragma(name)] as const);
  for (const [name, value] of Object.entries(BULK_PRAGMAS)) db.exec(`PRAGMA ${name} = ${value}`);
  return () => {
    for (const [name, value] of saved) db.exec(`PRAGMA ${name} = ${Number(value)}`);
  };
}

/** Messages between this module and sync/writer-thread.ts. */
export type ToWriter =
  | { type: "open"; path: string; busyTimeoutMs: number }
  | { type: "batch"; batch: RowBatch }
  | { type: "lines"; batch: LineBatch }
  | { type: "refresh"; nowMs: number }
  | { type: "close" };
export type FromWriter =
  | { type: "ready" }
  | { type: "applied"; result: ApplyResult; rows?: RowBatch; lines?: LineBatch }
  | { type: "invalid"; line: number; detail: string }
  | { type: "refreshed"; events: number }
  | { type: "failed"; message: string }
  | { type: "closed" };

/**
 * Inputs below this are applied in-thread. The overlap pays on bulk imports; a batch of changes
 * into a replica that is being served (the bench's 50,000 changes: 33 MB) is no faster on two
 * threads, and one thread leaves the other core to the server (the bench's p99 during such a
 * sync was 2.05x idle with the thread).
 */
const THREAD_MIN_BYTES = 128 * 1024 * 1024;
/** A thread that has not opened its connection by then is given up on (the run goes in-thread). */
const THREAD_START_TIMEOUT_MS = 10_000;

export function inThreadWriter(db: Db): BatchWriter {
  let failure: unknown;
  /** Applies now (writes are made in order); after a failure, nothing more. */
  const apply = async (write: () => Written): Promise<Written> => {
    if (failure !== undefined) throw failure;
    try {
      return write();
    } catch (err) {
      failure = err;
      throw err;
    }
  };
  return {
    write: (batch) => apply(() => ({ result: applyRows(db, batch), rows: batch })),
    writeLines: (batch) => apply(() => ({ result: applyLines(db, batch), lines: batch })),
    refresh: async (nowMs) => refreshServingSnapshot(db, nowMs),
    threaded: false,
    parses: false,
    close: async () => {},
  };
}

/** The writer for a run: a thread when the runtime, the replica and the input size make it pay. */
export async function openWriter(db: Db, inputBytes: number | undefined): Promise<BatchWriter> {
  return openWriterWhen(db, (inputBytes ?? Infinity) >= THREAD_MIN_BYTES);
}

/** A writer thread when `wanted` and the runtime and the replica allow one; in-thread otherwise. */
export async function openWriterWhen(db: Db, wanted: boolean): Promise<BatchWriter> {
  const threaded = wanted && onBun && db.path !== ":memory:" && db.path !== "";
  if (!threaded) return inThreadWriter(db);
  return (await startThread(db)) ?? inThreadWriter(db);
}

/**
 * Where the thread's module is. From source, beside this file. In `dist/marquee` (built with this
 * module as a second entrypoint, package.json "build"), bundled code runs as the executable's
 * root module and the thread's module keeps its path under that root.
 */
function writerThreadUrl(): string {
  const compiled = import.meta.url.includes("/$bunfs/");
  return new URL(compiled ? "./sync/writer-thread.ts" : "./writer-thread.ts", import.meta.url).href;
}

/** The buffers of a batch's arrays: moved to the writer thread with it, and back once it is committed. */
export function rowBuffers(batch: RowBatch): ArrayBuffer[] {
  return [batch.kinds.buffer, batch.nums.buffer, batch.text.buffer, batch.lengths.buffer] as ArrayBuffer[];
}

/** The same for a batch of raw lines: its text. */
export function lineBuffers(batch: LineBatch): ArrayBuffer[] {
  return [batch.text.buffer as ArrayBuffer];
}

/** Starts the writer thread; undefined when it cannot start, so the run falls back to in-thread. */
async function startThread(db: Db): Promise<BatchWriter | undefined> {
  let worker: Worker;
  try {
    worker = new Worker(writerThreadUrl());
  } catch {
    return undefined;
  }
  const waiting: Array<{ resolve: (m: FromWriter) => void; reject: (e: Error) => void }> = [];
  let failure: Error | undefined;
  const fail = (err: Error) => {
    failure ??= err;
    for (const w of waiting.splice(0)) w.reject(failure);
  };
  worker.onmessage = (e: MessageEvent<FromWriter>) => waiting.shift()?.resolve(e.data);
  worker.onerror = (e) => fail(new Error(`sync writer thread: ${(e as ErrorEvent).message ?? "failed"}`));
  const send = (message: ToWriter, transfer: Transferable[] = []) =>
    new Promise<FromWriter>((resolve, reject) => {
      if (failure) return reject(failure);
      waiting.push({ resolve, reject });
      worker.postMessage(message, transfer);
    });
  const busyTimeoutMs = Number(db.pragma("busy_timeout") ?? 0);
  let stopWaiting = () => {};
  const opened = await Promise.race([
    send({ type: "open", path: db.path, busyTimeoutMs }).catch(() => undefined),
    new Promise<undefined>((resolve) => {
      const timer = setTimeout(resolve, THREAD_START_TIMEOUT_MS);
      stopWaiting = () => clearTimeout(timer);
    }),
  ]);
  stopWaiting();
  if (opened?.type !== "ready") {
    worker.terminate();
    return undefined;
  }
  const applied = (reply: FromWriter): Written => {
    if (reply.type === "failed") throw new Error(reply.message);
    if (reply.type === "invalid") throw new RecordError(reply.line, reply.detail);
    if (reply.type !== "applied") throw new Error(`sync writer thread: unexpected ${reply.type}`);
    return { result: reply.result, rows: reply.rows, lines: reply.lines };
  };
  return {
    async write(batch) {
      return applied(await send({ type: "batch", batch }, rowBuffers(batch)));
    },
    async writeLines(batch) {
      return applied(await send({ type: "lines", batch }, lineBuffers(batch)));
    },
    parses: true,
    async refresh(nowMs) {
      const reply = await send({ type: "refresh", nowMs });
      if (reply.type === "failed") throw new Error(reply.message);
      if (reply.type !== "refreshed") throw new Error(`sync writer thread: unexpected ${reply.type}`);
      return reply.events;
    },
    threaded: true,
    async close() {
      // The thread closes its connection before it ends (not the last one: no checkpoint there).
      await send({ type: "close" }).catch(() => undefined);
      worker.terminate();
    },
  };
}
