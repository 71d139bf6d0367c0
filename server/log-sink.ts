/**
 * Where log lines go (docs/operations.md, Logs and metrics): a file descriptor written in batches
 * behind the requests. A request adds its line to a buffer; the buffer is written with one
 * asynchronous `write` about every `LOG_SINK.flushMs`, or at once past `LOG_SINK.batchBytes`, so a
 * request never waits for the disk or the pipe (test/bench/RESULTS.md, "Request log and
 * metrics"). One write is in flight at a time, so lines keep their order.
 *
 * A destination that cannot keep up (a full pipe nobody reads) makes the buffer grow; past
 * `LOG_SINK.maxBufferedBytes` new lines are dropped and counted, and the count is written as a
 * line of its own once the destination takes lines again. What is buffered at exit is written
 * synchronously.
 *
 * Lines go out in whole-line chunks of at most 4,096 bytes to anything but a regular file: a pipe
 * takes a write that size in one piece, so the lines of several processes sharing one pipe (the
 * workers of `serve --workers`) never interleave within a line.
 */
import { closeSync, fstatSync, openSync, write, writeSync } from "node:fs";

export const LOG_SINK = {
  flushMs: 50,
  batchBytes: 64 * 1024,
  /** A pipe's atomic write size (PIPE_BUF on Linux). */
  pipeChunkBytes: 4096,
  maxBufferedBytes: 16 * 1024 * 1024,
  /** Retry pause when a non-blocking destination is full (EAGAIN). */
  retryMs: 10,
} as const;

export interface LineSink {
  /** Adds one line (with its newline). */
  write(line: string): void;
  /** Writes everything buffered, synchronously. */
  flushSync(): void;
  close(): void;
}

/** A sink that writes each line at once: for rare lines (errors) to a terminal or a pipe. */
export function syncSink(fd: number): LineSink {
  return {
    write: (line) => writeAll(fd, line),
    flushSync() {},
    close() {},
  };
}

/**
 * The buffered sink over `fd`, or over the file at `path` (created, appended to). `droppedLine`
 * says, in the log's format, how many lines were dropped.
 */
export function bufferedSink(
  target: { fd: number } | { path: string },
  droppedLine: (count: number) => string,
): LineSink {
  return new BufferedSink(target, droppedLine);
}

class BufferedSink implements LineSink {
  readonly #fd: number;
  readonly #owned: boolean;
  readonly #chunkBytes: number;
  #lines: string[] = [];
  #bytes = 0;
  #dropped = 0;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #writing = false;
  /** The chunks of the write in flight, and the index of the one being written. */
  #chunks: string[] = [];
  #index = 0;
  #closed = false;
  readonly #onExit = () => this.flushSync();

  constructor(
    target: { fd: number } | { path: string },
    private readonly droppedLine: (count: number) => string,
  ) {
    this.#owned = "path" in target;
    this.#fd = "path" in target ? openSync(target.path, "a") : target.fd;
    let regular = false;
    try {
      regular = fstatSync(this.#fd).isFile();
    } catch {
      // a descriptor fstat cannot read: written as a pipe
    }
    this.#chunkBytes = regular ? LOG_SINK.batchBytes : LOG_SINK.pipeChunkBytes;
    process.on("exit", this.#onExit);
  }

  write(line: string): void {
    if (this.#closed) return;
    if (this.#bytes > LOG_SINK.maxBufferedBytes) {
      this.#dropped++;
      return;
    }
    this.#lines.push(line);
    this.#bytes += line.length;
    if (this.#writing) return;
    if (this.#bytes >= LOG_SINK.batchBytes) this.#flush();
    else this.#timer ??= unref(setTimeout(() => this.#flush(), LOG_SINK.flushMs));
  }

  /** Takes the buffered lines as chunks of whole lines (a line longer than a chunk is one chunk). */
  #take(): string[] {
    if (this.#dropped > 0) {
      this.#lines.push(this.droppedLine(this.#dropped));
      this.#dropped = 0;
    }
    const chunks: string[] = [];
    let chunk = "";
    for (const line of this.#lines) {
      if (chunk.length > 0 && chunk.length + line.length > this.#chunkBytes) {
        chunks.push(chunk);
        chunk = "";
      }
      chunk += line;
    }
    if (chunk.length > 0) chunks.push(chunk);
    this.#lines = [];
    this.#bytes = 0;
    return chunks;
  }

  #flush(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#writing || this.#lines.length === 0) return;
    this.#writing = true;
    this.#chunks = this.#take();
    this.#writeChunk(0);
  }

  #writeChunk(index: number): void {
    const chunks = this.#chunks;
    this.#index = index;
    if (index >= chunks.length) {
      this.#writing = false;
      this.#chunks = [];
      // Lines added while the chunks were written.
      if (this.#lines.length > 0) this.#flush();
      return;
    }
    const data = Buffer.from(chunks[index]);
    const writeFrom = (offset: number) => {
      write(this.#fd, data, offset, data.length - offset, null, (err, written) => {
        if (err && (err as NodeJS.ErrnoException).code === "EAGAIN") {
          unref(setTimeout(() => writeFrom(offset), LOG_SINK.retryMs));
          return;
        }
        // A destination that fails (closed, full disk) loses this chunk; the next ones are tried.
        if (err || offset + written >= data.length) this.#writeChunk(index + 1);
        else writeFrom(offset + written);
      });
    };
    writeFrom(0);
  }

  flushSync(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    // The chunk being written finishes on its own; the chunks behind it and what is buffered go now.
    const behind = this.#chunks.splice(this.#index + 1);
    for (const chunk of [...behind, ...this.#take()]) writeAll(this.#fd, chunk);
  }

  close(): void {
    if (this.#closed) return;
    this.flushSync();
    this.#closed = true;
    process.off("exit", this.#onExit);
    if (this.#owned) closeSync(this.#fd);
  }
}

/** Writes `text` whole, waiting out a full non-blocking destination a little. */
function writeAll(fd: number, text: string): void {
  const data = Buffer.from(text);
  let offset = 0;
  for (let tries = 0; offset < data.length && tries < 1000; tries++) {
    try {
      offset += writeSync(fd, data, offset, data.length - offset);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EAGAIN") return;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    }
  }
}

function unref<T extends ReturnType<typeof setTimeout>>(timer: T): T {
  (timer as { unref?: () => void }).unref?.();
  return timer;
}
