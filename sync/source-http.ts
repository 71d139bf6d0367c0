/**
 * An NDJSON record stream over http(s) (`sync --from https://…`): read as it arrives, never
 * buffered whole. A run that starts at a byte offset (the serving process's next periodic sync)
 * asks for the rest with a Range request; a server that ignores Range sends it all, and the
 * bytes already read are skipped. Whatever is re-read, records at or below the replica's
 * watermark are skipped (docs/upstream-records.md), so a rerun resumes where the last one
 * stopped. `--follow` asks again every few seconds for what was appended.
 */
import { SYNC } from "../db/contract.ts";
import { type RecordSource, type SourceOptions, sleep, splitLines } from "./source-lines.ts";

export class HttpSourceError extends Error {}

/**
 * The URL as logs and summaries show it: without credentials or a query string, either of which
 * may carry a secret (a password, a signed URL's signature).
 */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}${u.search ? "?…" : ""}`;
  } catch {
    return "(an unparsable URL)";
  }
}

/** The URL without its credentials, and the Basic authorization they stand for (fetch refuses them in the URL). */
function splitCredentials(url: string): { url: string; headers: Record<string, string> } {
  const u = new URL(url);
  if (!u.username && !u.password) return { url, headers: {} };
  const user = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
  u.username = "";
  u.password = "";
  return { url: u.href, headers: { authorization: `Basic ${Buffer.from(user).toString("base64")}` } };
}

/** One GET from `offset`; yields the body's bytes from there on. */
async function* fetchFrom(source: string, offset: number, signal?: AbortSignal): AsyncGenerator<Uint8Array> {
  const shown = displayUrl(source);
  let url: string;
  let headers: Record<string, string>;
  try {
    ({ url, headers } = splitCredentials(source));
  } catch {
    throw new HttpSourceError(`cannot fetch ${shown} (not a valid URL); check the URL`);
  }
  if (offset > 0) headers.range = `bytes=${offset}-`;
  let res: Response;
  try {
    res = await fetch(url, { headers, signal });
  } catch (err) {
    if (signal?.aborted) return;
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const reason = String(cause?.code ?? cause?.message ?? (err as Error).message).replaceAll(url, shown);
    throw new HttpSourceError(`cannot fetch ${shown} (${reason}); check the URL and that the server is up`);
  }
  if (res.status === 416) return; // nothing past the offset yet
  if (!res.ok) throw new HttpSourceError(`GET ${shown} answered ${res.status} ${res.statusText}; check the URL`);
  let skip = res.status === 206 ? 0 : offset;
  if (!res.body) return;
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      if (skip >= chunk.length) {
        skip -= chunk.length;
        continue;
      }
      yield skip > 0 ? chunk.subarray(skip) : chunk;
      skip = 0;
    }
  } catch (err) {
    if (signal?.aborted) return;
    throw new HttpSourceError(`reading ${shown} failed: ${(err as Error).message}`);
  }
}

async function* httpBytes(url: string, options: SourceOptions): AsyncGenerator<Uint8Array | null> {
  let offset = options.start?.offset ?? 0;
  for (;;) {
    for await (const chunk of fetchFrom(url, offset, options.signal)) {
      offset += chunk.length;
      yield chunk;
    }
    if (!options.follow || options.signal?.aborted) return;
    yield null;
    await sleep(SYNC.httpFollowPollMs, options.signal);
    if (options.signal?.aborted) return;
  }
}

export function httpSource(url: string, options: SourceOptions = {}): RecordSource {
  const start = options.start ?? { offset: 0, line: 0 };
  return {
    name: displayUrl(url),
    size: undefined,
    startOffset: start.offset,
    chunks: () => splitLines(httpBytes(url, options), start, options.signal),
  };
}
