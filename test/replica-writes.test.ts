/**
 * Freshness (docs/architecture.md, "Freshness"): every list cache declares the key it follows,
 * and a write through `ReplicaWrites` drops exactly the caches whose key moved — live rows the
 * replica mark's, a snapshot refresh the snapshot generation's as well, a read nothing — whether
 * this connection or another one committed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import type { Db } from "../db/driver.ts";
import { readReplicaState } from "../db/hydrate.ts";
import { openReplica } from "../db/replica.ts";
import { refreshSnapshot } from "../db/snapshot.ts";
import { type Freshness, ListCaches, ReplicaWrites } from "../server/list/caches.ts";
import { applyBatch } from "../sync/apply.ts";
import { parseRecordLine } from "../sync/records.ts";
import { eventRecord, venueRecord } from "./records.ts";

const T0 = Date.parse("2030-01-01T00:00:00Z");
let dir: string;
let db: Db;
let caches: ListCaches;
let writes: ReplicaWrites;
let cleared: Set<string>;
let nextId = 1;

/** The caches by the key each declares. */
const following = (key: Freshness) =>
  Object.entries(caches)
    .filter(([, c]) => (c as { follows?: Freshness }).follows === key)
    .map(([name]) => name)
    .sort();

const names = () => [...cleared].sort();

const newEvent = (d: Db) => {
  const id = nextId++;
  const record = eventRecord(id, 1, new Date(T0 + id * 3_600_000).toISOString());
  applyBatch(d, [parseRecordLine(JSON.stringify(record), 1)]);
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "marquee-writes-"));
  db = await openReplica(join(dir, "replica.db"));
  applyBatch(db, [parseRecordLine(JSON.stringify(venueRecord(1)), 1)]);
  newEvent(db);
  refreshSnapshot(db, T0);
  caches = new ListCaches(db, "http://marquee.test");
  writes = new ReplicaWrites(db, caches);
  // Every cache records its clearing under its field name.
  for (const [name, cache] of Object.entries(caches) as [string, { clear?(): void }][]) {
    const clear = cache.clear?.bind(cache);
    if (clear)
      cache.clear = () => {
        cleared.add(name);
        clear();
      };
  }
});

beforeEach(() => {
  cleared = new Set();
});

afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

it("declares a key for every list cache", () => {
  const all = [...following("query"), ...following("replica"), ...following("snapshot")].sort();
  expect(all).toEqual(Object.keys(caches).sort());
  expect(following("query")).toEqual(["headers", "parsed"]);
  expect(following("snapshot")).toEqual(["blocks", "estimates", "geo"]);
});

it("drops what follows the replica mark after live rows change, and the snapshot's caches after a refresh", async () => {
  await writes.apply(newEvent);
  expect(names()).toEqual(following("replica"));
  cleared.clear();
  await writes.apply((d) => refreshSnapshot(d, T0));
  expect(names()).toEqual([...following("replica"), ...following("snapshot")].sort());
});

it("drops nothing after a write that changed nothing", async () => {
  await writes.apply((d) => d.prepare("SELECT count(*) FROM events").get());
  expect(names()).toEqual([]);
});

it("sees its own write at once on the page cache's hit path", async () => {
  const before = caches.replicaMark.read();
  await writes.apply(newEvent);
  expect(caches.replicaMark.read()).not.toBe(before);
  expect(caches.replicaMark.read()).toBe(readReplicaState(db));
});

it("drops what another connection's commit made stale when told (a follower's commit)", async () => {
  const other = await openReplica(join(dir, "replica.db"));
  newEvent(other);
  other.close();
  writes.changed();
  expect(names()).toEqual(following("replica"));
});

it("drops what a failed write committed before it failed, and passes the failure on", async () => {
  const failing = writes.apply((d) => {
    newEvent(d);
    throw new Error("upstream went away");
  });
  await expect(failing).rejects.toThrow("upstream went away");
  expect(names()).toEqual(following("replica"));
});

it("drops every cache that describes the replica when the replica cannot be read", async () => {
  const closed = await openReplica(join(dir, "replica.db"));
  const closedWrites = new ReplicaWrites(closed, caches);
  closed.close();
  closedWrites.changed();
  expect(names()).toEqual([...following("replica"), ...following("snapshot")].sort());
});
