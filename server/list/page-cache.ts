/**
 * Page selections kept for one replica mark, each with its hydrated page from the page's second request, served for a
 * window the selection provably still answers (docs/architecture.md, "Caches"; docs/perf-history.md, "Round 17").
 */
import type { PageSelection } from "../../db/events-query.ts";
import type { LiveBounds } from "../../db/hydrate.ts";
import { HOT_PATH } from "../../db/tuning.ts";
import { TwoGenerations } from "../../db/two-generations.ts";
import type { ListWindow } from "./parse.ts";

/** A page ready to send (server/list/response.ts): new, its text; from a kept body, the head's bytes and a tail. */
export interface PageOut {
  page: { nextCursor: string | null; hasMore: boolean; count: number };
  text: string | null;
  chunks: readonly [Uint8Array<ArrayBuffer>, Uint8Array<ArrayBuffer>] | null;
  /** The chunks as one Blob (on Bun) or one array, each made when first asked. */
  blob?: Blob;
  bytes?: Uint8Array<ArrayBuffer>;
}

/** A hydrated page: the response up to the page object, the window it was hydrated for, and how far that may move. */
export interface PageBody {
  /** `{"data":[…events…],"page":`, and its UTF-8 once the body is served again. */
  headText: string;
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
  /** A request after the one that selected it was served this selection. */
  reused: boolean;
}

export type PageCache = ReturnType<typeof createPageCache>;

const encoder = new TextEncoder();

/** The cache key: everything but the window and the mark, which `get` checks itself. */
export const pageCacheKey = (search: string, limit: number, window: ListWindow): string =>
  `${limit}|${window.beforeMs - window.afterMs}|${search}`;

/** Rough bytes an entry holds: the selected keys, its body's bytes, and the last answer sent from it (a copy). */
const entryBytes = (e: Entry) => 512 + 64 * e.selection.keys.length + (e.body ? 4 * e.body.headText.length + 512 : 0);

export function createPageCache(max: number = HOT_PATH.cachedPages, maxBytes: number = HOT_PATH.cachedPageBytes) {
  const entries = new TwoGenerations<string, Entry>({ entries: max, size: maxBytes, sizeOf: entryBytes });
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
    get(key: string, mark: string, w: ListWindow): PageSelection | undefined {
      const e = selected(key, mark, w);
      if (e) e.reused = true;
      return e?.selection;
    },
    /** The page's selection and body when both provably equal a fresh read, its head encoded to be sent as bytes. */
    getBody(key: string, mark: string, w: ListWindow): { selection: PageSelection; body: PageBody } | undefined {
      const e = selected(key, mark, w);
      const b = e?.body;
      if (!e || !b) return undefined;
      const opens = b.window.afterMs <= w.afterMs && w.afterMs <= b.bounds.latestAfterMs;
      const closes =
        w.beforeMs === b.window.beforeMs || (w.beforeMs > b.window.beforeMs && !b.bounds.droppedAfterClose);
      if (!opens || !closes) return undefined;
      b.head ??= encoder.encode(b.headText);
      return { selection: e.selection, body: b };
    },
    set(key: string, mark: string, { afterMs, beforeMs }: ListWindow, selection: PageSelection): void {
      entries.set(key, { mark, window: { afterMs, beforeMs }, selection, body: null, reused: false });
    },
    /** Keeps the body hydrated from `selection` if that is still kept and a later request was served it. */
    setBody(key: string, selection: PageSelection, body: PageBody): void {
      const e = entries.get(key);
      // Set again so the entry's size counts the body.
      if (e && e.selection === selection && e.reused) entries.set(key, { ...e, body });
    },
    clear: (): void => entries.clear(),
  };
}
