/**
 * The page cache (server/list/page-cache.ts): whenever it answers, its selection must
 * equal a fresh `selectPage`, and its hydrated body a fresh hydration, for the request's window.
 * Windows slide forward with a random clock over a replica of short and long events (the
 * default window), stay pinned (a cursor), or keep their start while the end moves (explicit
 * start, capped end). Some live events changed after the snapshot was taken, so the live
 * re-check drops rows the snapshot selected.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Db } from "../db/driver.ts";
import { type PageFilter, type PageSelection, readConsistently, selectPage } from "../db/events-query.ts";
import { HydratedEvents, hydratePageJson, type LiveBounds, readReplicaState } from "../db/hydrate.ts";
import { openReplica } from "../db/replica.ts";
import { refreshSnapshot } from "../db/snapshot.ts";
import { readSnapshotStats, SnapshotEstimates } from "../db/snapshot-stats.ts";
import { createPageCache, type PageBody, type PageCache, pageCacheKey } from "../server/list/page-cache.ts";
import type { ListWindow } from "../server/list/parse.ts";
import { applyBatch } from "../sync/apply.ts";
import { parseRecordLine } from "../sync/records.ts";
import { hydratePage } from "./hydrate-reference.ts";
import { eventRecord, venueRecord } from "./records.ts";

const T0 = Date.parse("2030-01-01T00:00:00Z");
const HOUR = 3_600_000;
let dir: string;
let db: Db;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "marquee-page-cache-"));
  db = await openReplica(join(dir, "replica.db"));
  const records: object[] = [venueRecord(1, { state: "CA" }), venueRecord(2, { state: "NY" })];
  let seed = 7;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  for (let i = 1; i <= 400; i++) {
    const start = T0 + rand(96) * HOUR;
    const end = start + (rand(8) === 0 ? (25 + rand(100)) * HOUR : rand(6) * HOUR);
    records.push(eventRecord(i, 1 + rand(2), new Date(start).toISOString(), { endDate: new Date(end).toISOString() }));
  }
  applyBatch(
    db,
    records.map((r, i) => parseRecordLine(JSON.stringify(r), i + 1)),
  );
  refreshSnapshot(db, T0);
  // Live changes the snapshot has not seen: earlier ends, later starts, a cancellation.
  db.exec(`UPDATE events SET end_ms = start_ms + ${HOUR / 2} WHERE id % 7 = 0`);
  db.exec(`UPDATE events SET start_ms = start_ms + ${2 * HOUR}, end_ms = NULL WHERE id % 4 = 0`);
  db.exec("DELETE FROM events WHERE id % 13 = 0");
});

/** The snapshot as a selection reads it, estimates fresh each time. */
const view = () => ({ stats: readSnapshotStats(db), estimates: new SnapshotEstimates(100) });
const events = new HydratedEvents("http://x", { eventBytes: 1 << 24, venueBytes: 1 << 20 });

afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A run of requests: how its window moves, the limit, the window's span, a filter, the clock's steps. */
const requestSequence = [
  fc.constantFrom("slide", "pinned", "fixed-start"),
  fc.integer({ min: 1, max: 30 }),
  fc.integer({ min: 1, max: 60 }),
  fc.constantFrom(null, "CA"),
  fc.array(fc.integer({ min: 0, max: 3 * HOUR }), { minLength: 2, maxLength: 25 }),
] as const;

/** The window of each request: sliding with the clock (the default), pinned (a cursor), or a fixed start whose end moves. */
function* windowsOf(mode: string, spanHours: number, steps: readonly number[]): Generator<ListWindow> {
  let now = T0 - 2 * HOUR;
  for (const step of steps) {
    now += step;
    yield mode === "slide"
      ? { afterMs: now, beforeMs: now + spanHours * HOUR }
      : mode === "pinned"
        ? { afterMs: T0, beforeMs: T0 + spanHours * HOUR }
        : { afterMs: T0, beforeMs: Math.max(T0 + HOUR, now + spanHours * HOUR - 10 * HOUR) };
  }
}

const filterFor = (w: ListWindow, state: string | null): PageFilter => ({
  ...w,
  state,
  city: null,
  sources: null,
  venueIds: null,
  excludeSoldOut: false,
  excludeAggregators: false,
});

interface Visit {
  cache: PageCache;
  key: string;
  window: ListWindow;
  filter: PageFilter;
  limit: number;
  /** The replica's state and a fresh selection, read in the same transaction as the visit. */
  state: string;
  fresh: PageSelection;
}

/**
 * Walks generated request sequences, a fresh cache per sequence; `visit` sees each request with
 * a fresh selection and returns true when the cache answered it. Returns how many did.
 */
function walkRequests(seed: number, visit: (v: Visit) => boolean): number {
  let hits = 0;
  fc.assert(
    fc.property(...requestSequence, (mode, limit, spanHours, stateFilter, steps) => {
      const cache = createPageCache(50);
      for (const window of windowsOf(mode, spanHours, steps)) {
        const key = pageCacheKey(`?state=${stateFilter ?? ""}`, limit, window);
        const filter = filterFor(window, stateFilter);
        readConsistently(db, () => {
          const fresh = selectPage(db, view(), filter, null, limit);
          if (visit({ cache, key, window, filter, limit, state: readReplicaState(db), fresh })) hits++;
        });
      }
    }),
    { numRuns: 150, seed },
  );
  return hits;
}

it("answers only with the selection a fresh read would make", () => {
  const hits = walkRequests(42, ({ cache, key, window, state, fresh }) => {
    const cached = cache.get(key, state, window);
    if (!cached) {
      cache.set(key, state, window, fresh);
      return false;
    }
    expect(cached.keys).toEqual(fresh.keys);
    expect(cached.hasMore).toBe(fresh.hasMore);
    return true;
  });
  // The property is only worth something if the cache did answer.
  expect(hits).toBeGreaterThan(200);
});

it("answers only with the body a fresh hydration would make", () => {
  const h = { baseUrl: "http://x", geo: null };
  const hits = walkRequests(43, ({ cache, key, window, filter, state, fresh }) => {
    const cached = cache.getBody(key, state, window);
    if (cached) {
      const data = hydratePage(db, fresh.keys, filter, h)
        .map((e) => JSON.stringify(e))
        .join(",");
      expect(cached.body.headText).toBe(`{"data":[${data}],"page":`);
      expect(cached.selection.hasMore).toBe(fresh.hasMore);
      return true;
    }
    let selection = cache.get(key, state, window);
    if (!selection) {
      selection = fresh;
      cache.set(key, state, window, selection);
    }
    const bounds: LiveBounds = { latestAfterMs: Infinity, droppedAfterClose: false };
    const json = hydratePageJson(db, events, state, selection.keys, filter, h, bounds);
    const headText = `{"data":[${json.join(",")}],"page":`;
    cache.setBody(key, selection, { headText, count: json.length, window: { ...window }, bounds });
    return false;
  });
  expect(hits).toBeGreaterThan(200);
});

it("keeps a body only for a page asked for again", () => {
  const w = { afterMs: T0, beforeMs: T0 + 10 * HOUR };
  const key = pageCacheKey("", 5, w);
  const state = readReplicaState(db);
  const selection = selectPage(db, view(), filterFor(w, null), null, 5);
  const body = (): PageBody => ({
    headText: "{}",
    count: 0,
    window: { ...w },
    bounds: { latestAfterMs: Infinity, droppedAfterClose: false },
  });
  const cache = createPageCache();
  cache.set(key, state, w, selection);
  // The request that selected the page: its body is not kept.
  cache.setBody(key, selection, body());
  expect(cache.getBody(key, state, w)).toBeUndefined();
  // The next request for it is served the selection, and keeps the body it hydrates.
  expect(cache.get(key, state, w)).toBe(selection);
  cache.setBody(key, selection, body());
  expect(cache.getBody(key, state, w)?.selection).toBe(selection);
});

it("drops an entry when the replica's state moved", () => {
  const cache = createPageCache();
  const w = { afterMs: T0, beforeMs: T0 + 10 * HOUR };
  const key = pageCacheKey("", 5, w);
  const state = readReplicaState(db);
  cache.set(key, state, w, selectPage(db, view(), filterFor(w, null), null, 5));
  expect(cache.get(key, state, w)).toBeDefined();
  db.prepare("UPDATE events SET title = 'x' WHERE id = 1").run();
  expect(readReplicaState(db)).not.toBe(state);
  expect(cache.get(key, readReplicaState(db), w)).toBeUndefined();
});

it("never serves a window that moved back", () => {
  const cache = createPageCache();
  const w = { afterMs: T0 + HOUR, beforeMs: T0 + 11 * HOUR };
  const key = pageCacheKey("", 5, w);
  const state = readReplicaState(db);
  cache.set(key, state, w, selectPage(db, view(), filterFor(w, null), null, 5));
  expect(cache.get(key, state, { afterMs: T0, beforeMs: T0 + 10 * HOUR })).toBeUndefined();
});

it("re-hydrates when the window's close moves past a row dropped for starting after it", () => {
  const w1 = { afterMs: T0, beforeMs: T0 + HOUR };
  const w2 = { afterMs: T0 + 1, beforeMs: T0 + HOUR + 1 };
  const key = pageCacheKey("", 1, w1);
  const selection = {
    keys: [{ startMs: T0 + 30 * 60_000, id: 4 }],
    hasMore: true,
    plan: null,
    earliestEndMs: T0 + HOUR,
  };
  for (const droppedAfterClose of [true, false]) {
    const cache = createPageCache();
    cache.set(key, "s", w1, selection);
    // A second request served the selection, so its body is kept.
    cache.get(key, "s", w1);
    cache.setBody(key, selection, {
      headText: "",
      count: 0,
      window: w1,
      bounds: { latestAfterMs: Infinity, droppedAfterClose },
    });
    expect(cache.getBody(key, "s", w1)).toBeDefined();
    expect(cache.getBody(key, "s", w2) === undefined).toBe(droppedAfterClose);
  }
});
