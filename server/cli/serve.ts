import { API_SYNC } from "../../db/contract.ts";
import { ledgerPathFor } from "../../db/ledger.ts";
import { lockLedgerForServing } from "../../db/serve-lock.ts";
import { isPostgresUrl } from "../../sync/postgres/schema.ts";
import { type AdminListener, listenAdmin, serverAnswers, supervisorAnswers } from "../admin.ts";
import { createApp, createRouteTable } from "../app.ts";
import { startBackgroundWork } from "../background.ts";
import { assertLedgerUrl, type Config, DEFAULTS, resolveConfig } from "../config.ts";
import { type AppContext, createContext } from "../context.ts";
import { listen } from "../listen.ts";
import { createLogger, LOG_FORMATS, LOG_LEVELS, type Logger } from "../log.ts";
import {
  answerScrapes,
  relayedUpstream,
  reportListening,
  shareUpstream,
  stopWithSupervisor,
  superviseWorkers,
  withoutWorkersFlag,
} from "../workers.ts";
import { type Command, intFlag, oneOf, UsageError } from "./args.ts";
import { parseSettings } from "./settings.ts";
import { budgetReserveFlag } from "./sync-api-flags.ts";

export const serveCommand: Command = {
  summary: "serve the API",
  usage: `marquee serve [--port 8080] [--host 0.0.0.0] [--base-url URL] [--demo] [--test-mode]
              [--sync-from SRC | --sync-from-api URL] [--sync-interval S] [--snapshot-interval S] [--db PATH]
              [--ledger redis://[user:password@]host:port[/db]] [--workers N] [--config FILE]

  --demo        when the replica is empty, load the built-in demo data and create demo
                accounts and keys (printed once)
  --test-mode   enable the /_test/* endpoints (clock, records, accounts, faults, reset)
  --sync-from SRC
                an NDJSON file or http(s):// URL: synced at start, then every --sync-interval
                seconds; a postgres://user:password@host/db URL: its changes are streamed while
                serving (see marquee sync --help), /healthz reports the upstream
  --sync-from-api https://HOST/v1/events?FILTERS
                a replica of what another deployment's list endpoint selects (see marquee sync
                --help): a pass at start, then every --sync-interval seconds (default ${API_SYNC.intervalS}),
                with the key in MARQUEE_UPSTREAM_KEY or --upstream-key-file PATH; also
                --budget-reserve F and --aggregators as for sync. /healthz reports the last complete pass
  --ledger URL  keep the ledger in Redis (default $MARQUEE_LEDGER; unset: the SQLite ledger
                beside the replica, owned by one server), so several servers share accounts
  --workers N   run N serving processes on one port (Linux, 1 to ${DEFAULTS.maxWorkers}, default 1); needs --ledger
  --log-format text|json
                the log's format (default $MARQUEE_LOG_FORMAT, else json unless it goes to a terminal)
  --log-level debug|info|warn|error
                the least severe lines written (default $MARQUEE_LOG_LEVEL or info; one line per
                request at info)
  --log-file PATH
                every log line to this file (default $MARQUEE_LOG_FILE; unset: standard output,
                warnings and errors on standard error)
  --admin-port N, --admin-host HOST
                serve /metrics, /livez and /readyz on this port (default $MARQUEE_ADMIN_PORT;
                unset: none) and address (default 127.0.0.1)
  --max-upstream-lag S
                /readyz fails when a followed upstream is not streaming and applied nothing for
                this many seconds (default $MARQUEE_MAX_UPSTREAM_LAG or 120)
  --config FILE settings from a file (default $MARQUEE_CONFIG; docs/operations.md, Configuration)

Every flag may also come from MARQUEE_<FLAG> (MARQUEE_SYNC_FROM, MARQUEE_WORKERS, …) or from the
file's [serve] section; a flag wins over the environment, the environment over the file.`,
  async run(argv) {
    const { values, origins } = parseSettings("serve", argv, {
      port: { type: "string" },
      host: { type: "string" },
      "base-url": { type: "string" },
      demo: { type: "boolean" },
      "test-mode": { type: "boolean" },
      "sync-from": { type: "string" },
      "sync-interval": { type: "string" },
      "sync-from-api": { type: "string" },
      "upstream-key-file": { type: "string" },
      "budget-reserve": { type: "string" },
      aggregators: { type: "boolean" },
      "snapshot-interval": { type: "string" },
      ledger: { type: "string" },
      workers: { type: "string" },
      "log-format": { type: "string" },
      "log-level": { type: "string" },
      "log-file": { type: "string" },
      "admin-port": { type: "string" },
      "admin-host": { type: "string" },
      "max-upstream-lag": { type: "string" },
    });
    if (values["sync-from"] !== undefined && values["sync-from-api"] !== undefined)
      throw new UsageError("--sync-from and --sync-from-api name two sources; a replica follows one kind of source");
    const apiOnly = ["upstream-key-file", "budget-reserve", "aggregators"].filter((f) => values[f as "aggregators"]);
    if (apiOnly.length > 0 && values["sync-from-api"] === undefined)
      throw new UsageError(`${apiOnly.map((f) => `--${f}`).join(" and ")}: only with --sync-from-api URL`);
    const syncIntervalS =
      intFlag("sync-interval", values["sync-interval"], 1) ??
      (values["sync-from-api"] === undefined ? undefined : API_SYNC.intervalS);
    const config = resolveConfig({
      dbPath: values.db,
      port: intFlag("port", values.port),
      host: values.host,
      baseUrl: values["base-url"],
      demo: values.demo,
      testMode: values["test-mode"],
      syncFrom: values["sync-from"],
      syncIntervalS,
      syncFromApi: values["sync-from-api"],
      upstreamKeyFile: values["upstream-key-file"],
      upstreamBudgetReserve: budgetReserveFlag(values["budget-reserve"]),
      upstreamAggregators: values.aggregators,
      snapshotIntervalS: intFlag("snapshot-interval", values["snapshot-interval"], 1),
      ledgerUrl: values.ledger,
      workers: workersFlag(values.workers),
      logFormat: oneOf("log-format", values["log-format"], LOG_FORMATS),
      logLevel: oneOf("log-level", values["log-level"], LOG_LEVELS),
      logFile: values["log-file"],
      adminPort: portFlag("admin-port", values["admin-port"]),
      adminHost: values["admin-host"],
      maxUpstreamLagS: intFlag("max-upstream-lag", values["max-upstream-lag"], 1),
    });
    await assertLedgerUrl(config.ledgerUrl, origins.ledger ?? "env");
    const log = createLogger({
      format: config.logFormat,
      level: config.logLevel,
      file: config.logFile,
      worker: config.workerIndex,
    });
    if (config.workers > 1 && config.workerIndex === undefined) {
      assertWorkersPossible(config);
      const { adminPort, adminHost } = config;
      return superviseWorkers({
        count: config.workers,
        argv: withoutWorkersFlag(argv),
        listeningLine: listeningLine(config),
        // The supervisor's admin listener answers for every worker (docs/operations.md, Logs and metrics).
        admin:
          adminPort === undefined
            ? undefined
            : (scrape) => startAdmin(log, { port: adminPort, host: adminHost }, supervisorAnswers(scrape)),
      });
    }
    return serve(config, log);
  },
};

function portFlag(name: string, value: string | undefined): number | undefined {
  const port = intFlag(name, value);
  if (port !== undefined && port > 65535) throw new UsageError(`--${name} must be a port number (0 to 65535)`);
  return port;
}

/** The admin listener, its address logged once it listens. */
async function startAdmin(
  log: Logger,
  where: { port: number; host: string },
  answers: Parameters<typeof listenAdmin>[1],
): Promise<AdminListener> {
  const admin = await listenAdmin(where, answers, (err) =>
    log.error(`admin listener: ${(err as Error)?.stack ?? err}`),
  );
  const host = where.host.includes(":") ? `[${where.host}]` : where.host;
  log.info(`admin listener on http://${host}:${admin.port} (/metrics, /livez, /readyz)`);
  return admin;
}

/** In a worker of a supervisor: its metrics and readiness, asked for over the IPC channel. */
function answerSupervisor(ctx: AppContext): void {
  answerScrapes(
    async () => {
      const readiness = await ctx.health.readiness();
      const families = ctx.metrics ? await ctx.metrics.families(ctx.health, readiness) : [];
      return { families, readiness: { ready: readiness.ready, checks: readiness.checks, failing: readiness.failing } };
    },
    (err) => ctx.log.error(`metrics for the supervisor: ${(err as Error)?.message ?? err}`),
  );
}

function workersFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > DEFAULTS.maxWorkers)
    throw new UsageError(`--workers must be an integer from 1 to ${DEFAULTS.maxWorkers}`);
  return n;
}

/** docs/operations.md, Configuration: several processes on one port need the kernel's SO_REUSEPORT and one ledger for all. */
function assertWorkersPossible(config: Config): void {
  if (process.platform !== "linux")
    throw new UsageError(
      `--workers needs Linux (SO_REUSEPORT spreads connections over processes there only); run one server per port on ${process.platform}`,
    );
  if (config.ledgerUrl === undefined)
    throw new UsageError(
      "--workers needs a shared ledger (--ledger redis://…): the SQLite ledger is owned by one process",
    );
}

function listeningLine(config: Config): string {
  const notes = [`replica ${config.dbPath}`];
  if (config.testMode) notes.push("test mode");
  if (config.workers > 1) notes.push(`${config.workers} workers`);
  return `Marquee listening on ${config.baseUrl} (${notes.join(", ")})`;
}

/** One serving process: a lone server, or worker `config.workerIndex` of a supervisor. */
async function serve(config: Config, log: Logger): Promise<undefined> {
  const worker = config.workerIndex;
  // Before anything is read or written: a second server on this SQLite ledger is refused here.
  // A shared ledger has no owner; its servers coordinate through it.
  const lock = config.ledgerUrl === undefined ? await lockLedgerForServing(ledgerPathFor(config.dbPath)) : null;
  const ctx = await createContext(config, undefined, { log });
  let server: Awaited<ReturnType<typeof listen>> | undefined;
  let admin: AdminListener | undefined;
  try {
    // The replica's writing work runs in one process: a lone server, or worker 0.
    await startBackgroundWork(ctx, { writer: worker === undefined || worker === 0 });
    // The others learn worker 0's upstream through the supervisor (docs/operations.md, Health).
    if (worker !== undefined && worker > 0 && config.syncFrom !== undefined && isPostgresUrl(config.syncFrom))
      ctx.upstream = relayedUpstream();
    const routes = createRouteTable(ctx);
    const app = createApp(ctx, routes);
    server = await listen(app, routes, {
      port: config.port,
      hostname: config.host,
      reusePort: worker !== undefined,
      answersLate: config.ledgerUrl !== undefined,
    });
    // A lone server's own admin listener; a worker answers its supervisor's instead.
    if (config.adminPort !== undefined && worker === undefined && ctx.metrics)
      admin = await startAdmin(
        log,
        { port: config.adminPort, host: config.adminHost },
        serverAnswers(ctx.health, ctx.metrics),
      );
  } catch (err) {
    // A port in use, say: close what is open (a shared ledger's connections would keep the
    // process alive) so the command exits with its error.
    await server?.close();
    ctx.close();
    lock?.close();
    // A worker also lets go of its supervisor's channel: once node:http has tried to listen
    // there (server/node-http.ts), the channel would keep the process running.
    if (worker !== undefined) process.channel?.unref();
    throw err;
  }
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await admin?.close();
    await server?.close();
    ctx.close();
    lock?.close();
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  if (worker === undefined) console.log(listeningLine(config));
  else {
    if (worker === 0 && ctx.upstream) shareUpstream(ctx.upstream);
    answerSupervisor(ctx);
    reportListening();
    stopWithSupervisor(stop);
  }
  return new Promise<undefined>(() => {}); // serve until stopped
}
