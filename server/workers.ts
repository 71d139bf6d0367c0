/**
 * `marquee serve --workers N` (docs/operations.md, Configuration): the process becomes a
 * supervisor that runs N serving processes of this same program on one port. Each listens with
 * SO_REUSEPORT (server/listen.ts), so the kernel spreads new connections over them; they share
 * the replica file and the shared ledger. Worker 0 alone does the replica's writing work (sync,
 * demo data, snapshot refresh: server/background.ts); the others see its commits the way a lone
 * server sees a separate `marquee sync` (server/list/caches.ts).
 *
 * The supervisor starts worker 0 first and the others once it listens, so migrations and the
 * first sync run in one process (with `--port 0`, worker 0 binds a free port and the others are
 * given that one); prints the start-up line and writes the ready file when all listen; restarts a
 * worker that exits (after a short, growing pause), gives up when one keeps crashing as soon as it
 * starts; on SIGTERM or SIGINT (or standard input closing, with `--exit-with-stdin`) stops every
 * worker the way a lone server stops, then exits 0; and passes SIGHUP on to every worker.
 *
 * With an admin port (`--admin-port`), the supervisor serves `/metrics`, `/livez` and `/readyz`
 * for all its workers (docs/operations.md, Logs and metrics): at each scrape it asks every
 * worker over its IPC channel for its metric families and its readiness (`scrapeWorkers`), and
 * merges them. A worker that does not answer within `SUPERVISION.scrapeTimeoutMs` is missing
 * from that scrape and makes `/readyz` fail.
 *
 * Worker 0 alone follows a PostgreSQL upstream; it reports the upstream's status every
 * `SUPERVISION.upstreamReportMs`, and the supervisor passes it on to the other workers, so every
 * worker's `/healthz` and `/readyz` judge the upstream alike (`shareUpstream`, `relayedUpstream`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { BUN_SERVE_ARGS } from "../bin/find-bun.js";
import { onBun } from "../db/runtime.ts";
import { removeReadyFile, startupFields, startupLine, writeReadyFile } from "./announce.ts";
import { type Config, DEFAULTS, PARENT_PID_ENV, WORKER_INDEX_ENV, withBoundPort } from "./config.ts";
import type { Readiness, UpstreamReport } from "./health.ts";
import { announce } from "./log.ts";
import type { MetricFamily } from "./metrics.ts";
import { type WorkerMessage as ListeningMessage, stopWhenStdinCloses } from "./ties.ts";

export const SUPERVISION = {
  /** First pause before a worker is started again; doubled per immediate crash in a row. */
  restartDelayMs: 100,
  maxRestartDelayMs: 2_000,
  /** A worker that exits sooner than this after it was started crashed "immediately". */
  steadyAfterMs: 5_000,
  /** Immediate crashes in a row of one worker after which the supervisor stops everything. */
  maxImmediateCrashes: 5,
  /** A worker still running this long after it was asked to stop (past its own grace period) is killed. */
  killAfterMs: DEFAULTS.shutdownGraceMs + 5_000,
  /** How long a scrape waits for a worker's metrics and readiness. */
  scrapeTimeoutMs: 3_000,
  /** How often worker 0 reports its upstream's status, and when a report counts as missing. */
  upstreamReportMs: 1_000,
  upstreamSilentMs: 5_000,
} as const;

/** A worker's readiness, as it crosses the IPC channel. */
export type WorkerReadiness = Pick<Readiness, "ready" | "checks" | "failing">;

/** What a worker tells its supervisor over the IPC channel. */
type WorkerMessage =
  | ListeningMessage
  | { type: "scrape"; id: number; families: MetricFamily[]; readiness: WorkerReadiness }
  | UpstreamMessage;

/** Worker 0's upstream status, passed on by the supervisor to the other workers. */
interface UpstreamMessage {
  type: "upstream";
  status: UpstreamReport;
}

/** What a supervisor asks of, or tells, a worker. */
type SupervisorMessage = { type: "scrape"; id: number } | UpstreamMessage;

/** One worker's answer to a scrape; `answered: false` when it gave none in time (or is not running). */
export type WorkerScrape =
  | { worker: number; answered: true; families: MetricFamily[]; readiness: WorkerReadiness }
  | { worker: number; answered: false };

/** Asks every worker for its metrics and readiness. */
export type ScrapeWorkers = () => Promise<WorkerScrape[]>;

/**
 * The command that runs this program again with `args`: the same runtime with its options
 * (BUN_SERVE_ARGS, bin/find-bun.js, among them) and the same entry file. A `bun build --compile`
 * binary is its own entry, and carries its options inside.
 */
export function programCommand(args: string[]): { file: string; args: string[] } {
  const entry = process.argv[1];
  if (entry?.startsWith("/$bunfs/")) return { file: process.execPath, args };
  const options = [...process.execArgv];
  if (onBun) for (const arg of BUN_SERVE_ARGS) if (!options.includes(arg)) options.push(arg);
  return { file: process.execPath, args: [...options, entry, ...args] };
}

/**
 * On Bun, NODE_UNIQUE_ID: Bun's node:http listens with SO_REUSEPORT in a cluster worker, which
 * that variable marks (server/node-http.ts); Bun.serve is asked for it directly. Not on Node,
 * whose cluster worker would ask this supervisor for the port instead of binding it.
 */
function reusePortEnv(index: number): Record<string, string> {
  return onBun ? { NODE_UNIQUE_ID: String(index + 1) } : {};
}

/** Flags of the supervisor's own, which its workers do not get: `--workers`, `--ready-file`, `--exit-with-stdin`. */
const SUPERVISOR_FLAGS = { "--workers": true, "--ready-file": true, "--exit-with-stdin": false } as const;

/** `argv` without the supervisor's own flags (each as `--flag value` or `--flag=value`). */
export function workerArgv(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const [name] = argv[i].split("=", 1);
    if (!Object.hasOwn(SUPERVISOR_FLAGS, name)) out.push(argv[i]);
    else if (SUPERVISOR_FLAGS[name as keyof typeof SUPERVISOR_FLAGS] && !argv[i].includes("=")) i++;
  }
  return out;
}

const describeExit = (code: number | null, signal: NodeJS.Signals | null) =>
  signal ? `was killed by ${signal}` : `exited with code ${code}`;

interface Slot {
  index: number;
  child: ChildProcess;
  startedAt: number;
  /** Immediate crashes in a row. */
  crashes: number;
}

/**
 * Runs `config.workers` workers of `marquee serve argv` (argv without the supervisor's own flags)
 * until a signal stops them (resolves 0) or one cannot start or keeps crashing (resolves 1).
 */
export function superviseWorkers(options: {
  argv: string[];
  config: Config;
  /** Starts the admin listener over the workers' scrapes; it is closed when the supervisor stops. */
  admin?: (scrape: ScrapeWorkers) => Promise<{ close(): Promise<void> }>;
}): Promise<number> {
  const { argv, config } = options;
  const count = config.workers;
  /** The port every worker binds: the one asked for, or, for port 0, the one worker 0 got. */
  let port = config.port;
  const slots: Slot[] = [];
  const restarts = new Set<ReturnType<typeof setTimeout>>();
  let phase: "starting" | "running" | "stopping" = "starting";
  let finish!: (code: number) => void;
  const done = new Promise<number>((resolve) => (finish = resolve));
  let exitCode = 0;
  let announced = false;

  const live = () => slots.filter((s) => s.child.exitCode === null && s.child.signalCode === null);
  /** Scrapes waiting for a worker's answer, by `worker:id`. */
  const answers = new Map<string, (m: Extract<WorkerMessage, { type: "scrape" }>) => void>();
  let scrapes = 0;

  const stopAll = (code: number) => {
    // A repeated signal changes nothing: each worker's stop is bounded, and so is the wait below.
    if (phase === "stopping") return;
    phase = "stopping";
    exitCode = code;
    for (const t of restarts) clearTimeout(t);
    restarts.clear();
    const running = live();
    if (running.length === 0) return finish(exitCode);
    for (const s of running) s.child.kill("SIGTERM");
    setTimeout(() => {
      for (const s of live()) s.child.kill("SIGKILL");
    }, SUPERVISION.killAfterMs).unref();
  };

  const start = (index: number, crashes: number, onListening?: (port: number) => void): Slot => {
    const command = programCommand(["serve", ...argv, ...(port === config.port ? [] : ["--port", String(port)])]);
    const env: NodeJS.ProcessEnv = { ...process.env, [WORKER_INDEX_ENV]: String(index), ...reusePortEnv(index) };
    // A worker watches its supervisor (its IPC channel), not the process that started the supervisor.
    delete env[PARENT_PID_ENV];
    const child = spawn(command.file, command.args, {
      env,
      // Worker 0 does the syncing, stdin (`--sync-from -`) included, unless stdin is the
      // supervisor's own signal to stop (`--exit-with-stdin`).
      stdio: [index === 0 && !config.exitWithStdin ? "inherit" : "ignore", "inherit", "inherit", "ipc"],
    });
    const slot: Slot = { index, child, startedAt: Date.now(), crashes };
    slots[index] = slot;
    child.on("message", (m: WorkerMessage) => {
      if (m?.type === "listening") onListening?.(m.port);
      else if (m?.type === "scrape") answers.get(`${index}:${m.id}`)?.(m);
      else if (m?.type === "upstream")
        for (const other of live()) if (other !== slot && other.child.connected) other.child.send(m, () => {});
    });
    child.on("error", (err) => {
      console.error(`marquee serve: cannot start worker ${index}: ${err.message}`);
    });
    child.on("exit", (code, signal) => onExit(slot, code, signal));
    return slot;
  };

  const onExit = (slot: Slot, code: number | null, signal: NodeJS.Signals | null) => {
    if (phase === "stopping") {
      if (code !== 0 && signal !== "SIGTERM" && signal !== "SIGINT") exitCode = 1;
      if (live().length === 0) finish(exitCode);
      return;
    }
    const what = `worker ${slot.index} (pid ${slot.child.pid}) ${describeExit(code, signal)}`;
    if (phase === "starting") {
      // It never listened: its own error is already on stderr, and retrying would repeat it.
      console.error(`marquee serve: ${what} before listening; stopping`);
      return stopAll(1);
    }
    const crashes = Date.now() - slot.startedAt < SUPERVISION.steadyAfterMs ? slot.crashes + 1 : 1;
    if (crashes > SUPERVISION.maxImmediateCrashes) {
      console.error(
        `marquee serve: ${what}, its ${crashes}th exit within ${SUPERVISION.steadyAfterMs / 1000} s of starting; stopping`,
      );
      return stopAll(1);
    }
    const delayMs = Math.min(SUPERVISION.restartDelayMs * 2 ** (crashes - 1), SUPERVISION.maxRestartDelayMs);
    const timer = setTimeout(() => {
      restarts.delete(timer);
      if (phase !== "running") return;
      const next = start(slot.index, crashes);
      console.error(`marquee serve: ${what}; restarted it after ${delayMs} ms (pid ${next.child.pid})`);
    }, delayMs);
    restarts.add(timer);
  };

  const scrapeWorkers: ScrapeWorkers = () => {
    const id = ++scrapes;
    return Promise.all(
      Array.from(
        { length: count },
        (_, worker) =>
          new Promise<WorkerScrape>((resolve) => {
            const slot = slots[worker];
            const key = `${worker}:${id}`;
            const missing = () => {
              answers.delete(key);
              resolve({ worker, answered: false });
            };
            if (!slot || slot.child.exitCode !== null || slot.child.signalCode !== null || !slot.child.connected)
              return missing();
            const timer = setTimeout(missing, SUPERVISION.scrapeTimeoutMs);
            answers.set(key, (m) => {
              clearTimeout(timer);
              answers.delete(key);
              resolve({ worker, answered: true, families: m.families, readiness: m.readiness });
            });
            const ask: SupervisorMessage = { type: "scrape", id };
            slot.child.send(ask, (err) => {
              if (err) {
                clearTimeout(timer);
                missing();
              }
            });
          }),
      ),
    );
  };
  const admin = options.admin?.(scrapeWorkers).catch((err) => {
    console.error(`marquee serve: the admin listener cannot start: ${(err as Error).message}`);
    stopAll(1);
    return undefined;
  });

  const onSignal = () => stopAll(0);
  // SIGHUP is each worker's to handle (server/serving.ts, `reload`); the supervisor has nothing to re-read.
  const onHangUp = () => {
    for (const s of live()) s.child.kill("SIGHUP");
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  process.on("SIGHUP", onHangUp);

  // Worker 0 first: it migrates the replica and runs the first sync before the others open it.
  const listening = (index: number) =>
    new Promise<number>((resolve) => {
      start(index, 0, resolve);
    });
  listening(0)
    .then((bound) => {
      port = bound;
      return Promise.all(Array.from({ length: count - 1 }, (_, i) => listening(i + 1)));
    })
    .then(() => {
      if (phase !== "starting") return;
      phase = "running";
      const bound = withBoundPort(config, port);
      announce(config.logFormat, startupLine(bound), startupFields(bound));
      if (config.readyFile !== undefined) {
        try {
          writeReadyFile(config.readyFile, bound);
          announced = true;
        } catch (err) {
          console.error(`marquee serve: cannot write the ready file: ${(err as Error).message}`);
          return stopAll(1);
        }
      }
      // As in a lone server (server/serving.ts): watched once all listen.
      if (config.exitWithStdin) stopWhenStdinCloses(onSignal);
    });

  return done.finally(async () => {
    await (await admin)?.close();
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
    process.off("SIGHUP", onHangUp);
    if (announced && config.readyFile !== undefined) removeReadyFile(config.readyFile);
    // After a failure the lines above say what happened; a requested stop gets its own line.
    if (exitCode === 0) announce(config.logFormat, `Marquee stopped: ${count} worker${count === 1 ? "" : "s"} stopped`);
  });
}

/** In worker 0: reports the upstream it follows to the supervisor, for the other workers. */
export function shareUpstream(upstream: { status(): UpstreamReport }): void {
  const timer = setInterval(() => {
    const message: UpstreamMessage = { type: "upstream", status: upstream.status() };
    process.send?.(message);
  }, SUPERVISION.upstreamReportMs);
  timer.unref?.();
}

/**
 * In another worker: the upstream worker 0 follows, as its last report says. Before the first
 * report, or when reports stop, its state is `unknown` and only its last applied time counts.
 */
export function relayedUpstream(): { status(): UpstreamReport } {
  let last: { status: UpstreamReport; atMs: number } | undefined;
  process.on("message", (m: SupervisorMessage) => {
    if (m?.type === "upstream") last = { status: m.status, atMs: Date.now() };
  });
  return {
    status() {
      const silentMs = last === undefined ? Number.POSITIVE_INFINITY : Date.now() - last.atMs;
      if (last && silentMs <= SUPERVISION.upstreamSilentMs) return last.status;
      const error = last
        ? `no report from worker 0 for ${Math.round(silentMs / 1000)} s`
        : "no report from worker 0 yet";
      return { ...last?.status, state: "unknown", error, lagBytes: null, appliedAt: last?.status.appliedAt ?? null };
    },
  };
}

/** In a worker: answers its supervisor's scrapes with `collect`'s metrics and readiness. */
export function answerScrapes(
  collect: () => Promise<{ families: MetricFamily[]; readiness: WorkerReadiness }>,
  onError: (err: unknown) => void,
): void {
  process.on("message", (m: SupervisorMessage) => {
    if (m?.type !== "scrape") return;
    collect().then(({ families, readiness }) => {
      const answer: WorkerMessage = { type: "scrape", id: m.id, families, readiness };
      process.send?.(answer);
    }, onError);
  });
}
