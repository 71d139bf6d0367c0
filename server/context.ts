/**
 * Everything a request may touch, built once at start-up and passed down explicitly.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { ACCESS, HOT_PATH } from "../db/contract.ts";
import type { Db } from "../db/driver.ts";
import { ensureSetting, ledgerPathFor, openLedger } from "../db/ledger.ts";
import { openReplica } from "../db/replica.ts";
import { createClock, type Clock } from "./clock.ts";
import type { Config } from "./config.ts";
import { createFaults, type Faults } from "./faults.ts";
import { createMeter, type Meter } from "./limits/meter.ts";

export interface AppContext {
  config: Config;
  clock: Clock;
  replica: Db;
  ledger: Db;
  /** HMAC secret for cursors and handoffs. */
  secret: string;
  faults: Faults;
  /** Rate buckets, delivered rows, trials and reservations of the request path. */
  meter: Meter;
  /** Called after anything changes the replica so per-process caches can drop stale rows. */
  onReplicaChange: Array<() => void>;
  /** The upstream a serving process streams from (`--sync-from postgres://…`), for /healthz. */
  upstream?: { status(): object };
  /** Called after `/_test/reset` empties the ledger, for caches and in-memory counters. */
  onLedgerReset: Array<() => void>;
  close(): void;
}

export async function createContext(config: Config, clock: Clock = createClock()): Promise<AppContext> {
  if (config.dbPath !== ":memory:") mkdirSync(dirname(config.dbPath), { recursive: true });
  const replica = await openReplica(config.dbPath);
  const ledger = await openLedger(ledgerPathFor(config.dbPath));
  // Request-path ledger writes answer 503 rather than wait long behind a held lock (spec "Errors").
  ledger.exec(`PRAGMA busy_timeout = ${ACCESS.ledgerBusyTimeoutMs}`);
  // CONTRACT §2: generated and stored when absent, so cursors survive restarts.
  const secret = config.secret ?? ensureSetting(ledger, "secret", () => randomBytes(32).toString("base64url"));
  // One connection for every request-path read and the meter's writes: SQLite drops a
  // connection's page cache whenever another connection commits, and the meter commits every
  // few milliseconds. A larger cache then keeps the recently created accounts' pages (issue 8).
  ledger.exec(`PRAGMA cache_size = -${HOT_PATH.ledgerCacheKiB}`);
  const meter = createMeter(ledger);
  return {
    config,
    clock,
    replica,
    ledger,
    secret,
    faults: createFaults(),
    meter,
    onReplicaChange: [],
    // The meter's counters describe ledger rows that a reset deletes.
    onLedgerReset: [() => meter.clear()],
    close() {
      meter.close();
      replica.close();
      ledger.close();
    },
  };
}

export function notifyReplicaChange(ctx: AppContext): void {
  for (const fn of ctx.onReplicaChange) fn();
}
