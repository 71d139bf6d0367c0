/**
 * One serving process from start to stop (docs/operations.md, The program): a lone `marquee
 * serve`, or one worker of a `--workers` supervisor (server/workers.ts).
 *
 * Start: the SQLite ledger's lock, then the port (bound before anything is made from it, so
 * `--port 0` is the kernel's pick by the time the base URL and the links are), the replica and
 * the ledger, the background work (demo data, the first sync), the routes; then the start-up line
 * and the ready file (a worker tells its supervisor instead, which writes them once all listen).
 *
 * Stop (SIGTERM, SIGINT, standard input closing with `--exit-with-stdin` once the server answers,
 * or a worker's supervisor going away): no new connections; requests in flight get
 * DEFAULTS.shutdownGraceMs to finish; then the background work and the upstream stream stop, the
 * ledger and the replica close, one line is printed and the process exits 0. A signal during start-up stops it the same way, with
 * whatever was open by then. Repeated signals change nothing: the stop is bounded already.
 *
 * SIGHUP never stops the server: it calls `reload`.
 */
import { ledgerPathFor } from "../db/ledger.ts";
import { lockLedgerForServing } from "../db/serve-lock.ts";
import { isPostgresUrl } from "../sync/postgres/schema.ts";
import { type AdminListener, serverAnswers, startAdmin } from "./admin.ts";
import { removeReadyFile, startupFields, startupLine, writeReadyFile } from "./announce.ts";
import { createApp, createRouteTable } from "./app.ts";
import { startBackgroundWork } from "./background.ts";
import { type Config, DEFAULTS, withBoundPort } from "./config.ts";
import { type AppContext, createContext } from "./context.ts";
import { type BoundListener, bind } from "./listen.ts";
import { announce, createLogger, type Logger } from "./log.ts";
import { reportListening, stopWhenStdinCloses, stopWithSupervisor } from "./ties.ts";
import { answerScrapes, relayedUpstream, shareUpstream } from "./workers.ts";

/**
 * What SIGHUP does: reads the settings again (the flags as given, the environment and the
 * `--config` file as they are now) and applies what may change without a restart: the log's level.
 * Settings that cannot be read leave everything as it was, and say why. It never stops the server.
 */
export function reload(log: Logger, reread: (() => Config) | undefined): void {
  if (!reread) return;
  try {
    const { logLevel } = reread();
    log.setLevel(logLevel);
    log.info(`reloaded on SIGHUP: log level ${logLevel}`);
  } catch (err) {
    log.error(`SIGHUP: the settings could not be read again, nothing changed: ${(err as Error).message}`);
  }
}

/** Why the server stopped, as its last line says it. */
type StopReason = "SIGTERM" | "SIGINT" | "standard input closed" | "supervisor gone" | "no ready file";

/** Runs one serving process; never resolves (the process exits when it stops). */
export async function serve(asked: Config, options: { reread?: () => Config } = {}): Promise<undefined> {
  let config = asked;
  const worker = config.workerIndex;
  const log = createLogger({ format: config.logFormat, level: config.logLevel, file: config.logFile, worker });
  let admin: AdminListener | undefined;
  let lock: Awaited<ReturnType<typeof lockLedgerForServing>> = null;
  let listener: BoundListener | undefined;
  let ctx: AppContext | undefined;
  let stopBackground: (() => Promise<void>) | undefined;
  let announced = false;
  let stopping: Promise<never> | undefined;

  const stop = (reason: StopReason, code = 0) =>
    (stopping ??= (async () => {
      await admin?.close();
      const cut = listener ? await listener.close(DEFAULTS.shutdownGraceMs) : 0;
      await stopBackground?.().catch(() => {});
      await ctx?.close();
      lock?.close();
      if (announced && config.readyFile !== undefined && worker === undefined) removeReadyFile(config.readyFile);
      log.flush();
      announce(config.logFormat, stoppedLine(reason, cut, ctx));
      process.exit(code);
    })());

  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGHUP", () => reload(log, options.reread));
  if (worker !== undefined) stopWithSupervisor(() => void stop("supervisor gone"));

  try {
    // Before anything is read or written: a second server on this SQLite ledger is refused here.
    // A shared ledger has no owner; its servers coordinate through it.
    lock = config.ledgerUrl === undefined ? await lockLedgerForServing(ledgerPathFor(config.dbPath)) : null;
    listener = await bind({
      port: config.port,
      hostname: config.host,
      reusePort: worker !== undefined,
      answersLate: config.ledgerUrl !== undefined,
    });
    config = withBoundPort(config, listener.port);
    ctx = await createContext(config, undefined, { log });
    // The replica's writing work runs in one process: a lone server, or worker 0.
    stopBackground = await startBackgroundWork(ctx, { writer: worker === undefined || worker === 0 });
    // The others learn worker 0's upstream through the supervisor (docs/operations.md, Health).
    if (worker !== undefined && worker > 0 && config.syncFrom !== undefined && isPostgresUrl(config.syncFrom))
      ctx.upstream = relayedUpstream();
    const routes = createRouteTable(ctx);
    listener.serve(createApp(ctx, routes), routes);
    // A lone server's own admin listener; a worker answers its supervisor's instead.
    if (config.adminPort !== undefined && worker === undefined && ctx.metrics)
      admin = await startAdmin(
        log,
        { port: config.adminPort, host: config.adminHost },
        serverAnswers(ctx.health, ctx.metrics),
      );
  } catch (err) {
    if (stopping) return stopping;
    // A port in use, say: close what is open (a shared ledger's connections would keep the
    // process alive) so the command exits with its error.
    await admin?.close();
    await listener?.close();
    await stopBackground?.().catch(() => {});
    await ctx?.close();
    lock?.close();
    // A worker also lets go of its supervisor's channel: once node:http has tried to listen
    // there (server/node-http.ts), the channel would keep the process running.
    if (worker !== undefined) process.channel?.unref();
    throw err;
  }
  if (stopping) return stopping;
  if (worker !== undefined) {
    if (worker === 0 && ctx.upstream) shareUpstream(ctx.upstream);
    answerSupervisor(ctx);
    reportListening(config.port);
  } else {
    announce(config.logFormat, startupLine(config), startupFields(config));
    if (config.readyFile !== undefined) {
      try {
        writeReadyFile(config.readyFile, config);
      } catch (err) {
        // A parent waiting for the file would wait forever: better no server than a silent one.
        console.error(`marquee serve: cannot write the ready file: ${(err as Error).message}`);
        return stop("no ready file", 1);
      }
    }
    announced = true;
  }
  // Watched from here on (a start that fails must not wait for standard input to end); a parent
  // that went away during start-up has closed it already, and the server stops at once.
  if (config.exitWithStdin) stopWhenStdinCloses(() => void stop("standard input closed"));
  return new Promise<undefined>(() => {}); // serve until stopped
}

/** The shutdown's one line. */
function stoppedLine(reason: StopReason, cut: number, ctx: AppContext | undefined): string {
  const closed = ctx ? `closed the ${ctx.upstream ? "upstream stream, the " : ""}ledger and the replica` : "";
  const requests =
    cut > 0
      ? `${cut} request${cut === 1 ? "" : "s"} still in flight after ${DEFAULTS.shutdownGraceMs / 1000} s cut off`
      : "requests in flight answered";
  return `Marquee stopped (${reason}): ${[requests, closed].filter(Boolean).join("; ")}`;
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
