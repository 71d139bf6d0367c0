/**
 * Work a serving process does besides answering requests (docs/operations.md, The program; docs/api.md, Serving snapshot): the demo data set
 * and demo keys on first start (`--demo`), sync from `--sync-from` at start and every
 * `--sync-interval` seconds (a PostgreSQL source streams instead), and the periodic snapshot refresh.
 * What only one of them needs (the demo generator, the sync pipeline, the PostgreSQL client) is
 * loaded when that one starts (docs/operations.md, Start-up).
 */
import type { AccountFields } from "../db/accounts.ts";
import type { KeyKind } from "../db/contract.ts";
import { DEMO } from "../db/contract.ts";
import { assertSourceKind, readReplicaStats, readSourceKind } from "../db/replica.ts";
import { HOT_PATH } from "../db/tuning.ts";
import { isPostgresUrl } from "../sync/postgres/schema.ts";
import { refreshSnapshotIfStale } from "../sync/serving-snapshot.ts";
import type { SourcePosition } from "../sync/source.ts";
import type { AppContext } from "./context.ts";
import { issueKey } from "./keys.ts";
import { procStatusKiB } from "./proc-status.ts";

/** The demo accounts `serve --demo` creates: one per kind of access a user may want to try. */
const DEMO_ACCOUNTS: Array<{ label: string; kind: KeyKind; fields: Partial<AccountFields>; note: string }> = [
  {
    label: "business",
    kind: "live",
    fields: { plan: "business" },
    note: "90-day lookahead, polygons, 500,000 rows/24 h",
  },
  { label: "basic", kind: "live", fields: { plan: "basic" }, note: "30-day lookahead, no polygons, 100,000 rows/24 h" },
  { label: "enterprise", kind: "live", fields: { plan: "enterprise" }, note: "no lookahead cap, no row budget" },
  {
    label: "trial",
    kind: "live",
    fields: { plan: "none", verified: true, hadSubscription: false },
    note: "no plan: a 7-day, 1,000-row trial starts on first use",
  },
  { label: "builder", kind: "builder", fields: { plan: "business" }, note: "Builder key for POST /v1/ticket-handoffs" },
  { label: "legacy", kind: "legacy", fields: { plan: "legacy" }, note: "legacy key: /v1/events only" },
];
const DEMO_EMAIL = (label: string) => `demo-${label}@example.com`;

const today = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** `--demo`: fills an empty replica with demo data anchored today, and prints demo keys once. */
async function loadDemo(ctx: AppContext): Promise<void> {
  const stats = readReplicaStats(ctx.replica);
  if (stats.events > 0 || stats.watermark > 0) {
    // docs/operations.md, The program: demo data and keys only for an empty replica; point a keyless user to the CLI.
    if ((await ctx.ledger.countAccounts()) === 0) {
      console.log(
        "The replica already has data, so no demo data or demo keys were made. Create a key with:\n" +
          "  marquee accounts create --email you@example.com --plan business   # prints the account id\n" +
          "  marquee keys create --account ID",
      );
    }
    return;
  }
  const anchor = today(ctx.clock.now());
  const [{ demoChunks }, { syncFrom }, { streamSource }, { formatSummary }] = await Promise.all([
    import("../sync/demo/generate.ts"),
    import("../sync/sync-from.ts"),
    import("../sync/source.ts"),
    import("../sync/progress.ts"),
  ]);
  console.log(`Loading demo data: ${DEMO.events.toLocaleString("en-US")} events anchored on ${anchor} …`);
  const source = streamSource("demo data", demoChunks({ events: DEMO.events, seed: DEMO.seed, anchor }));
  const summary = await ctx.replicaWrites.apply((db) => syncFrom(db, source, { now: ctx.clock.now }));
  console.log(formatSummary(summary));

  if (await hasDemoAccounts(ctx)) {
    console.log("Demo accounts already exist in the ledger; their keys were shown when they were created.");
    return;
  }
  const now = ctx.clock.now();
  const issued = [];
  for (const a of DEMO_ACCOUNTS) {
    const account = await ctx.ledger.createAccount({ email: DEMO_EMAIL(a.label), ...a.fields }, now);
    issued.push({ ...a, accountId: account.id, key: (await issueKey(ctx.ledger, account.id, a.kind, now)).key });
  }
  const base = ctx.config.baseUrl;
  console.log(
    [
      "",
      "Demo API keys (shown once; only their SHA-256 digests are stored):",
      ...issued.map((a) => `  ${a.label.padEnd(10)} account ${String(a.accountId).padEnd(4)} ${a.key}  ${a.note}`),
      "",
      "Try:",
      `  curl -H "Authorization: Bearer ${issued[0].key}" "${base}/v1/events?state=NY&city=New%20York&limit=3"`,
      `  curl -H "Authorization: Bearer ${issued[0].key}" "${base}/v1/events?lat=40.758&lng=-73.9855&radius_miles=2&limit=3"`,
      "",
    ].join("\n"),
  );
}

/**
 * Whether an earlier `--demo` made the demo accounts. They are among the ledger's first accounts,
 * whose ids count up from 1, so the search stops at the first demo email.
 */
async function hasDemoAccounts(ctx: AppContext): Promise<boolean> {
  const count = await ctx.ledger.countAccounts();
  for (let id = 1; id <= count; id++) {
    const account = await ctx.ledger.readAccount(id);
    if (account && /^demo-.*@example\.com$/i.test(account.email)) return true;
  }
  return false;
}

/** Stops a piece of background work: no new run starts, and one under way is awaited. */
type Stop = () => Promise<void>;

/** `--sync-from SRC`: syncs now, then every `--sync-interval` seconds from where it stopped. */
async function startPeriodicSync(ctx: AppContext, spec: string): Promise<Stop> {
  assertSourceKind(ctx.replica, "ndjson");
  const [{ SyncError, syncFrom }, { displaySource, openSource }, { formatSummary }] = await Promise.all([
    import("../sync/sync-from.ts"),
    import("../sync/source.ts"),
    import("../sync/progress.ts"),
  ]);
  let position: SourcePosition | undefined;
  let running: Promise<void> | undefined;
  const tick = () => {
    // A long run is still going; the next tick picks up after it.
    running ??= run().finally(() => (running = undefined));
    return running;
  };
  const run = async () => {
    try {
      const source = openSource(spec, { start: position });
      const summary = await ctx.replicaWrites.apply((db) => syncFrom(db, source, { now: ctx.clock.now }));
      position = summary.position;
      if (summary.applied > 0) ctx.log.info(formatSummary(summary));
    } catch (err) {
      // E.g. the file was replaced by a shorter one: read it again from the start next time.
      if (!(err instanceof SyncError)) position = undefined;
      ctx.log.error(`sync from ${displaySource(spec)} failed: ${(err as Error).message}`);
    }
  };
  await tick();
  if (spec === "-") return async () => {}; // stdin was read to its end
  const timer = setInterval(tick, ctx.config.syncIntervalS * 1000);
  timer.unref?.();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

/**
 * `--sync-from postgres://…`: streams the upstream's changes while serving; the server answers
 * from the replica meanwhile, and through any outage of the upstream.
 */
async function startStreaming(ctx: AppContext, spec: string): Promise<Stop> {
  // Refused before listening: retrying cannot make an NDJSON replica follow PostgreSQL.
  assertSourceKind(ctx.replica, "postgres");
  const { startPostgresFollower } = await import("../sync/postgres/follower.ts");
  const follower = startPostgresFollower(ctx.replica, spec, {
    now: ctx.clock.now,
    onChange: ctx.replicaWrites.changed,
    log: (line) => ctx.log.warn(line),
  });
  ctx.upstream = follower;
  // Nor is a replica that can no longer follow its slot served (docs/operations.md, Backups): the
  // start waits for that verdict, but not without end (the upstream may be slow to answer, or its
  // tables locked), so /readyz can say why it is not ready. A refusal that comes later is logged,
  // and the follower's `refused` state fails readiness from then on.
  const verdict = follower.checked.then(
    () => null,
    (err: Error) => err,
  );
  const early = await Promise.race([verdict, settleAfter(UPSTREAM_CHECK_WAIT_MS)]);
  if (early instanceof Error) {
    await follower.stop();
    throw early;
  }
  if (early === "late")
    void verdict.then((err) => {
      if (err) ctx.log.error(`sync from postgres refused: ${err.message}`);
    });
  return () => follower.stop();
}

/** How long a start waits for a followed PostgreSQL upstream's verdict on the replica. */
const UPSTREAM_CHECK_WAIT_MS = 5_000;

const settleAfter = (ms: number) =>
  new Promise<"late">((resolve) => {
    const timer = setTimeout(() => resolve("late"), ms);
    timer.unref?.();
  });

/**
 * `--sync-from-api URL`: passes over another deployment's list endpoint while serving
 * (docs/upstream-records.md, A replica of another deployment). A replica of one that no process
 * follows still shows its last complete pass in /healthz.
 */
async function startApiFollowing(ctx: AppContext, url: string): Promise<Stop> {
  // Loaded only by a server that follows an API (docs/operations.md, Start-up).
  const [{ parseApiScope }, { readUpstreamKey }, { startApiFollower }, { AGGREGATORS_NOTE }] = await Promise.all([
    import("./api-scope.ts"),
    import("./config.ts"),
    import("../sync/api/follower.ts"),
    import("../sync/api/report.ts"),
  ]);
  const scope = parseApiScope(url);
  const key = readUpstreamKey(ctx.config.upstreamKeyFile);
  // Refused before listening: retrying cannot make another kind of replica follow an API.
  assertSourceKind(ctx.replica, "api");
  if (ctx.config.upstreamAggregators && !scope.excludesAggregators) ctx.log.warn(AGGREGATORS_NOTE);
  const follower = startApiFollower(ctx.replica, scope, {
    key,
    reserve: ctx.config.upstreamBudgetReserve,
    aggregators: ctx.config.upstreamAggregators,
    intervalS: ctx.config.syncIntervalS,
    now: ctx.clock.now,
    onChange: ctx.replicaWrites.changed,
    log: (line) => ctx.log.warn(line),
  });
  ctx.upstream = follower;
  return () => follower.stop();
}

/**
 * The process's private resident memory (Linux `RssAnon`), else its RSS: the memory-mapped
 * replica's pages count in RSS but are the OS's file cache, which no collection frees.
 */
function privateBytes(): number {
  const kib = procStatusKiB("self")?.get("RssAnon");
  return kib === undefined ? process.memoryUsage.rss() : kib * 1024;
}

/**
 * On Bun, a full collection when `CollectionPolicy` says one is due, private memory read every
 * `collectReadEveryMs`. Under a stream of new queries each request leaves short-lived rows,
 * strings and body bytes behind, and kept events are replaced faster than the engine collects its
 * old generation on its own (it lets the heap reach about three times what is live), so memory
 * grows to several times what is live. The collection is synchronous (`fullGC` of bun:jsc, which keeps the compiled
 * code) and pauses the requests in flight, some 85 ms: `Bun.gc(false)`, which returns at once,
 * left the old generation's garbage where it was (docs/perf-history.md, "Round 27"; the line for
 * frequent collections: "Round 29").
 */
function startMemoryGuard(): Stop {
  if (!(globalThis as { Bun?: unknown }).Bun) return async () => {};
  // Loaded on Bun only (Node, which runs Vitest, has none), and only when first needed.
  let jsc: Promise<typeof import("bun:jsc")> | undefined;
  const policy = new CollectionPolicy(HOT_PATH);
  const timer = setInterval(async () => {
    if (!policy.due(privateBytes(), performance.now())) return;
    jsc ??= import("bun:jsc");
    (await jsc).fullGC();
  }, HOT_PATH.collectReadEveryMs);
  timer.unref?.();
  return async () => clearInterval(timer);
}

/** The memory guard's lines and spacings (db/tuning.ts). */
type CollectionLimits = Record<
  | "collectAbovePrivateBytes"
  | "collectEveryMs"
  | "collectOftenAbovePrivateBytes"
  | "collectOftenEveryMs"
  | "collectGrowthBytes",
  number
>;

/**
 * When the memory guard collects: private memory past `collectAbovePrivateBytes`, at most once every
 * `collectEveryMs` (every `collectOftenEveryMs` past `collectOftenAbovePrivateBytes`), and only after
 * it grew `collectGrowthBytes` above the lowest reading since the last collection. What a collection
 * cannot free (a large replica's live caches above the line) is then not collected again and again
 * on an idle server; new garbage still is.
 */
export class CollectionPolicy {
  #lastMs = -Infinity;
  #floor = Infinity;

  constructor(private readonly limits: CollectionLimits) {}

  /** Told each reading of private memory; true when a collection is due now (it is then counted as done). */
  due(bytes: number, nowMs: number): boolean {
    this.#floor = Math.min(this.#floor, bytes);
    const { collectAbovePrivateBytes, collectGrowthBytes } = this.limits;
    const { collectOftenAbovePrivateBytes, collectOftenEveryMs, collectEveryMs } = this.limits;
    const spacingMs = bytes > collectOftenAbovePrivateBytes ? collectOftenEveryMs : collectEveryMs;
    if (bytes <= collectAbovePrivateBytes || nowMs - this.#lastMs < spacingMs) return false;
    if (bytes - this.#floor < collectGrowthBytes) return false;
    this.#lastMs = nowMs;
    this.#floor = Infinity;
    return true;
  }
}

/**
 * `writer: false` (every worker of `serve --workers` but worker 0, server/workers.ts): only the
 * memory guard. Such a process sees the writer's commits as it would a separate `marquee sync`'s
 * (server/list/caches.ts). Resolves, once the first sync has run, with the function that stops
 * it all (the upstream stream included) before the replica closes.
 */
export async function startBackgroundWork(
  ctx: AppContext,
  options: { writer: boolean } = { writer: true },
): Promise<Stop> {
  const stops = [startMemoryGuard()];
  const stopAll = async () => void (await Promise.all(stops.map((stop) => stop())));
  // A replica of another deployment that this process does not follow still shows its last pass.
  if (readSourceKind(ctx.replica) === "api") {
    const { readApiStatus } = await import("../sync/api/state.ts");
    ctx.upstream = { status: () => readApiStatus(ctx.replica, ctx.clock.now(), null) };
  }
  if (!options.writer) return stopAll;
  if (ctx.config.demo) await loadDemo(ctx);
  if (ctx.config.syncFrom && isPostgresUrl(ctx.config.syncFrom))
    stops.push(await startStreaming(ctx, ctx.config.syncFrom));
  else if (ctx.config.syncFrom) stops.push(await startPeriodicSync(ctx, ctx.config.syncFrom));
  else if (ctx.config.syncFromApi) stops.push(await startApiFollowing(ctx, ctx.config.syncFromApi));
  const refresh = () =>
    ctx.replicaWrites
      .apply((db) => refreshSnapshotIfStale(db, ctx.clock.now()))
      .catch((err) => ctx.log.error(`snapshot refresh failed: ${(err as Error).message}`));
  const timer = setInterval(refresh, ctx.config.snapshotIntervalS * 1000);
  timer.unref?.();
  stops.push(async () => clearInterval(timer));
  return stopAll;
}
