/**
 * Everything a request may touch, built once at start-up and passed down explicitly.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { ACCESS } from "../db/contract.ts";
import type { Db } from "../db/driver.ts";
import { ensureSetting, ledgerPathFor, openLedger } from "../db/ledger.ts";
import { openReplica } from "../db/replica.ts";
import { HOT_PATH } from "../db/tuning.ts";
import { Access } from "./access.ts";
import { type Clock, createClock } from "./clock.ts";
import type { Config } from "./config.ts";
import { createFaults, type Faults } from "./faults.ts";
import { createMeter, type Meter } from "./limits/meter.ts";
import { ListService } from "./list/service.ts";

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
  /** Keys, accounts and admission, with their cache (server/access.ts). */
  access: Access;
  /** `GET /v1/events` and every cache it uses (server/list/service.ts). */
  list: ListService;
  /** The upstream a serving process streams from (`--sync-from postgres://…`), for /healthz. */
  upstream?: { status(): object };
  close(): void;
}

export async function createContext(config: Config, clock: Clock = createClock()): Promise<AppContext> {
  if (config.dbPath !== ":memory:") mkdirSync(dirname(config.dbPath), { recursive: true });
  const replica = await openReplica(config.dbPath);
  const ledger = await openLedger(ledgerPathFor(config.dbPath));
  // Request-path ledger writes answer 503 rather than wait long behind a held lock (docs/api.md).
  ledger.exec(`PRAGMA busy_timeout = ${ACCESS.ledgerBusyTimeoutMs}`);
  // docs/operations.md, The program: generated and stored when absent, so cursors survive restarts.
  const secret = config.secret ?? ensureSetting(ledger, "secret", () => randomBytes(32).toString("base64url"));
  // One connection for every request-path read and the meter's writes: SQLite drops a
  // connection's page cache whenever another connection commits, and the meter commits every
  // few milliseconds. A larger cache then keeps the recently created accounts' pages.
  ledger.exec(`PRAGMA cache_size = -${HOT_PATH.ledgerCacheKiB}`);
  const meter = createMeter(ledger);
  const faults = createFaults();
  const access = new Access({ ledger, meter, clock, faults });
  const list = new ListService({ replica, access, clock, secret, baseUrl: config.baseUrl });
  return {
    config,
    clock,
    replica,
    ledger,
    secret,
    faults,
    meter,
    access,
    list,
    close() {
      meter.close();
      replica.close();
      ledger.close();
    },
  };
}

/** After anything in this process changed the replica: caches that describe it start again. */
export function notifyReplicaChange(ctx: AppContext): void {
  ctx.list.caches.replicaChanged();
}

/** After the ledger was emptied (test mode's reset): the meter's counters and the access cache describe deleted rows. */
export function notifyLedgerReset(ctx: AppContext): void {
  ctx.meter.clear();
  ctx.access.clear();
}
