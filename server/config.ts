/**
 * Configuration as data: named defaults, overridden by the environment, overridden by flags.
 * `process.env` is read here and nowhere else.
 */
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
}

export const DEFAULTS = {
  dbPath: "./data/marquee.db",
  port: 8080,
  host: "0.0.0.0",
  snapshotIntervalS: 60,
  syncIntervalS: 60,
} as const;

type Env = Record<string, string | undefined>;

export function readEnv(env: Env = process.env): Partial<Config> {
  const out: Partial<Config> = {};
  if (env.MARQUEE_DB) out.dbPath = env.MARQUEE_DB;
  if (env.PORT) out.port = Number(env.PORT);
  if (env.MARQUEE_BASE_URL) out.baseUrl = env.MARQUEE_BASE_URL;
  if (env.MARQUEE_SECRET) out.secret = env.MARQUEE_SECRET;
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
  };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** True when stdout is an interactive terminal (progress bars only then). */
export const isTTY = () => Boolean(process.stdout.isTTY);
