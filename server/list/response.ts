/**
 * The bytes and headers of a list page: byte for byte the UTF-8 of `JSON.stringify({data, page})`, the events' kept
 * JSON (db/hydrate.ts `hydratePageJson`) joined up to `"page":` (`headOf`), then the per-request page object.
 */
import type { PageSelection } from "../../db/events-query.ts";
import { onBun } from "../../db/runtime.ts";
import { encodeCursor } from "../cursor.ts";
import type { RequestScope } from "../handle.ts";
import type { PageBody, PageOut } from "./page-cache.ts";
import type { ListWindow, ParsedQuery } from "./parse.ts";

const encoder = new TextEncoder();

function pageOut(body: Pick<PageBody, "headText" | "head">, page: PageOut["page"]): PageOut {
  const head = body.head;
  if (!head) return { page, text: `${body.headText}${JSON.stringify(page)}}`, chunks: null };
  return { page, text: null, chunks: [head, encoder.encode(`${JSON.stringify(page)}}`)] };
}

/** The body for a Response: on Bun a Blob, which Bun sends as it is (bytes it would copy per response). */
export function responseBody(out: PageOut): Blob | Uint8Array<ArrayBuffer> | string {
  if (out.text !== null) return out.text;
  if (!onBun) return joinedBytes(out);
  out.blob ??= new Blob([...out.chunks!]);
  return out.blob;
}

/** The body for a reply in parts: the text, or a kept page's chunks joined once per page. */
export const bodyParts = (out: PageOut): string | Uint8Array<ArrayBuffer> => out.text ?? joinedBytes(out);

function joinedBytes(out: PageOut): Uint8Array<ArrayBuffer> {
  if (out.bytes) return out.bytes;
  const [head, tail] = out.chunks!;
  const bytes = new Uint8Array(head.length + tail.length);
  bytes.set(head);
  bytes.set(tail, head.length);
  out.bytes = bytes;
  return bytes;
}

/** `{"data":[…],"page":` for the events' JSON. */
export const headOf = (dataJson: string): string => `{"data":[${dataJson}],"page":`;

/** The answer when the filters can match nothing. */
export const NO_MATCH: PageOut = pageOut({ headText: headOf("") }, { nextCursor: null, hasMore: false, count: 0 });

/** The page for this request's window, kept with the body for the same window (the cursor pins it). */
export function withCursor(
  secret: string,
  selection: PageSelection,
  body: PageBody,
  { q, fingerprint }: ParsedQuery,
  window: ListWindow,
): PageOut {
  // Continue from the last SNAPSHOT row of the page, not the last delivered one (docs/api.md, Pagination).
  const last = selection.keys.at(-1) ?? q.cursor?.position ?? null;
  const next = selection.hasMore && last !== null;
  const kept = body.lastPage;
  const pins =
    kept?.afterMs === window.afterMs && kept.beforeMs === window.beforeMs && kept.fingerprint === fingerprint;
  if (kept && (!next || pins)) return kept.out;
  const nextCursor = next ? encodeCursor(secret, last, { ...window, fingerprint }) : null;
  const out = pageOut(body, { nextCursor, hasMore: selection.hasMore, count: body.count });
  body.lastPage = { ...window, fingerprint, out };
  return out;
}

/** Every page's own header fields; the access stages' and the request id follow. */
const PAGE_HEADERS = Object.freeze({
  "content-type": "application/json; charset=utf-8",
  "cache-control": "private, no-store",
});

/** A page's header fields, in the order `ListHeaders` sets them, for a reply in parts. */
export function listHeaderFields(scope: RequestScope): Record<string, string> {
  return { ...PAGE_HEADERS, ...scope.headers, "x-request-id": scope.requestId };
}

type HeaderSet = { next: Map<string, HeaderSet>; headers: Headers | null };

/**
 * A page's headers: a Response copies the Headers it is given, so one per sequence of access header names (a tree
 * walked by name) is refilled for each page, 9 % less CPU than headers from an object (docs/perf-history.md, "The list
 * request's stages: one stage list against a synchronous path").
 */
export class ListHeaders {
  readonly #root: HeaderSet = { next: new Map(), headers: null };

  for(scope: RequestScope): Headers {
    const access = scope.headers;
    let set = this.#root;
    for (const name in access) {
      let next = set.next.get(name);
      if (!next) {
        next = { next: new Map(), headers: null };
        set.next.set(name, next);
      }
      set = next;
    }
    set.headers ??= new Headers(PAGE_HEADERS);
    const headers = set.headers;
    for (const name in access) headers.set(name, access[name]);
    headers.set("x-request-id", scope.requestId);
    return headers;
  }
}
