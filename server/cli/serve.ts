/**
 * `marquee serve`: its flags, then one serving process (server/serving.ts) or, with `--workers N`,
 * a supervisor of N (server/workers.ts). Either is loaded only once the flags are read, so
 * `marquee serve --help` and a usage error load neither.
 */
import { assertLedgerUrl, type Config, DEFAULTS, resolveConfig, spareTerminalCheck } from "../config.ts";
import { type Command, intFlag, parseFlags, UsageError } from "./args.ts";

export const serveCommand: Command = {
  usage: `marquee serve [--port 8080] [--host 0.0.0.0] [--base-url URL] [--demo] [--test-mode]
              [--sync-from SRC] [--sync-interval S] [--snapshot-interval S] [--db PATH]
              [--ledger redis://[user:password@]host:port[/db]] [--workers N]
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
  --ledger URL  keep the ledger in Redis (default $MARQUEE_LEDGER; unset: the SQLite ledger
                beside the replica, owned by one server), so several servers share accounts
  --workers N   run N serving processes on one port (Linux, 1 to ${DEFAULTS.maxWorkers}, default 1); needs --ledger
  --ready-file PATH
                once the server answers, write {"url": …, "pid": …} to PATH (written whole,
                then renamed into place; removed again when the server stops)
  --exit-with-stdin
                stop when standard input closes: the process that started the server takes it
                along when it ends, however it ends

SIGTERM or SIGINT: stop accepting connections, let requests in flight finish (at most
${DEFAULTS.shutdownGraceMs / 1000} s), close the ledger and the replica, print one line, exit 0. SIGHUP never stops it.`,
  async run(argv) {
    const { values } = parseFlags(argv, {
      port: { type: "string" },
      host: { type: "string" },
      "base-url": { type: "string" },
      demo: { type: "boolean" },
      "test-mode": { type: "boolean" },
      "sync-from": { type: "string" },
      "sync-interval": { type: "string" },
      "snapshot-interval": { type: "string" },
      ledger: { type: "string" },
      workers: { type: "string" },
      "ready-file": { type: "string" },
      "exit-with-stdin": { type: "boolean" },
    });
    const config = resolveConfig({
      dbPath: values.db,
      port: intFlag("port", values.port),
      host: values.host,
      baseUrl: values["base-url"],
      demo: values.demo,
      testMode: values["test-mode"],
      syncFrom: values["sync-from"],
      syncIntervalS: intFlag("sync-interval", values["sync-interval"], 1),
      snapshotIntervalS: intFlag("snapshot-interval", values["snapshot-interval"], 1),
      ledgerUrl: values.ledger,
      workers: workersFlag(values.workers),
      readyFile: values["ready-file"],
      exitWithStdin: values["exit-with-stdin"],
    });
    if (config.exitWithStdin && config.syncFrom === "-")
      throw new UsageError("--exit-with-stdin and --sync-from - both need standard input; use one of them");
    await assertLedgerUrl(config.ledgerUrl, values.ledger === undefined ? "env" : "flag");
    spareTerminalCheck();
    if (config.workers > 1 && config.workerIndex === undefined) {
      assertWorkersPossible(config);
      const { superviseWorkers, workerArgv } = await import("../workers.ts");
      return superviseWorkers({ argv: workerArgv(argv), config });
    }
    const { serve } = await import("../serving.ts");
    return serve(config);
  },
};

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
