/**
 * Everything a request may touch, built once at start-up and passed down explicitly.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { ACCESS } from "../db/contract.ts";
import type { Db } from "../db/driver.ts";
import { ledgerPathFor } from "../db/ledger.ts";
import { openReplica } from "../db/replica.ts";
import { HOT_PATH } from "../db/tuning.ts";
import { Access, type AccessControl } from "./access.ts";
import { type Clock, createClock } from "./clock.ts";
import type { Config } from "./config.ts";
import { createFaults, type Faults } from "./faults.ts";
import { Health, type UpstreamReport } from "./health.ts";
import type { Ledger } from "./ledger/ledger.ts";
import { openSqliteLedger, SqliteLedger } from "./ledger/sqlite.ts";
import type { Meter } from "./limits/meter.ts";
import { ReplicaWrites } from "./list/caches.ts";
import { ListService } from "./list/service.ts";
import { type Logger, quietLogger } from "./log.ts";
import type { Metrics } from "./metrics-text.ts";
import { RequestJournal } from "./request-journal.ts";
import { Requests } from "./requests.ts";
import { readBuildInfo } from "./version.ts";

export interface AppContext {
  config: Config;
  clock: Clock;
  replica: Db;
  /** Accounts, keys, the portal, handoffs and test mode's state (server/ledger/ledger.ts). */
  ledger: Ledger;
  /** HMAC secret for cursors and handoffs. */
  secret: string;
  faults: Faults;
  /**
   * Rate buckets, delivered rows, trials and reservations of the request path on the SQLite
   * ledger; on a shared ledger they live in Redis (server/ledger/redis-counters.ts).
   */
  meter: Meter | null;
  /** Keys, accounts and admission, with their cache (server/access.ts, server/ledger/redis-access.ts). */
  access: AccessControl;
  /** `GET /v1/events` and every cache it uses (server/list/service.ts). */
  list: ListService;
  /** The one way this process writes the replica: each write drops the caches it made stale (server/list/caches.ts). */
  replicaWrites: ReplicaWrites;
  /** The upstream a serving process streams from (`--sync-from postgres://…`), for /healthz and /readyz. */
  upstream?: { status(): UpstreamReport };
  /** The server's log (server/log.ts). */
  log: Logger;
  /** Where every answered request is recorded: the log, the metrics, test mode's journal (server/requests.ts). */
  requests: Requests;
  /** The replica's counts and the readiness checks (server/health.ts). */
  health: Health;
  /** With an admin port (`--admin-port`): the metrics `/metrics` shows (server/metrics-text.ts). */
  metrics: Metrics | null;
  /** Closes the ledger (its last counters written first) and the replica; resolves once both are closed. */
  close(): Promise<void>;
}

/**
 * `log`: the server's log as `marquee serve` configures it; without it (tests, benchmarks) no
 * request lines are written and warnings and errors go to standard error.
 */
export async function createContext(
  config: Config,
  clock: Clock = createClock(),
  options: { log?: Logger } = {},
): Promise<AppContext> {
  const log = options.log ?? quietLogger();
  if (config.dbPath !== ":memory:") mkdirSync(dirname(config.dbPath), { recursive: true });
  // Migration lines in the server's own log format (docs/operations.md, Upgrades and schema versions).
  const migrated = (line: string) => log.info(line);
  const replica = await openReplica(config.dbPath, { log: migrated, mmapBytes: HOT_PATH.replicaMmapBytes });
  const faults = createFaults();
  let opened: Awaited<ReturnType<typeof openLedgerAndAccess>> | undefined;
  let secret: string;
  try {
    opened = await openLedgerAndAccess(config, clock, faults, migrated);
    // docs/operations.md, The program: generated and stored when absent, so cursors survive restarts
    // (and, on a shared ledger, every server signs and reads the same cursors).
    secret =
      config.secret ?? (await opened.ledger.ensureSetting("secret", () => randomBytes(32).toString("base64url")));
  } catch (err) {
    // What opened is closed, so the command exits with its error: a shared ledger's connections
    // would keep the process alive (a full Redis, say, refuses the first write here).
    opened?.access.close?.();
    await opened?.ledger.close().catch(() => {});
    replica.close();
    throw err;
  }
  const { ledger, access, meter } = opened;
  const list = new ListService({ replica, access, clock, secret, baseUrl: config.baseUrl });
  let metrics: Metrics | null = null;
  if (config.adminPort !== undefined) {
    const { Metrics } = await import("./metrics-text.ts");
    metrics = await Metrics.create(readBuildInfo());
  }
  const journal = config.testMode ? new RequestJournal(clock.now) : null;
  const ctx: AppContext = {
    config,
    clock,
    replica,
    ledger,
    secret,
    faults,
    meter,
    access,
    list,
    replicaWrites: new ReplicaWrites(replica, list.caches),
    log,
    requests: new Requests(log, metrics?.requests ?? null, journal),
    health: new Health({
      replica,
      ledger,
      clock,
      maxUpstreamLagS: config.maxUpstreamLagS,
      upstream: () => ctx.upstream,
    }),
    metrics,
    async close() {
      access.close?.();
      // The SQLite ledger closes at once (it writes the meter's last counters first); a shared
      // one flushes what is queued before its connections go.
      const ledgerClosed = ledger
        .close()
        .catch((err) => log.error(`ledger did not close: ${(err as Error)?.message ?? err}`));
      replica.close();
      await ledgerClosed;
      log.flush();
    },
  };
  return ctx;
}

/**
 * The ledger the server runs on and the access stages over it: a shared Redis ledger when
 * `--ledger` names one (docs/several-servers.md, "Run several servers"), else the SQLite file beside the
 * replica with the process's meter.
 */
async function openLedgerAndAccess(
  config: Config,
  clock: Clock,
  faults: Faults,
  migrated?: (line: string) => void,
): Promise<{ ledger: Ledger; access: AccessControl & { close?(): void }; meter: Meter | null }> {
  if (config.ledgerUrl !== undefined) {
    const [{ openRedisLedger }, { RedisAccess }, { RedisCounters }, { connectRedis }] = await Promise.all([
      import("./ledger/redis.ts"),
      import("./ledger/redis-access.ts"),
      import("./ledger/redis-counters.ts"),
      import("./ledger/redis-connection.ts"),
    ]);
    const ledger = await openRedisLedger(config.ledgerUrl);
    const countersConnection = await connectRedis(config.ledgerUrl).catch(async (err) => {
      await ledger.close();
      throw err;
    });
    const counters = new RedisCounters(countersConnection);
    const access = new RedisAccess({ ledger, counters, clock });
    const closeLedger = ledger.close.bind(ledger);
    ledger.close = async () => {
      // Takes still queued are answered, and deliveries recorded behind their pages written,
      // before the connection goes.
      await counters.flushTakes();
      await counters.flushDeliveries().catch(() => {});
      await closeLedger();
      countersConnection.disconnect();
    };
    return { ledger, access, meter: null };
  }
  const ledger = await openLedgerFor(config, clock, faults, migrated);
  return { ledger, access: new Access({ ledger: ledger.db, meter: ledger.meter, clock }), meter: ledger.meter };
}

/** The SQLite ledger beside the replica (docs/architecture.md, "The ledger and the meter"). */
export async function openLedgerFor(
  config: Config,
  clock: Clock,
  faults: Faults,
  migrated?: (line: string) => void,
): Promise<SqliteLedger> {
  const ledger = await openSqliteLedger(ledgerPathFor(config.dbPath), clock, faults, { log: migrated });
  // Request-path ledger writes answer 503 rather than wait long behind a held lock (docs/api.md).
  ledger.db.exec(`PRAGMA busy_timeout = ${ACCESS.ledgerBusyTimeoutMs}`);
  // One connection for every request-path read and the meter's writes: SQLite drops a
  // connection's page cache whenever another connection commits, and the meter commits every
  // few milliseconds. A larger cache then keeps the recently created accounts' pages.
  ledger.db.exec(`PRAGMA cache_size = -${HOT_PATH.ledgerCacheKiB}`);
  return ledger;
}

/**
 * The SQLite connection under the context's ledger, for what works on it directly: the request
 * path's access stages and meter, and tests and benchmarks that set up or break the file.
 */
export function sqliteLedgerDb(ctx: AppContext): Db {
  if (!(ctx.ledger instanceof SqliteLedger)) throw new Error(`the ledger is ${ctx.ledger.kind}, not SQLite`);
  return ctx.ledger.db;
}

/** After the ledger was emptied (test mode's reset): the meter's counters and the access cache describe deleted rows. */
export function notifyLedgerReset(ctx: AppContext): void {
  ctx.meter?.clear();
  ctx.access.clear();
}
