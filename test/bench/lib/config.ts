/**
 * The benchmark's knobs and targets in one place. Durations are short on purpose: the
 * whole run stays under ~10 minutes on the 2-core bench machine.
 */
import { join } from "node:path";

export const ROOT = join(import.meta.dirname, "..", "..", "..");
export const BUN = join(ROOT, "node_modules", ".bin", "bun");
/** Cache of expensive inputs (demo NDJSON, replica, bundles); gitignored. */
export const CACHE = join(ROOT, ".bench");
export const RESULTS_MD = join(ROOT, "test", "bench", "RESULTS.md");

export const LOAD = {
  connections: 32,
  threads: 2,
  /**
   * Once per server before its first scenario: lets its JIT settle. A server on the Redis ledger
   * spent 201, 141, then 75–97 µs of CPU a default page over its first 2-s stretches of load
   * (docs/perf-history.md, "Round 14"): with 3 s, its first cell measured the JIT, not the steady state.
   */
  targetWarmupS: 8,
  warmupS: 1,
  durationS: 6,
  /**
   * The measured time is run in this many wrk runs of durationS / slices seconds each; two
   * servers side by side alternate slice by slice (measureSides in measure.ts). Six 1-s slices
   * a side rather than four: a ratio's spread across runs was about ±7 points with four.
   */
  slices: 6,
  /** A request slower than this is a wrk timeout, not a latency sample. */
  timeoutS: 5,
} as const;

export const DATA = {
  events: 1_000_000,
  seed: 1,
  changeRecords: 50_000,
  deepPages: 2_000,
  coldStartRuns: 5,
  /** Runs of the 1,000,000-event import, and of the PostgreSQL initial copy; the median of each is reported. */
  syncRuns: 3,
  /** The PostgreSQL upstream's stream: this many event updates a second, for this long. */
  pgChangesPerS: 1_000,
  pgStreamSeconds: 60,
} as const;

/** Accounts the load rotates through so every request is real (docs/api.md, Plans and access limits). */
export const ROTATION = {
  /** A trial serves 1,000 rows at 25 a page: 40 pages; stay well below. */
  usesPerTrialKey: 30,
  /** 10 handoff creations a minute per account; stay below. */
  usesPerHandoffKey: 8,
  /**
   * Keys are sized for this much more than the probed rate, so none exceeds its uses. A probe can
   * fall short by that much on this host: on the Redis ledger a measured run served 1.9 times its
   * probe's handoffs (the accounts' 11th and 12th answered 429), and another 3.0 times its
   * probe's trial pages (a third of the answers were 402 trial_exhausted; test/bench/RESULTS.md,
   * rounds 20 and 23).
   */
  rateMargin: { trial: 2.5, handoff: 2.5 },
  /** Length of each of the two probes that measure a rotated scenario's rate first (the second counts). */
  probeS: 1,
} as const;

/** Rate limits lifted for the bench account: "huge" but a valid integer for the ledger. */
export const UNLIMITED_RATE = 1_000_000_000;

/** Targets from the issue; each is reported as met or missed. */
export const TARGETS = {
  defaultShareOfCeiling: 0.5,
  defaultP99Ms: 10,
  listShareOfCeiling: 0.3,
  deepVsFirst: 1.2,
  geoP50Ms: 10,
  rssMb: 512,
  coldStartMs: 1000,
  syncRecordsPerS: 50_000,
  syncP99Factor: 2,
  /** Unique traffic: share of the ceiling for state, state + city, source and cursor walks, and for geo. */
  uniqueShareOfCeiling: 0.05,
  uniqueGeoShareOfCeiling: 0.025,
  uniqueStateVsPeer: 1.5,
  uniqueP99Ms: 10,
  uniqueGeoP99Ms: 20,
  /** PostgreSQL upstream: initial copy rows/s, commit-to-served p99, page p99 during the stream, and the peer. */
  pgCopyRowsPerS: 50_000,
  pgCommitToServedP99Ms: 1_000,
  pgStreamP99Factor: 2,
  pgPeerFactor: 10,
  /** Marquee on the Redis ledger (one process, and 2 workers): shares of the ceiling and p99. */
  redisDefaultShareOfCeiling: 0.4,
  redisTrialShareOfCeiling: 0.2,
  redisP99Ms: 10,
} as const;

/** Core counts the Redis section projects throughput for, from the measured CPU per request. */
export const PROJECTED_CORES = [2, 4, 8, 16] as const;

/** Sizes of the unique-traffic lists: more paths per class than a server answers while loaded with them. */
export const UNIQUE = {
  perClass: 90_000,
  walks: 6_000,
  zipfRequests: 150_000,
  zipfQueries: 50_000,
  seed: 20_261_125,
  /** New requests per class timed stage by stage (test/bench/list-stages.ts). */
  stageRequests: 2_000,
} as const;

/** Manhattan, for the geo scenarios (Times Square). */
export const MANHATTAN = { lat: 40.758, lng: -73.9855 } as const;
