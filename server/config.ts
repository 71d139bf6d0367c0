/**
 * Configuration as data: named defaults, overridden by the environment, overridden by flags.
 * `process.env` is read here and nowhere else.
 */
import { UsageError } from "./cli/usage-error.ts";

export interface Config {
  dbPath: string;
  port: number;
  host: string;
  baseUrl: string;
  secret: string | undefined;
  snapshotIntervalS: number;
  testMode: boolean;
  demo: boolean;
  syncFrom: string | undefined;
  syncIntervalS: number;
  /** A shared ledger, `redis://[user:password@]host:port[/db]` (docs/operations.md, Configuration); unset: the SQLite ledger beside the replica. */
  ledgerUrl: string | undefined;
  /** Serving processes `marquee serve` runs on one port (docs/operations.md, Configuration). */
  workers: number;
  /**
   * Set in each serving process a `--workers` supervisor starts (server/workers.ts): its index,
   * 0 being the one that does the replica's writing work. Unset in a lone server.
   */
  workerIndex: number | undefined;
  /** Where to write `{"url", "pid"}` once the server answers (docs/operations.md, The program). */
  readyFile: string | undefined;
  /** Stop when standard input closes: the process that started the server takes it along. */
  exitWithStdin: boolean;
}

export const DEFAULTS = {
  dbPath: "./data/marquee.db",
  port: 8080,
  host: "0.0.0.0",
  snapshotIntervalS: 60,
  syncIntervalS: 60,
  workers: 1,
  /** SO_REUSEPORT spreads connections over processes on one box; more than the cores rarely helps. */
  maxWorkers: 64,
  /** On SIGTERM or SIGINT, requests in flight get this long to finish before their connections close. */
  shutdownGraceMs: 10_000,
} as const;

/** The variable a `--workers` supervisor sets in each serving process it starts. */
export const WORKER_INDEX_ENV = "MARQUEE_WORKER_INDEX";

/**
 * The variable `npx marquee` (bin/marquee.js) sets to its own process id in the program it
 * starts: the program stops when its parent is no longer that process (server/cli/parent.ts).
 */
export const PARENT_PID_ENV = "MARQUEE_PARENT_PID";

/** The process that must outlive this one, when a wrapper named it. */
export function wrapperPid(env: Env = process.env): number | undefined {
  const value = env[PARENT_PID_ENV];
  return value && /^\d+$/.test(value) ? Number(value) : undefined;
}

/** The base URL when none is given: the port is the one bound (the kernel's pick for port 0). */
const defaultBaseUrl = (port: number) => `http://localhost:${port}`;

type Env = Record<string, string | undefined>;

export function readEnv(env: Env = process.env): Partial<Config> {
  const out: Partial<Config> = {};
  if (env.MARQUEE_DB) out.dbPath = env.MARQUEE_DB;
  if (env.PORT) out.port = Number(env.PORT);
  if (env.MARQUEE_BASE_URL) out.baseUrl = env.MARQUEE_BASE_URL;
  if (env.MARQUEE_SECRET) out.secret = env.MARQUEE_SECRET;
  if (env.MARQUEE_LEDGER) out.ledgerUrl = env.MARQUEE_LEDGER;
  const worker = env[WORKER_INDEX_ENV];
  if (worker && /^\d+$/.test(worker)) out.workerIndex = Number(worker);
  return out;
}

/** Flags win over environment, environment over defaults. */
export function resolveConfig(flags: Partial<Config>, env: Env = process.env): Config {
  const merged = { ...stripUndefined(readEnv(env)), ...stripUndefined(flags) };
  const port = merged.port ?? DEFAULTS.port;
  return {
    dbPath: merged.dbPath ?? DEFAULTS.dbPath,
    port,
    host: merged.host ?? DEFAULTS.host,
    baseUrl: (merged.baseUrl ?? defaultBaseUrl(port)).replace(/\/+$/, ""),
    secret: merged.secret,
    snapshotIntervalS: merged.snapshotIntervalS ?? DEFAULTS.snapshotIntervalS,
    testMode: merged.testMode ?? false,
    demo: merged.demo ?? false,
    syncFrom: merged.syncFrom,
    syncIntervalS: merged.syncIntervalS ?? DEFAULTS.syncIntervalS,
    ledgerUrl: merged.ledgerUrl,
    workers: merged.workers ?? DEFAULTS.workers,
    workerIndex: merged.workerIndex,
    readyFile: merged.readyFile,
    exitWithStdin: merged.exitWithStdin ?? false,
  };
}

/**
 * The configuration once the port is bound: `--port 0` becomes the port the kernel chose, and
 * so does the default base URL's port (an explicit base URL is kept as given).
 */
export function withBoundPort(config: Config, port: number): Config {
  if (config.port === port) return config;
  const baseUrl = config.baseUrl === defaultBaseUrl(config.port) ? defaultBaseUrl(port) : config.baseUrl;
  return { ...config, port, baseUrl };
}

/**
 * A `ledgerUrl` that cannot work is a usage error, before anything opens; the message names the
 * flag or the variable it came from and never shows the URL, so never a password. The Redis
 * client is loaded only when a ledger URL is set: a server on the SQLite ledger starts without it.
 */
export async function assertLedgerUrl(url: string | undefined, from: "flag" | "env"): Promise<void> {
  if (url === undefined) return;
  const { checkRedisUrl } = await import("./ledger/redis-connection.ts");
  try {
    checkRedisUrl(url);
  } catch (err) {
    const message = (err as Error).message;
    throw new UsageError(from === "env" ? message.replace(/^--ledger:/, "MARQUEE_LEDGER:") : message);
  }
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * h3's server layer (srvx) decides as it loads whether to colour its messages, by asking for
 * process.stdout unless NO_COLOR or FORCE_COLOR answers first; Bun builds that stream on first use,
 * which cost a server's start about 8 ms here (docs/operations.md, Start-up). Marquee silences
 * srvx's messages and colours nothing of its own, so NO_COLOR changes nothing else. Called before
 * the server's modules load (server/cli/serve.ts); a variable already set is left as it is.
 */
export function spareTerminalCheck(env: Env = process.env): void {
  if (env.FORCE_COLOR === undefined) env.NO_COLOR ??= "1";
}

/** True when stdout is an interactive terminal (progress bars only then). */
export const isTTY = () => Boolean(process.stdout.isTTY);
