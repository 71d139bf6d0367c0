#!/usr/bin/env bun
/**
 * What each hand-built store of page selection buys over SQLite with the replica memory-mapped:
 * new pages of each class (test/bench/lib/unique.ts), cursor walks and the repeated default page,
 * selected and hydrated in-process (db/events-query.ts `selectPage`, db/hydrate.ts
 * `hydratePageJson`) as the list path does on a page-cache miss, one request at a time.
 *
 *   bun test/bench/stores.ts [--requests N] [--slice N] [--db PATH] [--configs a,b] [--mmap BYTES]
 *
 * Every configuration has its own replica connection and its own caches. Configurations take
 * turns slice by slice in one run (A B … B A), each slice on requests none has seen, so a noisy
 * box loads them alike. Prints the median microseconds per class and configuration, each
 * configuration's ratio to plain SQLite under the same memory map (`mmap`; the first
 * configuration when it is not run), the stores' bytes, the share of each class's events already
 * kept at hydration, and the process's memory (RssAnon, the private part, beside RSS, which
 * counts the mapped file too: run one configuration per process to compare memory). Besides the
 * stores, `mmap+all-hydrated` keeps no hydrated events or venues (db/hydrate.ts HydratedEvents).
 */
import { mkdirSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import type { Db } from "../../db/driver.ts";
import { type PagePosition, readConsistently, selectPage } from "../../db/events-query.ts";
import { GeoIndex, type LiveGeo } from "../../db/geo.ts";
import { HydratedEvents, hydratePageJson, readReplicaState } from "../../db/hydrate.ts";
import { KeptScans } from "../../db/kept-scans.ts";
import { openReplica } from "../../db/replica.ts";
import { SnapshotBlocks } from "../../db/snapshot-blocks.ts";
import { readSnapshotStats, SnapshotEstimates } from "../../db/snapshot-stats.ts";
import { HOT_PATH } from "../../db/tuning.ts";
import { pageFilterOf, parseListParams, resolveWindow } from "../../server/list/parse.ts";
import { REPLICA_DB, RUN_DIR } from "./lib/fixture.ts";
import { type UniqueClass, writeUniqueLists } from "./lib/unique.ts";
import { WALK_PAGES } from "./lib/unique-measure.ts";

const { values } = parseArgs({
  options: {
    requests: { type: "string" },
    slice: { type: "string" },
    db: { type: "string" },
    configs: { type: "string" },
    mmap: { type: "string" },
  },
});
const requests = Number(values.requests ?? 600);
const slice = Number(values.slice ?? 20);
const mmapBytes = Number(values.mmap ?? HOT_PATH.replicaMmapBytes);
const dbPath = values.db ?? REPLICA_DB;

type Store = "scans" | "blocks";

/** A configuration: the memory map on or off, and the stores it keeps (the view's optional parts). */
interface Config {
  name: string;
  mmap: boolean;
  stores: readonly Store[];
  /** False: no hydrated events or venues kept (db/hydrate.ts HydratedEvents with room for none). */
  hydrated?: boolean;
}

/** The stores page selection has: each measured alone against plain SQLite under the same map. */
const STORES: readonly Store[] = ["scans", "blocks"];

const ALL_CONFIGS: Config[] = [
  { name: "sql", mmap: false, stores: [] },
  { name: "mmap", mmap: true, stores: [] },
  ...STORES.map((s) => ({ name: `mmap+${s}`, mmap: true, stores: [s] })),
  { name: "sql+all", mmap: false, stores: STORES },
  { name: "mmap+all", mmap: true, stores: STORES },
  { name: "mmap+all-hydrated", mmap: true, stores: STORES, hydrated: false },
];

const configs = values.configs ? ALL_CONFIGS.filter((c) => values.configs!.split(",").includes(c.name)) : ALL_CONFIGS;

interface Side {
  config: Config;
  db: Db;
  geo: GeoIndex;
  estimates: SnapshotEstimates;
  events: HydratedEvents;
  scans: KeptScans | null;
  blocks: SnapshotBlocks | null;
  times: Map<string, number[]>;
  /** Per class: the page's events, and those already kept (db/hydrate.ts HydratedEvents) when it was hydrated. */
  kept: Map<string, { events: number; kept: number }>;
}

async function openSide(config: Config): Promise<Side> {
  const db = await openReplica(dbPath, { readonly: true });
  db.exec(`PRAGMA mmap_size = ${config.mmap ? mmapBytes : 0}`);
  const has = (s: Store) => config.stores.includes(s);
  return {
    config,
    db,
    geo: new GeoIndex(db, HOT_PATH.geoResults, HOT_PATH.geoResultBytes),
    estimates: new SnapshotEstimates(HOT_PATH.sourceEstimates),
    events: new HydratedEvents("http://bench.local", {
      eventBytes: config.hydrated === false ? 1 : HOT_PATH.hydratedEventBytes,
      venueBytes: config.hydrated === false ? 1 : HOT_PATH.hydratedVenueBytes,
    }),
    scans: has("scans") ? new KeptScans(HOT_PATH.keptScanBytes, HOT_PATH.keptScanRows) : null,
    blocks: has("blocks") ? new SnapshotBlocks(HOT_PATH) : null,
    times: new Map(),
    kept: new Map(),
  };
}

const storeBytes = (s: Side) => (s.scans?.bytes ?? 0) + (s.blocks?.bytes ?? 0);

/** One page, selected and hydrated in one read transaction; returns the last row's position when more follow. */
function page(side: Side, search: string, from: PagePosition | null, cls = ""): PagePosition | null {
  const q = parseListParams(new URLSearchParams(search), "bench-secret");
  const window = resolveWindow(q, Date.now(), null);
  const geo = q.geo ? side.geo.find(q.geo, q.includeCentroids) : null;
  const filter = pageFilterOf(q, window, geo);
  const live: LiveGeo | null = geo?.live ?? null;
  return readConsistently(side.db, () => {
    const state = readReplicaState(side.db);
    const view = {
      stats: readSnapshotStats(side.db),
      estimates: side.estimates,
      scans: side.scans ? { kept: side.scans, state } : null,
      blocks: side.blocks,
    };
    const selection = selectPage(side.db, view, filter, from, q.limit);
    const count = side.kept.get(cls) ?? { events: 0, kept: 0 };
    side.kept.set(cls, count);
    count.events += selection.keys.length;
    for (const k of selection.keys) if (side.events.has(state, k.id)) count.kept++;
    hydratePageJson(side.db, side.events, state, selection.keys, filter, { baseUrl: "http://bench.local", geo: live });
    return selection.hasMore ? selection.keys[selection.keys.length - 1] : null;
  });
}

const CLASSES: UniqueClass[] = ["state", "state-city", "source", "circle", "polygon"];

const lists = await (async () => {
  mkdirSync(RUN_DIR, { recursive: true });
  const db = await openReplica(dbPath, { readonly: true });
  const walksPer = Math.ceil(requests / WALK_PAGES) * configs.length + 4;
  const out = writeUniqueLists(db, {
    perClass: requests * configs.length + 100,
    walks: walksPer,
    zipfRequests: 10,
    zipfQueries: 10,
    seed: 11,
    nowMs: Date.now(),
  });
  db.close();
  return out;
})();
const read = (file: string) => readFileSync(file, "utf8").trim().split("\n");

const sides = await Promise.all(configs.map(openSide));

for (const cls of [...CLASSES, "walk", "default"]) {
  const paths =
    cls === "walk"
      ? read(lists.walks).map((l) => l.split("\t")[1])
      : cls === "default"
        ? []
        : read(lists.paths[cls as UniqueClass]);
  let next = 0;
  const nextSearch = () => (cls === "default" ? "" : search(paths[next++]));
  // Warm-up: each side's code paths (not its caches: the paths are new to it).
  if (cls !== "walk") for (const side of sides) for (let i = 0; i < 10; i++) page(side, nextSearch(), null);
  const perSide = cls === "walk" ? Math.ceil(requests / WALK_PAGES) : requests;
  const perSlice = cls === "walk" ? 1 : slice;
  // Turns: A B … in even rounds, … B A in odd ones.
  for (let round = 0; round * perSlice < perSide; round++) {
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      for (let i = 0; i < perSlice && round * perSlice + i < perSide; i++) {
        const s = nextSearch();
        let from: PagePosition | null = null;
        for (let p = 0; p < (cls === "walk" ? WALK_PAGES : 1); p++) {
          const t0 = performance.now();
          from = page(side, s, from, cls);
          const us = (performance.now() - t0) * 1000;
          const list = side.times.get(cls) ?? [];
          side.times.set(cls, list);
          list.push(us);
          if (from === null) break;
        }
      }
    }
  }
}

function search(path: string): string {
  const q = path.indexOf("?");
  return q === -1 ? "" : path.slice(q + 1);
}

const median = (a: number[]) => {
  const s = [...a].sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)];
};
const base = sides.find((s) => s.config.name === "mmap") ?? sides[0];
const classes = [...CLASSES, "walk", "default"];
console.log(`replica ${dbPath}, ${requests} requests a class and configuration, slices of ${slice}, ${RUN_DIR}`);
console.log(`| configuration | ${classes.join(" | ")} | store bytes |`);
console.log(`|---|${classes.map(() => "--:").join("|")}|--:|`);
for (const side of sides) {
  const cells = classes.map((cls) => {
    const m = median(side.times.get(cls) ?? [0]);
    const b = median(base.times.get(cls) ?? [0]);
    return side === base ? `${m.toFixed(0)} µs` : `${m.toFixed(0)} µs (${(b / m).toFixed(2)}x)`;
  });
  console.log(`| ${side.config.name} | ${cells.join(" | ")} | ${(storeBytes(side) / 1e6).toFixed(1)} MB |`);
}
const status = readFileSync("/proc/self/status", "utf8");
const field = (name: string) => status.match(new RegExp(`^${name}:\\s+(\\d+) kB`, "m"))?.[1] ?? "?";
console.log(
  `process: VmRSS ${field("VmRSS")} kB, RssAnon ${field("RssAnon")} kB, RssFile ${field("RssFile")} kB, VmSwap ${field("VmSwap")} kB`,
);
for (const side of sides) side.db.close();
for (const side of sides) {
  const shares = classes.map((cls) => {
    const c = side.kept.get(cls);
    return c ? `${cls} ${((100 * c.kept) / Math.max(1, c.events)).toFixed(0)} %` : `${cls} –`;
  });
  console.log(`events already kept at hydration, ${side.config.name}: ${shares.join(", ")}`);
}
