/**
 * Configuration as data: named defaults, overridden by the environment, overridden by flags.
 * `process.env` is read here and nowhere else.
 */
import { readFileSync } from "node:fs";
import { API_SYNC } from "../db/contract.ts";
import { UsageError } from "./cli/usage-error.ts";
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from "./log.ts";

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
  /** Another deployment's list endpoint to follow (docs/upstream-records.md, A replica of another deployment). */
  syncFromApi: string | undefined;
  /** Where its key is, when not in MARQUEE_UPSTREAM_KEY; the key itself never is in the config. */
  upstreamKeyFile: string | undefined;
  /** `--budget-reserve` and `--aggregators` of `--sync-from-api`. */
  upstreamBudgetReserve: number;
  upstreamAggregators: boolean;
  /** A shared ledger, `redis://[user:password@]host:port[/db]` (docs/operations.md, Configuration); unset: the SQLite ledger beside the replica. */
  ledgerUrl: string | undefined;
  /** Serving processes `marquee serve` runs on one port (docs/operations.md, Configuration). */
  workers: number;
  /**
   * Set in each serving process a `--workers` supervisor starts (server/workers.ts): its index,
   * 0 being the one that does the replica's writing work. Unset in a lone server.
   */
  workerIndex: number | undefined;
  /** The log (docs/operations.md, Logs and metrics): `json` by default unless it goes to a terminal. */
  logFormat: LogFormat;
  logLevel: LogLevel;
  /** Every log line to this file; unset: standard output (and standard error for warnings and errors). */
  logFile: string | undefined;
  /** The admin listener's port (`/metrics`, `/livez`, `/readyz`); unset: none. */
  adminPort: number | undefined;
  adminHost: string;
  /** How long a followed upstream may go without applying changes, while not streaming, before /readyz fails. */
  maxUpstreamLagS: number;
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
  logLevel: "info",
  adminHost: "127.0.0.1",
  maxUpstreamLagS: 120,
  /** On SIGTERM or SIGINT, requests in flight get this long to finish before their connections close. */
  shutdownGraceMs: 10_000,
} as const;

/** The variable a `--workers` supervisor sets in each serving process it starts. */
export const WORKER_INDEX_ENV = "MARQUEE_WORKER_INDEX";

/**
 * The variable `npx marquee` (bin/marquee.js) sets to its own process id in the program it
 * starts: the program stops when its parent is no longer that process (server/ties.ts).
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

/** The process's environment, for the modules that map it onto flags (server/cli/settings.ts). */
export const environment = (): Env => process.env;

export function readEnv(env: Env = process.env): Partial<Config> {
  const out: Partial<Config> = {};
  if (env.MARQUEE_DB) out.dbPath = env.MARQUEE_DB;
  if (env.PORT) out.port = Number(env.PORT);
  if (env.MARQUEE_BASE_URL) out.baseUrl = env.MARQUEE_BASE_URL;
  if (env.MARQUEE_SECRET) out.secret = env.MARQUEE_SECRET;
  if (env.MARQUEE_LEDGER) out.ledgerUrl = env.MARQUEE_LEDGER;
  const worker = env[WORKER_INDEX_ENV];
  if (worker && /^\d+$/.test(worker)) out.workerIndex = Number(worker);
  if (env.MARQUEE_LOG_FORMAT) out.logFormat = oneOfEnv("MARQUEE_LOG_FORMAT", env.MARQUEE_LOG_FORMAT, LOG_FORMATS);
  if (env.MARQUEE_LOG_LEVEL) out.logLevel = oneOfEnv("MARQUEE_LOG_LEVEL", env.MARQUEE_LOG_LEVEL, LOG_LEVELS);
  if (env.MARQUEE_LOG_FILE) out.logFile = env.MARQUEE_LOG_FILE;
  if (env.MARQUEE_ADMIN_PORT) out.adminPort = portEnv("MARQUEE_ADMIN_PORT", env.MARQUEE_ADMIN_PORT);
  if (env.MARQUEE_ADMIN_HOST) out.adminHost = env.MARQUEE_ADMIN_HOST;
  if (env.MARQUEE_MAX_UPSTREAM_LAG)
    out.maxUpstreamLagS = intEnv("MARQUEE_MAX_UPSTREAM_LAG", env.MARQUEE_MAX_UPSTREAM_LAG, 1);
  return out;
}

function oneOfEnv<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  if (!allowed.includes(value as T)) throw new UsageError(`${name} must be one of ${allowed.join(", ")}`);
  return value as T;
}

function intEnv(name: string, value: string, min: number): number {
  if (!/^\d+$/.test(value) || Number(value) < min) throw new UsageError(`${name} must be an integer >= ${min}`);
  return Number(value);
}

function portEnv(name: string, value: string): number {
  const port = intEnv(name, value, 0);
  if (port > 65535) throw new UsageError(`${name} must be a port number (0 to 65535)`);
  return port;
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
    syncFromApi: merged.syncFromApi,
    upstreamKeyFile: merged.upstreamKeyFile,
    upstreamBudgetReserve: merged.upstreamBudgetReserve ?? API_SYNC.budgetReserve,
    upstreamAggregators: merged.upstreamAggregators ?? false,
    ledgerUrl: merged.ledgerUrl,
    workers: merged.workers ?? DEFAULTS.workers,
    workerIndex: merged.workerIndex,
    // JSON for machines, text for a person at a terminal.
    logFormat: merged.logFormat ?? (merged.logFile === undefined && isTTY() ? "text" : "json"),
    logLevel: merged.logLevel ?? DEFAULTS.logLevel,
    logFile: merged.logFile,
    adminPort: merged.adminPort,
    adminHost: merged.adminHost ?? DEFAULTS.adminHost,
    maxUpstreamLagS: merged.maxUpstreamLagS ?? DEFAULTS.maxUpstreamLagS,
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
 * flag, the variable or the configuration file's line it came from and never shows the URL, so never a password. The Redis
 * client is loaded only when a ledger URL is set: a server on the SQLite ledger starts without it.
 */
export async function assertLedgerUrl(url: string | undefined, from: "flag" | "env" | (string & {})): Promise<void> {
  if (url === undefined) return;
  const { checkRedisUrl } = await import("./ledger/redis-connection.ts");
  try {
    checkRedisUrl(url);
  } catch (err) {
    // `from`: where the URL came from, as server/cli/settings.ts names it (`ledger (FILE line 3)`).
    const named = from === "flag" ? "--ledger" : from === "env" ? "MARQUEE_LEDGER" : from;
    throw new UsageError((err as Error).message.replace(/^--ledger:/, `${named}:`));
  }
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * The key for another deployment's API: the first line of `--upstream-key-file`, else
 * `MARQUEE_UPSTREAM_KEY`. Never a flag's value, so it never shows in `ps`; callers never print it.
 */
export function readUpstreamKey(file: string | undefined, env: Env = process.env): string {
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      throw new UsageError(
        `--upstream-key-file: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? "error"})`,
      );
    }
    const key = text.split(/\r?\n/)[0].trim();
    if (key === "")
      throw new UsageError(`--upstream-key-file: ${file} is empty; put the upstream's API key on its first line`);
    return key;
  }
  const key = env.MARQUEE_UPSTREAM_KEY?.trim();
  if (!key)
    throw new UsageError(
      "the upstream's API key is needed: set MARQUEE_UPSTREAM_KEY or give --upstream-key-file PATH (never the key itself as an argument)",
    );
  return key;
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
