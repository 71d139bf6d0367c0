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
 */
import { type ChildProcess, spawn } from "node:child_process";
import { BUN_SERVE_ARGS } from "../bin/find-bun.js";
import { onBun } from "../db/runtime.ts";
import { removeReadyFile, startupLine, writeReadyFile } from "./announce.ts";
import { type Config, DEFAULTS, PARENT_PID_ENV, WORKER_INDEX_ENV, withBoundPort } from "./config.ts";
import { stopWhenStdinCloses, type WorkerMessage } from "./ties.ts";

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
} as const;

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
export function superviseWorkers(options: { argv: string[]; config: Config }): Promise<number> {
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
      console.log(startupLine(bound));
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

  return done.finally(() => {
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
    process.off("SIGHUP", onHangUp);
    if (announced && config.readyFile !== undefined) removeReadyFile(config.readyFile);
    // After a failure the lines above say what happened; a requested stop gets its own line.
    if (exitCode === 0) console.log(`Marquee stopped: ${count} worker${count === 1 ? "" : "s"} stopped`);
  });
}
