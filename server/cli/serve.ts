/**
 * `marquee serve`: its flags, then one serving process (server/serving.ts) or, with `--workers N`,
 * a supervisor of N (server/workers.ts). Either is loaded only once the flags are read, so
 * `marquee serve --help` and a usage error load neither.
 */
import { API_SYNC } from "../../db/contract.ts";
import { assertLedgerUrl, type Config, DEFAULTS, resolveConfig, spareTerminalCheck } from "../config.ts";
import { LOG_FORMATS, LOG_LEVELS } from "../log.ts";
import { type Command, intFlag, oneOf, UsageError } from "./args.ts";
import { parseSettings } from "./settings.ts";
import { budgetReserveFlag } from "./sync-api-flags.ts";

export const serveCommand: Command = {
  usage: `marquee serve [--port 8080] [--host 0.0.0.0] [--base-url URL] [--demo] [--test-mode]
              [--sync-from SRC | --sync-from-api URL] [--sync-interval S] [--snapshot-interval S] [--db PATH]
              [--ledger redis://[user:password@]host:port[/db]] [--workers N] [--config FILE]
              [--ready-file PATH] [--exit-with-stdin]

  --port N      the port to listen on (default $PORT or 8080); 0: a free port, which the
                start-up line and the ready file name
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
  --ready-file PATH
                once the server answers, write {"url": …, "pid": …} to PATH (written whole,
                then renamed into place; removed again when the server stops)
  --exit-with-stdin
                stop when standard input closes: the process that started the server takes it
                along when it ends, however it ends
  --config FILE settings from a file (default $MARQUEE_CONFIG; docs/operations.md, Configuration)

SIGTERM or SIGINT: stop accepting connections, let requests in flight finish (at most
${DEFAULTS.shutdownGraceMs / 1000} s), close the ledger and the replica, print one line, exit 0. SIGHUP never stops it.

Every flag may also come from MARQUEE_<FLAG> (MARQUEE_SYNC_FROM, MARQUEE_WORKERS, …) or from the
file's [serve] section; a flag wins over the environment, the environment over the file.`,
  async run(argv) {
    const { config, origins } = readServeSettings(argv);
    if (config.exitWithStdin && config.syncFrom === "-")
      throw new UsageError("--exit-with-stdin and --sync-from - both need standard input; use one of them");
    await assertLedgerUrl(config.ledgerUrl, origins.ledger ?? "env");
    spareTerminalCheck();
    if (config.workers > 1 && config.workerIndex === undefined) {
      assertWorkersPossible(config);
      const [{ superviseWorkers, workerArgv }, { startAdmin, supervisorAnswers }, { createLogger }] = await Promise.all(
        [import("../workers.ts"), import("../admin.ts"), import("../log.ts")],
      );
      const { adminPort, adminHost } = config;
      const log = createLogger({ format: config.logFormat, level: config.logLevel, file: config.logFile });
      return superviseWorkers({
        argv: workerArgv(argv),
        config,
        // The supervisor's admin listener answers for every worker (docs/operations.md, Logs and metrics).
        admin:
          adminPort === undefined
            ? undefined
            : (scrape) => startAdmin(log, { port: adminPort, host: adminHost }, supervisorAnswers(scrape)),
      });
    }
    const { serve } = await import("../serving.ts");
    // SIGHUP reads the flags, the environment and the file again (docs/operations.md, Signals and exit codes).
    return serve(config, { reread: () => readServeSettings(argv).config });
  },
};

/** `serve`'s settings from its flags, the environment and the configuration file, checked. */
function readServeSettings(argv: string[]) {
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
    "ready-file": { type: "string" },
    "exit-with-stdin": { type: "boolean" },
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
    readyFile: values["ready-file"],
    exitWithStdin: values["exit-with-stdin"],
  });
  return { config, origins };
}

function portFlag(name: string, value: string | undefined): number | undefined {
  const port = intFlag(name, value);
  if (port !== undefined && port > 65535) throw new UsageError(`--${name} must be a port number (0 to 65535)`);
  return port;
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
