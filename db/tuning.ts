/**
 * How the serving process trades memory and time for speed: cache sizes, how stale a cache may
 * run, how often counters are written. None of these changes what the API answers, only how fast
 * (test/bench/RESULTS.md measures them); the API's own limits and codes are in db/contract.ts.
 */
/** Hot-path caches of the list endpoint (db/hydrate.ts). */
export const HOT_PATH = {
  /**
   * Bytes of events, and of venues, kept as served JSON between requests (db/hydrate.ts
   * HydratedEvents), by a conservative estimate: about 1.3 kB an event, so up to some 19,000
   * events, and 640 bytes a venue, so up to some 39,000 venues (the demo's 1,000,000 events have
   * 40,000); in two generations (db/two-generations.ts), so between half of that and all of it.
   * An event is kept from its second reading, a venue from its first: a new page's events are
   * mostly read once, its venues mostly read before. A missed event reads its stored served
   * JSON, so 24 MiB of events instead of 56 costs less than it did: in one run of the unique
   * traffic private memory peaked at 496 MB instead of 548, at 13 % more CPU a new state page
   * (docs/perf-history.md, "Round 28").
   */
  hydratedEventBytes: 24 * 1024 * 1024,
  hydratedVenueBytes: 24 * 1024 * 1024,
  /**
   * Page selections kept between requests (server/list/page-cache.ts), and their bytes with
   * bodies (about 40 kB for a page of 25, its body and the last answer sent from it). Small on
   * purpose: a body helps only a query that repeats, so one is kept only from a page's second
   * request (test/bench/RESULTS.md, "Unique traffic" and round 17).
   */
  cachedPages: 2_000,
  cachedPageBytes: 24 * 1024 * 1024,
  /**
   * The serving process collects its garbage in full once its private memory (`RssAnon`, which
   * leaves out the mapped replica) passes this, at most this often (server/background.ts).
   * Measured with `bun test/bench/run.ts --only-unique` (the 1,000,000-event replica, every class
   * of new traffic in turn): after a full collection the heap held 130–150 MB, about what the
   * caches above estimate, and the process 250–330 MB; the rest of the growth is old-generation
   * garbage, which the engine clears on its own only near three times what is live. With 448 MiB
   * and 30 s (and a collection that was not a full one) the run peaked at 584 MB (710, peak 819,
   * in a full `npm run bench`); with 352 MiB and 5 s at 441 MB. A collection paused the requests
   * 46–265 ms (85 typical); at most one each 5 s it costs a request some 7 µs of CPU at 2,500 a
   * second, and every class's p99 was as low or lower. On the 3,000,000-event replica it still
   * peaked at 572 MB (the live caches and the lag after a collection: docs/perf-history.md,
   * "Round 27").
   */
  collectAbovePrivateBytes: 352 * 1024 * 1024,
  collectEveryMs: 5_000,
  /**
   * Past this line, collections may come every `collectOftenEveryMs`: on the 3,000,000-event replica
   * new geo pages, walks and the Zipf mix grew private memory past 512 MB between two collections
   * 5 s apart. In `--only-unique` runs on that replica the peak went from 560 MB to 492–545 in four
   * runs, at up to a third more CPU a request in a class whose memory crossed the line; on 1,000,000
   * events 458, 442 and 446 MB in three full runs, 474 before (docs/perf-history.md, "Round 29").
   */
  collectOftenAbovePrivateBytes: 432 * 1024 * 1024,
  collectOftenEveryMs: 1_000,
  /** How often the memory guard reads private memory (`/proc/self/status`, some tens of µs). */
  collectReadEveryMs: 500,
  /**
   * A collection also waits until private memory grew this much above its lowest reading since
   * the last one (server/background.ts `CollectionPolicy`): new traffic grows it faster than that
   * between two collections, while an idle server whose live caches sit above the line is left alone.
   */
  collectGrowthBytes: 32 * 1024 * 1024,
  /** Geo searches kept for the current venue table (db/geo.ts GeoIndex), and their bytes. */
  geoResults: 256,
  geoResultBytes: 16 * 1024 * 1024,
  /**
   * State index ranges that geo pages scan, kept between requests (db/kept-scans.ts): their
   * bytes (32 a row), and the rows one range may keep before a scan reads on without keeping.
   * One and a half times what an exact least-recently-used cache held, as `blockBytes`.
   */
  keptScanBytes: 48 * 1024 * 1024,
  keptScanRows: 32_768,
  /**
   * Most long snapshot rows (events longer than a day) for which the long half of a page is read
   * from blocks (db/snapshot-blocks.ts): an unfiltered page's block holds every one, read whole.
   * The demo's 1,000,000 events have some 18,000 (450 KB in a block).
   */
  longEventRows: 500_000,
  /**
   * Bytes of the snapshot's rows kept in blocks for pages of a state (or a city in it) or of
   * sources, and unfiltered ones (db/snapshot-blocks.ts), 25 a row: the demo's 880,000 short
   * rows would take 22 MB for each of the four. `npm run bench:stores` (3,000 new pages a
   * class) held 35.5 MB; at 32 MiB city blocks pushed out source blocks (source pages 1.44x
   * plain SQLite against 1.54x at 48 MiB). Kept in two generations (db/two-generations.ts), which
   * hold between half the bound and all of it: at 48 MiB new source pages took 9 % more CPU than
   * with an exact least-recently-used cache of 48 MiB, at 96 MiB as much; on 3,000,000 events
   * private memory peaked at 430–437, 434–474 and 527 MB with 48, 72 and 96 MiB (docs/perf-history.md,
   * "Round 30").
   */
  blockBytes: 72 * 1024 * 1024,
  /**
   * Rows a source's block of short rows is sized for (db/snapshot-blocks.ts): in the demo's
   * million events the largest sources (38,000 rows over 451 days) get blocks of 16 days, most
   * sources (under 100 rows) one or two blocks in all. A block is read whole the first time a
   * page needs it.
   */
  sourceBlockRows: 2_048,
  /**
   * Bytes of the replica the serving process's connection maps into memory (`PRAGMA mmap_size`;
   * SQLite caps it near 2 GiB): rows are read from the map instead of through a read call
   * and a copy into SQLite's page cache each, which stays at SQLite's default (2 MiB). Measured
   * (test/bench/RESULTS.md, "What each mechanism buys"): new pages 1.04–1.31x faster; the mapped
   * pages are the OS's shared file cache, so RSS grew 314 → 900 MB while the private memory
   * (RssAnon) went 271.5 → 284.0 MB (288.5 → 289.1 in another pair: the heap's noise), no swap.
   */
  replicaMmapBytes: 2 * 1024 * 1024 * 1024,
  /** Source-prefix row estimates kept per snapshot (db/snapshot-stats.ts SnapshotEstimates). */
  sourceEstimates: 2_000,
  /**
   * Commits by other processes (`marquee sync`, the CLI) reach the serving process's caches at
   * most this late; its own writes at once. Saves a ledger and a replica read per request.
   */
  foreignCommitLagMs: 5,
  /** Parsed list queries kept by their raw query string (server/routes/events.ts). */
  parsedQueries: 2_000,
  /** Longest a change to the request path's counters waits before it is written (server/limits/meter.ts). */
  meterFlushMs: 10,
  /** Delivered rows older than the rolling window are deleted from the ledger about this often per account. */
  meterPruneMs: 60_000,
  /** A refused group of counter changes is retried after this. */
  meterRetryMs: 100,
  /** The meter's group waits this long for a lock held elsewhere, then retries later. */
  meterBusyTimeoutMs: 50,
  /** SQLite page cache of the serving process's ledger connection. */
  ledgerCacheKiB: 32_768,
  /** Buckets, usage totals and trials kept in memory before idle ones are dropped (they reload). */
  meterEntries: 100_000,
} as const;
