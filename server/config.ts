/**
 * Configuration as data: named defaults, overridden by the environment, overridden by flags.
 * `process.env` is read here and nowhere else.
 */
import { readFileSync } from "node:fs";
import { API_SYNC } from "../db/contract.ts";
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
    syncFromApi: merged.syncFromApi,
    upstreamKeyFile: merged.upstreamKeyFile,
    upstreamBudgetReserve: merged.upstreamBudgetReserve ?? API_SYNC.budgetReserve,
    upstreamAggregators: merged.upstreamAggregators ?? false,
    ledgerUrl: merged.ledgerUrl,
    workers: merged.workers ?? DEFAULTS.workers,
    workerIndex: merged.workerIndex,
  };
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

/** True when stdout is an interactive terminal (progress bars only then). */
export const isTTY = () => Boolean(process.stdout.isTTY);
