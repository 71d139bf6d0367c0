/**
 * The benchmark's data: the 1,000,000-event demo replica (built once into .bench/ and reused),
 * a fresh ledger per run, and the accounts the load uses, created directly in the ledger with
 * db/accounts.ts and server/keys.ts (or, for Marquee on the Redis ledger, through the ledger
 * seam: server/ledger/ledger.ts). Keys go only into files under .bench/run for wrk, and those
 * files are deleted when the run ends.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type AccountFields, createAccount, insertKey } from "../../../db/accounts.ts";
import { DAY_MS, type KeyKind } from "../../../db/contract.ts";
import type { Db } from "../../../db/driver.ts";
import { ledgerPathFor, openLedger } from "../../../db/ledger.ts";
import { openReplica, REPLICA_PAGE_BYTES, readReplicaStats } from "../../../db/replica.ts";
import { issueKey, newKey } from "../../../server/keys.ts";
import type { Ledger } from "../../../server/ledger/ledger.ts";
import { BUN, CACHE, DATA, UNLIMITED_RATE } from "./config.ts";
import { runOk } from "./proc.ts";

export const REPLICA_DIR = join(CACHE, "replica");
export const REPLICA_DB = join(REPLICA_DIR, "marquee.db");
export const DEMO_NDJSON = join(CACHE, `demo-${DATA.events}-seed${DATA.seed}.ndjson`);
export const RUN_DIR = join(CACHE, "run");
const MARKER = join(REPLICA_DIR, "built.json");
/**
 * Demo dates are relative to an anchor day, and most events fall in the weeks after it. The
 * replica is built anchored on the day of the build and rebuilt once the anchor is this old, so
 * the default window (now + 90 days) always sees the dense part of the data.
 */
const MAX_ANCHOR_AGE_DAYS = 14;

export interface ReplicaInfo {
  events: number;
  snapshotEvents: number;
  venues: number;
  watermark: number;
  /** The demo data's anchor day (YYYY-MM-DD). */
  anchor: string;
  builtAt: string;
  /** Seconds the original 1M-record sync took (from the build, for the record). */
  buildSyncS: number;
  reused: boolean;
}

const marquee = (...args: string[]) => runOk(BUN, ["server/main.ts", ...args]);

/**
 * Builds the demo NDJSON and the replica unless a complete build is cached (or `rebuild`). A run
 * that syncs nothing (`needsStream` false) takes a cached replica without its NDJSON.
 */
export async function ensureReplica(
  rebuild: boolean,
  log: (s: string) => void,
  needsStream = true,
): Promise<ReplicaInfo> {
  mkdirSync(CACHE, { recursive: true });
  const today = new Date().toISOString().slice(0, 10);
  const marker = existsSync(MARKER) ? (JSON.parse(readFileSync(MARKER, "utf8")) as { anchor?: string }) : undefined;
  const anchorAgeDays = marker?.anchor ? (Date.parse(today) - Date.parse(marker.anchor)) / DAY_MS : Infinity;
  if (
    !rebuild &&
    marker &&
    existsSync(REPLICA_DB) &&
    (!needsStream || existsSync(DEMO_NDJSON)) &&
    anchorAgeDays <= MAX_ANCHOR_AGE_DAYS
  ) {
    // A replica from before a change of page size would measure the old layout: build it again.
    const pageBytes = await replicaPageBytes();
    if (pageBytes === REPLICA_PAGE_BYTES) {
      const stats = await replicaStats(); // opens it read-write: a replica from an older schema migrates here
      flushToDisk(REPLICA_DB); // so a migration's writes (replica v7 rebuilt four indexes) reach disk before measuring
      return { ...(marker as Omit<ReplicaInfo, "reused">), ...stats, reused: true };
    }
    log(`the cached replica has ${pageBytes}-byte pages, a new one ${REPLICA_PAGE_BYTES}: building it again`);
  }
  log(`generating ${DATA.events.toLocaleString("en-US")} demo events anchored on ${today} into ${DEMO_NDJSON} …`);
  await marquee(
    "demo-data",
    "--events",
    String(DATA.events),
    "--seed",
    String(DATA.seed),
    "--anchor",
    today,
    "--out",
    DEMO_NDJSON,
  );
  rmSync(REPLICA_DIR, { recursive: true, force: true });
  mkdirSync(REPLICA_DIR, { recursive: true });
  log(`syncing it into ${REPLICA_DB} …`);
  const sync = await marquee("sync", "--from", DEMO_NDJSON, "--db", REPLICA_DB);
  // The files just written (~1.3 GB) would otherwise go to disk in the background, in the first
  // measurements (a run that built its replica measured the default page's p99 at 23.7 ms, the
  // ceiling's at 16.4 ms, against 5-8 ms in runs on a cached replica).
  for (const path of [DEMO_NDJSON, REPLICA_DB]) flushToDisk(path);
  const built = { anchor: today, builtAt: new Date().toISOString(), buildSyncS: Math.round(sync.ms / 100) / 10 };
  writeFileSync(MARKER, JSON.stringify(built, null, 2));
  return { ...built, ...(await replicaStats()), reused: false };
}

function flushToDisk(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

async function replicaPageBytes(): Promise<number> {
  const db = await openReplica(REPLICA_DB, { readonly: true });
  try {
    return Number(db.pragma("page_size"));
  } finally {
    db.close();
  }
}

async function replicaStats() {
  const db = await openReplica(REPLICA_DB);
  try {
    const s = readReplicaStats(db);
    return { events: s.events, snapshotEvents: s.snapshotEvents, venues: s.venues, watermark: s.watermark };
  } finally {
    db.close();
  }
}

/** Removes the ledger beside the replica so each run starts from an empty one (usage, trials). */
export function resetLedger(): void {
  const ledger = ledgerPathFor(REPLICA_DB);
  for (const suffix of ["", "-wal", "-shm"]) rmSync(ledger + suffix, { force: true });
}

export async function openBenchLedger(): Promise<Db> {
  return openLedger(ledgerPathFor(REPLICA_DB));
}

/** A key stored straight into an open ledger file, inside the caller's transaction (bulk set-up). */
export function issueKeyOn(ledger: Db, accountId: number, kind: KeyKind, nowMs: number): string {
  const { key, stored } = newKey(accountId, kind);
  insertKey(ledger, accountId, kind, stored.digest, stored.prefix, nowMs);
  return key;
}

export type AccountKind = "bench" | "trial" | "handoff";

/**
 * What an account of each kind is. bench: enterprise, no row budget, rate limits lifted. trial:
 * verified, no plan, never subscribed (trial-eligible). handoff: enterprise with rate lifted,
 * live key (handoffs are limited per account regardless of plan).
 */
function accountFields(kind: AccountKind, email: string): Partial<AccountFields> {
  return kind === "trial"
    ? { email, plan: "none", verified: true, hadSubscription: false }
    : { email, plan: "enterprise", rowBudget: null, rateSustained: UNLIMITED_RATE, rateBurst: UNLIMITED_RATE };
}

function writeKeyFile(kind: AccountKind, label: string, keys: string[]): string {
  mkdirSync(RUN_DIR, { recursive: true });
  const file = join(RUN_DIR, `${kind}-${label}.keys`);
  writeFileSync(file, `${keys.join("\n")}\n`, { mode: 0o600 });
  return file;
}

/** Creates `count` accounts with one key each and writes the keys to a file (for wrk rotation). */
export function createKeys(
  ledger: Db,
  kind: AccountKind,
  count: number,
  label: string,
): { keys: string[]; file: string } {
  const now = Date.now();
  const keys = ledger.transaction(() => {
    const out: string[] = [];
    for (let i = 0; i < count; i++) {
      const id = createAccount(ledger, accountFields(kind, `${kind}-${label}-${i}@bench.example`), now);
      out.push(issueKeyOn(ledger, id, "live", now));
    }
    return out;
  });
  return { keys, file: writeKeyFile(kind, label, keys) };
}

/** The same accounts in a shared ledger (server/ledger/ledger.ts), as `marquee accounts`/`keys` would create them. */
export async function createLedgerKeys(
  ledger: Ledger,
  kind: AccountKind,
  count: number,
  label: string,
): Promise<{ keys: string[]; file: string }> {
  const now = Date.now();
  const keys: string[] = new Array(count);
  // Many at once: the Redis connection pipelines them (server/ledger/redis-connection.ts).
  const batch = 250;
  for (let from = 0; from < count; from += batch) {
    const to = Math.min(count, from + batch);
    await Promise.all(
      Array.from({ length: to - from }, async (_, j) => {
        const i = from + j;
        const account = await ledger.createAccount(accountFields(kind, `${kind}-${label}-${i}@bench.example`), now);
        keys[i] = (await issueKey(ledger, account.id, "live", now)).key;
      }),
    );
  }
  return { keys, file: writeKeyFile(kind, label, keys) };
}

/**
 * Where a target's accounts live: the bench account's key, and fresh accounts for rotated
 * scenarios. Marquee on the SQLite ledger and Marquee on the Redis ledger each get their own.
 */
export interface Accounts {
  benchKey: string;
  create(kind: AccountKind, count: number, label: string): Promise<{ keys: string[]; file: string }>;
}

export function sqliteAccounts(ledger: Db, benchKey: string): Accounts {
  return { benchKey, create: async (kind, count, label) => createKeys(ledger, kind, count, label) };
}

export function ledgerAccounts(ledger: Ledger, benchKey: string): Accounts {
  return { benchKey, create: (kind, count, label) => createLedgerKeys(ledger, kind, count, label) };
}

/** Deletes this run's key files and captured bodies. */
export function cleanRunDir(): void {
  rmSync(RUN_DIR, { recursive: true, force: true });
}
