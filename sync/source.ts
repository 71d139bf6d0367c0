/**
 * Where upstream records come from (docs/operations.md, The program `sync --from SRC`): an NDJSON
 * file, `-` for stdin, an http(s) URL (sync/source-http.ts), or bytes in memory. A source yields
 * complete lines in order with their line numbers;
 * a file source can follow the file as lines are appended (`--follow`) and can resume at a byte
 * offset (the serving process's periodic sync reads only what was appended since last time).
 */
import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import { SYNC } from "../db/contract.ts";
import { displayUrl, httpSource } from "./source-http.ts";
import {
  type LineChunk,
  type RecordSource,
  type SourceOptions,
  type SourcePosition,
  sleep,
  splitLines,
} from "./source-lines.ts";

export type { LineChunk, RecordSource, SourceOptions, SourcePosition };

/** Reads a file from `start`; with `follow`, polls for appended bytes until the signal aborts. */
async function* fileBytes(path: string, options: SourceOptions): AsyncGenerator<Uint8Array | null> {
  const fd = openSync(path, "r");
  try {
    let position = options.start?.offset ?? 0;
    // One buffer for the whole read: the consumer (splitLines) is done with a chunk, keeping
    // copies of what it holds on to, before it asks for the next.
    const buffer = new Uint8Array(SYNC.readChunkBytes);
    for (;;) {
      if (options.signal?.aborted) return; // stopped: the lines read so far are still applied
      const n = readSync(fd, buffer, 0, buffer.length, position);
      if (n > 0) {
        position += n;
        yield buffer.subarray(0, n);
        continue;
      }
      if (!options.follow) return;
      yield null;
      if (fstatSync(fd).size < position) throw new Error(`${path} shrank while following it; start the sync again`);
      await sleep(SYNC.followPollMs, options.signal);
      if (options.signal?.aborted) return;
    }
  } finally {
    closeSync(fd);
  }
}

export function fileSource(path: string, options: SourceOptions = {}): RecordSource {
  const size = statSync(path).size; // fails early, with the OS's message, when the file is missing
  const start = options.start ?? { offset: 0, line: 0 };
  if (start.offset > size)
    throw new Error(`${path} is shorter than the position reached before (${start.offset} bytes)`);
  return {
    name: path,
    size,
    startOffset: start.offset,
    chunks: () => splitLines(fileBytes(path, options), start, options.signal),
  };
}

/** A stream of bytes (stdin, or generated demo data) read to its end. */
export function streamSource(
  name: string,
  stream: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
): RecordSource {
  const encoder = new TextEncoder();
  async function* bytes(): AsyncGenerator<Uint8Array> {
    for await (const chunk of stream) yield typeof chunk === "string" ? encoder.encode(chunk) : chunk;
  }
  return { name, size: undefined, chunks: () => splitLines(bytes(), { offset: 0, line: 0 }) };
}

const isHttpUrl = (spec: string) => /^https?:\/\//i.test(spec);

/** `SRC` as logs show it: an http(s) URL without its credentials or query string. */
export function displaySource(spec: string): string {
  return isHttpUrl(spec) ? displayUrl(spec) : spec;
}

/** `SRC` of `sync --from`: `-` is stdin, an http(s) URL an NDJSON stream, anything else a file path. */
export function openSource(spec: string, options: SourceOptions = {}): RecordSource {
  if (spec === "-") return streamSource("stdin", process.stdin);
  if (isHttpUrl(spec)) return httpSource(spec, options);
  if (/^(postgres|postgresql):\/\//i.test(spec))
    throw new Error("a PostgreSQL source is read by sync/postgres, not as NDJSON");
  return fileSource(spec, options);
}
