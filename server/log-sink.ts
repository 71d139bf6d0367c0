/**
 * Where log lines go (docs/operations.md, Logs and metrics): a file descriptor written in batches
 * behind the requests. A line is encoded straight into a buffer; the buffer is written with one
 * asynchronous `write` about every `LOG_SINK.flushMs`, or at once past `LOG_SINK.batchBytes`, so
 * a request never waits for the disk or the pipe and allocates nothing for its line beyond the
 * line itself (docs/perf-history.md, "Round 25"). Two buffers take turns: one
 * fills while the other is written, and one write is in flight at a time, so lines keep their
 * order.
 *
 * A destination that cannot keep up (a full pipe nobody reads) makes the filling buffer grow; past
 * `LOG_SINK.maxBufferedBytes` new lines are dropped and counted, and the count is written as a
 * line of its own once the destination takes lines again. What is buffered at exit is written
 * synchronously.
 *
 * To anything but a regular file, lines go out in whole-line pieces of at most 4,096 bytes: a
 * pipe takes a write that size in one piece, so the lines of several processes sharing one pipe
 * (the workers of `serve --workers`) never interleave within a line.
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
    write: (line) => writeAll(fd, Buffer.from(line)),
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

const NEWLINE = 0x0a;

class BufferedSink implements LineSink {
  readonly #fd: number;
  readonly #owned: boolean;
  /** The largest piece one write may take: a pipe's atomic size, or the batch for a file. */
  readonly #pieceBytes: number;
  /** The buffer lines are added to, and how much of it they fill. */
  #filling = Buffer.allocUnsafe(LOG_SINK.batchBytes * 2);
  #filled = 0;
  /** The other buffer: written from while non-null `#inFlight` bytes of it are in flight. */
  #spare = Buffer.allocUnsafe(LOG_SINK.batchBytes * 2);
  #inFlight: { end: number; offset: number } | null = null;
  #dropped = 0;
  #timer: ReturnType<typeof setTimeout> | null = null;
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
    this.#pieceBytes = regular ? LOG_SINK.batchBytes * 2 : LOG_SINK.pipeChunkBytes;
    process.on("exit", this.#onExit);
  }

  write(line: string): void {
    if (this.#closed) return;
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    const most = line.length * 3;
    if (this.#filled + most > this.#filling.length && !this.#grow(most)) {
      this.#dropped++;
      return;
    }
    this.#filled += this.#filling.write(line, this.#filled);
    if (this.#inFlight) return;
    if (this.#filled >= LOG_SINK.batchBytes) this.#flush();
    else this.#timer ??= unref(setTimeout(() => this.#flush(), LOG_SINK.flushMs));
  }

  /** Room for `bytes` more in the filling buffer, up to the cap; false when there is none. */
  #grow(bytes: number): boolean {
    const needed = this.#filled + bytes;
    if (needed > LOG_SINK.maxBufferedBytes) return false;
    const bigger = Buffer.allocUnsafe(Math.min(LOG_SINK.maxBufferedBytes, Math.max(needed, this.#filling.length * 2)));
    this.#filling.copy(bigger, 0, 0, this.#filled);
    this.#filling = bigger;
    return true;
  }

  /** Adds the dropped-lines note, when lines were dropped, once there is room again. */
  #noteDropped(): void {
    if (this.#dropped === 0) return;
    const count = this.#dropped;
    this.#dropped = 0;
    this.write(this.droppedLine(count));
  }

  #flush(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#inFlight || this.#filled === 0) return;
    // Swap: the filled buffer is written, the spare one fills.
    const full = this.#filling;
    this.#filling = this.#spare;
    this.#spare = full;
    this.#inFlight = { end: this.#filled, offset: 0 };
    this.#filled = 0;
    this.#writePiece();
  }

  /** Writes the next piece of the buffer in flight: whole lines, at most `#pieceBytes`. */
  #writePiece(): void {
    const flight = this.#inFlight!;
    if (flight.offset >= flight.end) {
      this.#inFlight = null;
      this.#noteDropped();
      // Lines added while the buffer was written wait for a batch, as any other lines.
      if (this.#filled >= LOG_SINK.batchBytes) this.#flush();
      else if (this.#filled > 0) this.#timer ??= unref(setTimeout(() => this.#flush(), LOG_SINK.flushMs));
      return;
    }
    const end = pieceEnd(this.#spare, flight.offset, flight.end, this.#pieceBytes);
    write(this.#fd, this.#spare, flight.offset, end - flight.offset, null, (err, written) => {
      if (this.#inFlight !== flight) return; // flushSync wrote the rest meanwhile
      if (err && (err as NodeJS.ErrnoException).code === "EAGAIN") {
        unref(setTimeout(() => this.#inFlight === flight && this.#writePiece(), LOG_SINK.retryMs));
        return;
      }
      // A destination that fails (closed, full disk) loses this piece; the next ones are tried.
      flight.offset = err ? end : flight.offset + written;
      this.#writePiece();
    });
  }

  flushSync(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    const flight = this.#inFlight;
    if (flight) {
      // The piece being written finishes on its own; the rest of its buffer goes now.
      const from = pieceEnd(this.#spare, flight.offset, flight.end, this.#pieceBytes);
      writeAll(this.#fd, this.#spare.subarray(from, flight.end));
      flight.offset = flight.end;
      this.#inFlight = null;
    }
    if (this.#dropped > 0) {
      const note = Buffer.from(this.droppedLine(this.#dropped));
      this.#dropped = 0;
      writeAll(this.#fd, this.#filling.subarray(0, this.#filled));
      writeAll(this.#fd, note);
    } else writeAll(this.#fd, this.#filling.subarray(0, this.#filled));
    this.#filled = 0;
  }

  close(): void {
    if (this.#closed) return;
    this.flushSync();
    this.#closed = true;
    process.off("exit", this.#onExit);
    if (this.#owned) closeSync(this.#fd);
  }
}

/** Where a piece starting at `from` ends: `to`, or the end of the last whole line within `most` bytes. */
function pieceEnd(buffer: Buffer, from: number, to: number, most: number): number {
  if (to - from <= most) return to;
  const newline = buffer.lastIndexOf(NEWLINE, from + most - 1);
  if (newline >= from) return newline + 1;
  // A line longer than a piece goes out whole.
  const end = buffer.indexOf(NEWLINE, from);
  return end < 0 || end >= to ? to : end + 1;
}

/** Writes `data` whole, waiting out a full non-blocking destination a little. */
function writeAll(fd: number, data: Uint8Array): void {
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
