/**
 * What every record source (sync/source.ts, sync/source-http.ts) is made of: complete lines with
 * their numbers and byte offsets, split from the bytes a source reads.
 */

export interface LineChunk {
  /** Complete lines, without their newline. */
  lines: string[];
  /** Indexes of lines that may hold characters above U+00FF (see decodeLines); none when absent. */
  wide?: ReadonlySet<number>;
  /** Line number (1-based) of `lines[0]`. */
  firstLine: number;
  /** Byte offset just past the last line of this chunk. */
  endOffset: number;
  /** True when the source has been read to its current end (follow mode keeps going). */
  caughtUp: boolean;
}

export interface SourcePosition {
  offset: number;
  /** Lines before `offset`, so line numbers stay those of the whole file. */
  line: number;
}

export interface RecordSource {
  readonly name: string;
  /** Total bytes when known up front (files), for progress. */
  readonly size: number | undefined;
  /** Byte offset reading starts at (a resumed file); what is left to read is `size - startOffset`. */
  readonly startOffset?: number;
  chunks(): AsyncIterable<LineChunk>;
}

export interface SourceOptions {
  follow?: boolean;
  /** Stops reading (a following source, or a file half-way); the lines read so far are still delivered. */
  signal?: AbortSignal;
  start?: SourcePosition;
}

const decoder = new TextDecoder();
const NEWLINE = 0x0a;

/**
 * Splits byte chunks into lines. `null` in the input marks "caught up with the end for now": a
 * trailing partial line is then held back until its newline arrives, unless the input ends.
 */
export async function* splitLines(
  input: AsyncIterable<Uint8Array | null>,
  start: SourcePosition,
  signal?: AbortSignal,
): AsyncGenerator<LineChunk> {
  let pending: Uint8Array = new Uint8Array(0);
  let offset = start.offset;
  let line = start.line + 1;
  for await (const bytes of input) {
    if (bytes === null) {
      yield { lines: [], firstLine: line, endOffset: offset, caughtUp: true };
      continue;
    }
    const last = bytes.lastIndexOf(NEWLINE);
    if (last === -1) {
      pending = concat(pending, bytes);
      continue;
    }
    // Only the line that straddles the previous chunk is copied together; the rest of a
    // multi-megabyte chunk is decoded where it lies (the bulk import read 640 MiB through here).
    const first = bytes.indexOf(NEWLINE);
    const lines: string[] = [];
    const wide: number[] = [];
    decodeLines(
      pending.length === 0 ? bytes.subarray(0, first) : concat(pending, bytes.subarray(0, first)),
      lines,
      wide,
    );
    if (first !== last) decodeLines(bytes.subarray(first + 1, last), lines, wide);
    const consumed = pending.length + last + 1;
    pending = bytes.slice(last + 1);
    offset += consumed;
    yield {
      lines,
      wide: wide.length > 0 ? new Set(wide) : undefined,
      firstLine: line,
      endOffset: offset,
      caughtUp: false,
    };
    line += lines.length;
  }
  // End of input: an unterminated last line still counts, unless reading was stopped half-way.
  if (pending.length > 0 && !signal?.aborted) {
    offset += pending.length;
    const lines: string[] = [];
    const wide: number[] = [];
    decodeLines(pending, lines, wide);
    yield {
      lines,
      wide: wide.length > 0 ? new Set(wide) : undefined,
      firstLine: line,
      endOffset: offset,
      caughtUp: true,
    };
  } else {
    yield { lines: [], firstLine: line, endOffset: offset, caughtUp: true };
  }
}

/**
 * A string whose characters all fit in one byte is stored with one byte per character, and so
 * are the strings JSON.parse makes from it; one wider character anywhere makes a whole decoded
 * string, and every line split from it, two bytes per character. Such strings parse, copy and
 * bind to SQLite measurably slower (~15% of a bulk import), so lines are decoded in pieces of a
 * few KiB and only pieces with a wide character, or a \u escape that may make one, are wide.
 */
const DECODE_PIECE_BYTES = 8 * 1024;
const WIDE = /[^\x00-\xff]|\\u/;

/** Decodes newline-separated bytes (no trailing newline) onto `lines`; notes wide lines' indexes. */
function decodeLines(bytes: Uint8Array, lines: string[], wide: number[]): void {
  for (let at = 0; ; ) {
    let end = bytes.length - at > DECODE_PIECE_BYTES ? bytes.indexOf(NEWLINE, at + DECODE_PIECE_BYTES) : -1;
    if (end === -1) end = bytes.length;
    const text = decoder.decode(bytes.subarray(at, end));
    const from = lines.length;
    for (const l of text.split("\n")) lines.push(l);
    if (WIDE.test(text)) for (let i = from; i < lines.length; i++) if (WIDE.test(lines[i])) wide.push(i);
    if (end === bytes.length) return;
    at = end + 1;
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
