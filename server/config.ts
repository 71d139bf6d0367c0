/**
 * Configuration as data: named defaults, overridden by the environment, overridden by flags.
 * `process.env` is read here and nowhere else.
 */
import { UsageError } from "./cli/args.ts";

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
} as const;

/** The variable a `--workers` supervisor sets in each serving process it starts. */
export const WORKER_INDEX_ENV = "MARQUEE_WORKER_INDEX";

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
    baseUrl: (merged.baseUrl ?? `http://localhost:${port}`).replace(/\/+$/, ""),
    secret: merged.secret,
    snapshotIntervalS: merged.snapshotIntervalS ?? DEFAULTS.snapshotIntervalS,
    testMode: merged.testMode ?? false,
    demo: merged.demo ?? false,
    syncFrom: merged.syncFrom,
    syncIntervalS: merged.syncIntervalS ?? DEFAULTS.syncIntervalS,
    ledgerUrl: merged.ledgerUrl,
    workers: merged.workers ?? DEFAULTS.workers,
    workerIndex: merged.workerIndex,
  };
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

/** True when stdout is an interactive terminal (progress bars only then). */
export const isTTY = () => Boolean(process.stdout.isTTY);
