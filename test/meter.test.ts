/**
 * The request path's counters in memory, written to the ledger behind the requests
 * (server/limits/meter.ts): what reaches the ledger, when, and what a restarted process resumes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAccount } from "../db/accounts.ts";
import { ACCESS, DAY_MS, TRIAL } from "../db/contract.ts";
import type { Db } from "../db/driver.ts";
import { openLedger } from "../db/ledger.ts";
import { readTrial } from "../db/trials.ts";
import { HOT_PATH } from "../db/tuning.ts";
import { createMeter, type Meter } from "../server/limits/meter.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const WINDOW = ACCESS.rowBudgetWindowMs;
const BUCKET = { bucket: "key:1", capacity: 60, refillPerSecond: 1 };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("meter", () => {
  let dir: string;
  let ledger: Db;
  let meter: Meter;
  let account: number;
  const path = () => join(dir, "marquee.ledger.db");
  const usageRows = () =>
    ledger
      .prepare<{ total: number; at: number }>(
        "SELECT total_rows AS total, at_ms AS at FROM row_usage ORDER BY total_rows",
      )
      .all();

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "marquee-meter-"));
    ledger = await openLedger(path());
    account = createAccount(ledger, { email: "m@example.com", plan: "basic" }, NOW);
    meter = createMeter(ledger);
  });
  afterEach(() => {
    meter.close();
    ledger.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("writes a group of changes after the flush delay, one usage row per delivery millisecond", async () => {
    meter.admit(account, BUCKET, 1, null, true, NOW);
    meter.record(account, 25, NOW);
    meter.record(account, 10, NOW + 5);
    meter.record(account, 1, NOW + 5);
    expect(usageRows()).toEqual([]);
    await sleep(HOT_PATH.meterFlushMs + 50);
    expect(usageRows()).toEqual([
      { total: 25, at: NOW },
      { total: 36, at: NOW + 5 },
    ]);
    expect(ledger.prepare("SELECT tokens FROM rate_buckets WHERE bucket = 'key:1'").get()).toEqual({ tokens: 59 });
  });

  it("resumes buckets, usage and trials in a new process", async () => {
    for (let i = 0; i < 10; i++) meter.admit(account, BUCKET, 5, null, true, NOW);
    meter.record(account, 400, NOW);
    meter.startTrial(account, NOW);
    meter.addTrialRows(account, TRIAL.rows, NOW + 1);
    meter.close();

    const next = createMeter(ledger);
    expect(next.admit(account, BUCKET, 5, null, true, NOW).verdict.admitted).toBe(true); // 10 tokens were left
    expect(next.admit(account, BUCKET, 5, null, true, NOW).verdict.admitted).toBe(true);
    expect(next.admit(account, BUCKET, 5, null, true, NOW).verdict.admitted).toBe(false);
    expect(next.rowsDelivered(account, WINDOW, NOW + 1)).toBe(400);
    expect(next.rowsDelivered(account, WINDOW, NOW + WINDOW)).toBe(0);
    expect(next.readTrial(account)).toEqual({
      accountId: account,
      startedMs: NOW,
      rowsUsed: TRIAL.rows,
      exhaustedMs: NOW + 1,
    });
    next.close();
  });

  it("keeps an exact rolling window in memory and answers when enough rows age out", () => {
    meter.record(account, 100, NOW);
    meter.record(account, 50, NOW + 1000);
    expect(meter.rowsDelivered(account, WINDOW, NOW + 1000)).toBe(150);
    expect(meter.rowsDelivered(account, WINDOW, NOW + WINDOW - 1)).toBe(150);
    expect(meter.rowsDelivered(account, WINDOW, NOW + WINDOW)).toBe(50);
    expect(meter.reserve(account, { kind: "budget", limit: 120 }, 1, NOW + 1000).msUntilBelow).toBe(WINDOW - 1000);
    meter.record(account, 5, NOW + 2 * DAY_MS);
    expect(meter.rowsDelivered(account, WINDOW, NOW + 2 * DAY_MS)).toBe(5);
  });

  it("forgets ledger rows that can no longer fall in a window, about once a minute", () => {
    meter.record(account, 1, NOW);
    meter.flush();
    meter.record(account, 2, NOW + 1000);
    meter.flush();
    const later = NOW + WINDOW + HOT_PATH.meterPruneMs + 1000;
    meter.record(account, 4, later);
    meter.flush();
    // The last row at or before the window's start (total 3) stays as the baseline.
    expect(usageRows().map((r) => r.total)).toEqual([3, 7]);
    expect(createMeter(ledger).rowsDelivered(account, WINDOW, later)).toBe(4);
  });

  it("counts what was delivered before the account's log was first needed", () => {
    meter.record(account, 30, NOW); // unmetered so far: no log in memory
    expect(meter.rowsDelivered(account, WINDOW, NOW + 1)).toBe(30);
  });

  it("flush() writes the trial's rows at once", () => {
    meter.startTrial(account, NOW);
    meter.addTrialRows(account, 7, NOW);
    expect(readTrial(ledger, account)).toBeUndefined();
    meter.flush();
    expect(readTrial(ledger, account)?.rowsUsed).toBe(7);
  });

  it("keeps changes while the ledger is locked, refuses once they are too old, and writes them later", async () => {
    const other = await openLedger(path());
    // The serving connection's own timeout is long; the meter's groups wait only briefly.
    other.exec(`PRAGMA busy_timeout = ${ACCESS.ledgerBusyTimeoutMs}`);
    const busy = createMeter(other);
    const holder = await openLedger(path());
    holder.exec("BEGIN IMMEDIATE");
    const fail = () => new Error("unavailable");
    try {
      busy.record(account, 3, NOW);
      expect(() => busy.flush()).toThrow(); // the lock is held
      expect(Number(other.pragma("busy_timeout"))).toBe(ACCESS.ledgerBusyTimeoutMs); // restored
      busy.assertWritable(fail); // still young: no refusal
      await sleep(ACCESS.ledgerBusyTimeoutMs + 50);
      expect(() => busy.assertWritable(fail)).toThrow("unavailable");
    } finally {
      holder.exec("ROLLBACK");
      holder.close();
    }
    busy.assertWritable(fail); // writes what waited, so no refusal
    expect(usageRows()).toEqual([{ total: 3, at: NOW }]);
    busy.close();
    other.close();
  });

  it("clear() forgets pending changes and reservations", () => {
    meter.record(account, 3, NOW);
    meter.reserve(account, { kind: "trial" }, 10, NOW);
    meter.clear();
    meter.flush();
    expect(usageRows()).toEqual([]);
    expect(meter.reservedRows(account, "trial", NOW)).toBe(0);
  });
});
