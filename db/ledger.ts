/**
 * The ledger: accounts and keys (and, through later migrations, usage, trials and handoffs).
 * It cannot be rebuilt from upstream, so it runs with synchronous=FULL. It lives beside the
 * replica file under a derived name (`ledgerPathFor`).
 */
import { type Db, openDb } from "./driver.ts";
import { ACCESS_MIGRATIONS } from "./ledger-access.ts";
import { HANDOFF_MIGRATIONS } from "./ledger-handoffs.ts";
import { PORTAL_MIGRATIONS } from "./ledger-portal.ts";
import { type Migration, migrate, type SchemaLog } from "./migrate.ts";

const CORE_MIGRATIONS: Migration[] = [
  {
    version: 1,
    sql: `
CREATE TABLE accounts (
  id INTEGER PRIMARY KEY,
  email TEXT NOT NULL,
  plan TEXT NOT NULL,                 -- none | basic | business | enterprise | legacy
  verified INTEGER NOT NULL,
  had_subscription INTEGER NOT NULL,
  row_budget INTEGER,                 -- enterprise override; NULL = plan default
  rate_sustained INTEGER,             -- negotiated accounts: per minute
  rate_burst INTEGER,
  policy TEXT NOT NULL DEFAULT 'ok',  -- ok | missing | stale | foreign
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL
);
CREATE TABLE api_keys (
  id INTEGER PRIMARY KEY,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  kind TEXT NOT NULL,                 -- live | builder | legacy
  digest TEXT NOT NULL UNIQUE,        -- hex SHA-256 of the full key; the key itself is never stored
  prefix TEXT NOT NULL,               -- display prefix, e.g. 'mq_live_AbC1'
  created_ms INTEGER NOT NULL,
  revoked_ms INTEGER
);
CREATE INDEX api_keys_account ON api_keys(account_id);
CREATE TABLE settings (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
`,
  },
];

/** Core (1–9), access (10–19), handoff (20–29) and portal (30–39) migrations, applied in version order. */
export const LEDGER_MIGRATIONS: Migration[] = [
  ...CORE_MIGRATIONS,
  ...ACCESS_MIGRATIONS,
  ...HANDOFF_MIGRATIONS,
  ...PORTAL_MIGRATIONS,
];

/** `data/marquee.db` → `data/marquee.ledger.db`. */
export function ledgerPathFor(replicaPath: string): string {
  if (replicaPath === ":memory:") return ":memory:";
  return replicaPath.endsWith(".db") ? `${replicaPath.slice(0, -3)}.ledger.db` : `${replicaPath}.ledger`;
}

/**
 * Opens the ledger and brings its schema up to date (one log line per migration); a ledger
 * written by a newer Marquee is closed again and refused (docs/operations.md, Upgrades and schema versions).
 */
export async function openLedger(path: string, options: { log?: SchemaLog } = {}): Promise<Db> {
  const db = await openDb(path, { synchronous: "FULL" });
  try {
    migrate(db, LEDGER_MIGRATIONS, { name: `ledger ${path}`, log: options.log });
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

export function readSetting(db: Db, key: string): string | undefined {
  return db.prepare<{ value: string }>("SELECT value FROM settings WHERE key = $key").get({ key })?.value;
}

/** Returns the stored value, or stores and returns `make()` when absent. */
export function ensureSetting(db: Db, key: string, make: () => string): string {
  const existing = readSetting(db, key);
  if (existing !== undefined) return existing;
  db.prepare("INSERT OR IGNORE INTO settings(key, value) VALUES ($key, $value)").run({ key, value: make() });
  return readSetting(db, key)!;
}
