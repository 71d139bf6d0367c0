/**
 * Page selections kept between requests, for one replica mark (an entry of another mark is
 * dropped). Selecting a page (db/events-query.ts) is a pure function of the mark, the filters,
 * the cursor position, the limit and the window; hydration, the cursor, headers and the row
 * accounting still run per request. An entry stored for window [a, b] serves [a', b'] (same
 * query string and limit) when a <= a' <= the earliest end among the selected rows, b' >= b, and
 * either b' = b or the selection was full (hasMore): every kept row is still in the window, and
 * a row that entered it started after b, so it sorts after them all. The default window slides
 * with the clock, which is this case; a pinned one (a cursor, explicit dates) matches itself.
 *
 * An entry also keeps the hydrated page (`PageBody`), whose live re-check depends on the window
 * only through the bounds it records (db/hydrate.ts `LiveBounds`); a hit then needs no read
 * transaction, geo lookup or hydration. A body is kept only from a page's second request: most
 * new pages are asked for once, and keeping their bodies churned the heap every request
 * allocates from (docs/perf-history.md, "Round 17"). docs/architecture.md, "Caches", has the
 * whole argument.
 */
import { LRUCache } from "lru-cache";
import type { PageSelection } from "../../db/events-query.ts";
import type { LiveBounds } from "../../db/hydrate.ts";
import { HOT_PATH } from "../../db/tuning.ts";
import type { ListWindow } from "./parse.ts";

/** A page ready to send: its page object (for the row count) and the response body's UTF-8. */
export interface PageOut {
  page: { nextCursor: string | null; hasMore: boolean; count: number };
  /** A page sent for the first time: its text (encoded once, as it is sent). */
  text: string | null;
  /** A page sent again from a kept body: the body's encoded head and its tail. */
  chunks: readonly [Uint8Array<ArrayBuffer>, Uint8Array<ArrayBuffer>] | null;
  /** On Bun, the chunks as one Blob for a Response, made when first asked (server/list/response.ts `responseBody`). */
  blob?: Blob;
  /** The chunks as one array, made when first asked (server/list/response.ts `joinedBytes`). */
  bytes?: Uint8Array<ArrayBuffer>;
}

/** A hydrated page: its response up to the page object, the window it was hydrated for, and how far that may move. */
export interface PageBody {
  /** `{"data":[…events…],"page":` — everything before the per-request page object. */
  headText: string;
  /** Its UTF-8, encoded when the body is first served again. */
  head?: Uint8Array<ArrayBuffer>;
  /** The last page sent from this body, with the window and filters its cursor pins. */
  lastPage?: { afterMs: number; beforeMs: number; fingerprint: string; out: PageOut };
  count: number;
  window: ListWindow;
  bounds: LiveBounds;
}

interface Entry {
  mark: string;
  window: ListWindow;
  selection: PageSelection;
  body: PageBody | null;
  /** Whether a request after the one that selected it was served this selection. */
  reused: boolean;
}

export interface PageCache {
  get(key: string, mark: string, window: ListWindow): PageSelection | undefined;
  /** The page's selection and body when both provably equal a fresh read. */
  getBody(key: string, mark: string, window: ListWindow): { selection: PageSelection; body: PageBody } | undefined;
  set(key: string, mark: string, window: ListWindow, selection: PageSelection): void;
  /**
   * Keeps the body hydrated from `selection`, if that selection is still the cached one and a
   * later request than the one that selected it was served it (`get`).
   */
  setBody(key: string, selection: PageSelection, body: PageBody): void;
  clear(): void;
}

/** The cache key: everything but the window and the mark, which `get` checks itself. */
export const pageCacheKey = (search: string, limit: number, window: ListWindow): string =>
  `${limit}|${window.beforeMs - window.afterMs}|${search}`;

/** Rough bytes an entry holds: the selected keys, its body's bytes, and the last answer sent from it (a copy). */
const entryBytes = (e: Entry) => 512 + 64 * e.selection.keys.length + (e.body ? 4 * e.body.headText.length + 512 : 0);

export function createPageCache(
  max: number = HOT_PATH.cachedPages,
  maxBytes: number = HOT_PATH.cachedPageBytes,
): PageCache {
  const entries = new LRUCache<string, Entry>({ max, maxSize: maxBytes, sizeCalculation: entryBytes });
  function selected(key: string, mark: string, w: ListWindow): Entry | undefined {
    const e = entries.get(key);
    if (!e) return undefined;
    if (e.mark !== mark) {
      entries.delete(key);
      return undefined;
    }
    const s = e.selection;
    const slid = e.window.afterMs <= w.afterMs && w.afterMs <= s.earliestEndMs && w.beforeMs >= e.window.beforeMs;
    // A full selection (hasMore) read limit + 1 rows; the `limit + 1`-th counts in earliestEndMs.
    return slid && (w.beforeMs === e.window.beforeMs || s.hasMore) ? e : undefined;
  }
  return {
    get(key, mark, w) {
      const e = selected(key, mark, w);
      if (e) e.reused = true;
      return e?.selection;
    },
    getBody(key, mark, w) {
      const e = selected(key, mark, w);
      const b = e?.body;
      if (!e || !b) return undefined;
      const opens = b.window.afterMs <= w.afterMs && w.afterMs <= b.bounds.latestAfterMs;
      const closes =
        w.beforeMs === b.window.beforeMs || (w.beforeMs > b.window.beforeMs && !b.bounds.droppedAfterClose);
      return opens && closes ? { selection: e.selection, body: b } : undefined;
    },
    set(key, mark, { afterMs, beforeMs }, selection) {
      entries.set(key, { mark, window: { afterMs, beforeMs }, selection, body: null, reused: false });
    },
    setBody(key, selection, body) {
      const e = entries.peek(key);
      // Set again so the entry's size counts the body.
      if (e && e.selection === selection && e.reused) entries.set(key, { ...e, body });
    },
    clear: () => entries.clear(),
  };
}
