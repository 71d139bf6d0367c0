/**
 * Shared pieces of the access, trial, rate and CLI suites: a fixed "now", a replica with enough
 * events inside every horizon, list helpers, and a direct handle on a target's ledger file for
 * the few things HTTP cannot stage (another process holding rows or the write lock).
 */

import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeAll, beforeEach, expect } from "vitest";
import { HOT_PATH } from "../db/tuning.ts";
import type { Ledger } from "../server/ledger/ledger.ts";
import { openRedisLedger } from "../server/ledger/redis.ts";
import type { Client } from "./harness.ts";
import { eventRecord, venueRecord } from "./records.ts";

export const NOW = "2030-01-01T00:00:00Z";
export const NOW_MS = Date.parse(NOW);
export const DAY_S = 86_400;
export const EVENTS = 120;
export const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z");
export const after = (seconds: number) => iso(NOW_MS + seconds * 1000);

let venues = 9000;

/** 120 events 10 to 15 days out (inside every horizon even after the clock moves a week). */
export async function seedEvents(c: Client): Promise<void> {
  const venue = ++venues;
  const records: object[] = [
    venueRecord(venue, { latitude: 40.7128, longitude: -74.006, city: "New York", state: "NY" }),
  ];
  for (let i = 0; i < EVENTS; i++) {
    records.push(eventRecord(900_000 + venue * 1000 + i, venue, iso(NOW_MS + 10 * DAY_S * 1000 + i * 3_600_000)));
  }
  await c.records(records);
}

/** Suite hooks: seed the events once at NOW, and put the clock back to NOW before each test. */
export function seededAtNow(use: () => Client): void {
  beforeAll(async () => {
    await use().setClock(NOW);
    await seedEvents(use());
  });
  beforeEach(async () => use().setClock(NOW));
}

export interface Listed {
  res: Response;
  status: number;
  body: any;
  header(name: string): string | null;
}

export async function list(c: Client, key: string | undefined, qs = ""): Promise<Listed> {
  const res = await c.get(`/v1/events${qs}`, key);
  const body = await res.json();
  return { res, status: res.status, body, header: (n) => res.headers.get(n) };
}

/** docs/api.md's error envelope with requestId equal to x-request-id; returns the code. */
export function errorCode(r: Listed): string {
  expect(r.body.error.requestId).toBe(r.header("x-request-id"));
  expect(typeof r.body.error.message).toBe("string");
  return r.body.error.code;
}

export async function expectError(r: Listed | Promise<Listed>, status: number, code: string): Promise<Listed> {
  const got = await r;
  expect({ status: got.status, code: got.body?.error ? errorCode(got) : got.body }).toEqual({ status, code });
  return got;
}

export async function expectRows(r: Listed | Promise<Listed>, count: number): Promise<Listed> {
  const got = await r;
  expect({ status: got.status, count: got.body?.page?.count ?? got.body }).toEqual({ status: 200, count });
  return got;
}

/** Opens the target's ledger file directly (both targets keep it in `dir`). */
export function openTargetLedger(c: Client): Database.Database {
  const db = new Database(join(c.target.dir, "marquee.ledger.db"));
  db.pragma("busy_timeout = 5000");
  return db;
}

/** Runs `fn` against the target's ledger and closes it. */
export function withTargetLedger<T>(c: Client, fn: (db: Database.Database) => T): T {
  const db = openTargetLedger(c);
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/** Runs `fn` on the target's shared ledger from this process (a target on a Redis ledger). */
async function withSharedLedger<T>(url: string, fn: (ledger: Ledger) => Promise<T>): Promise<T> {
  const ledger = await openRedisLedger(url);
  try {
    return await fn(ledger);
  } finally {
    await ledger.close();
  }
}

/** Revokes every key of the account from another process, as the CLI would. */
export async function revokeKeysElsewhere(c: Client, accountId: number): Promise<void> {
  const url = c.target.ledgerUrl;
  if (url) {
    await withSharedLedger(url, async (ledger) => {
      for (const k of await ledger.listKeys(accountId)) await ledger.revokeKey(k.id, 1);
    });
    return;
  }
  withTargetLedger(c, (db) => db.prepare("UPDATE api_keys SET revoked_ms = 1 WHERE account_id = ?").run(accountId));
}

/** The trial's rows as the ledger holds them, once the server's counters reached it (server/limits/meter.ts). */
export async function trialRowsUsed(c: Client, accountId: number): Promise<number | undefined> {
  const url = c.target.ledgerUrl;
  // On a shared ledger every count is written before the page is answered.
  if (url) return withSharedLedger(url, async (ledger) => (await ledger.readTrial(accountId))?.rowsUsed);
  await new Promise((resolve) => setTimeout(resolve, HOT_PATH.meterFlushMs + 60));
  return withTargetLedger(
    c,
    (db) => (db.prepare("SELECT rows_used AS n FROM trials WHERE account_id = ?").get(accountId) as any)?.n,
  );
}
