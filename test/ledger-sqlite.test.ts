/**
 * The ledger contract (test/ledger-contract.ts) against the SQLite ledger, and what only the
 * SQLite file shows: changes made through another connection (the CLI's) reach `onAccessChange`,
 * and each write keeps its durability (docs/architecture.md, "The ledger and the meter").
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HANDOFF } from "../db/contract.ts";
import { createClock } from "../server/clock.ts";
import { createFaults } from "../server/faults.ts";
import { digestKey, issueKey } from "../server/keys.ts";
import { openSqliteLedger, type SqliteLedger } from "../server/ledger/sqlite.ts";
import { ledgerContract } from "./ledger-contract.ts";

async function openTemp(): Promise<{ ledger: SqliteLedger; dir: string; path: string; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "marquee-ledger-sqlite-"));
  const path = join(dir, "marquee.ledger.db");
  const ledger = await openSqliteLedger(path, createClock(), createFaults());
  return {
    ledger,
    dir,
    path,
    async close() {
      await ledger.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

ledgerContract("sqlite", openTemp);

describe("SQLite ledger", () => {
  let opened: Awaited<ReturnType<typeof openTemp>>;
  beforeEach(async () => {
    opened = await openTemp();
  });
  afterEach(async () => {
    await opened.close();
  });

  it("is the sqlite kind", () => expect(opened.ledger.kind).toBe("sqlite"));

  it("hears of a key revoked through another connection (the CLI's) within a second", async () => {
    const { ledger, path } = opened;
    const account = await ledger.createAccount({ email: "cli@example.com" }, Date.now());
    const { id, key } = await issueKey(ledger, account.id, "live", Date.now());
    let called = false;
    const unsubscribe = ledger.onAccessChange(() => {
      called = true;
    });
    const cli = await openSqliteLedger(path, createClock(), createFaults());
    try {
      expect(await cli.revokeKey(id, Date.now())).toBe(true);
      const deadline = Date.now() + 1000;
      while (!called && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(called).toBe(true);
      expect((await ledger.findKeyByDigest(digestKey(key)))?.revokedMs).not.toBeNull();
    } finally {
      unsubscribe();
      await cli.close();
    }
  });

  it("stores handoffs without an fsync and keeps the connection fully synchronous for everything else", async () => {
    const { ledger } = opened;
    const FULL = 2;
    expect(Number(ledger.db.pragma("synchronous"))).toBe(FULL);
    const account = await ledger.createAccount({ email: "h@example.com" }, Date.now());
    expect(await ledger.admitHandoffAttempt(account.id, Date.now())).toBe(true);
    await ledger.insertHandoff({
      id: "ho_durability",
      accountId: account.id,
      keyId: 1,
      eventId: 1,
      seller: "ticketmaster",
      sellerUrl: "https://www.ticketmaster.com/x",
      createdMs: Date.now(),
      expiresMs: Date.now() + HANDOFF.lifetimeMs,
    });
    expect(Number(ledger.db.pragma("synchronous"))).toBe(FULL);
  });

  it("the test state is this process's clock and faults", async () => {
    const clock = createClock();
    const faults = createFaults();
    const ledger = await openSqliteLedger(join(opened.dir, "other.ledger.db"), clock, faults);
    try {
      await ledger.test.writeClock(Date.UTC(2031, 0, 1));
      expect(clock.frozen).toBe(true);
      expect(clock.now()).toBe(Date.UTC(2031, 0, 1));
      await ledger.test.writeClock(null);
      expect(clock.frozen).toBe(false);
      faults.arm({ code: "handoff_unavailable", times: 1, keyId: null, path: null, delayMs: null });
      const request = { path: "/v1/ticket-handoffs", keyId: 1, codes: ["handoff_unavailable" as const] };
      expect((await ledger.test.takeFault(request)).fault).toMatchObject({ code: "handoff_unavailable" });
      expect(faults.pending()).toEqual([]);
    } finally {
      await ledger.close();
    }
  });

  it("reset forgets the meter's counters not yet written", async () => {
    const { ledger } = opened;
    const account = await ledger.createAccount({ email: "t@example.com" }, Date.now());
    ledger.meter.startTrial(account.id, Date.now());
    ledger.meter.record(account.id, 5, Date.now());
    expect(await ledger.readTrial(account.id)).toBeDefined();
    await ledger.reset();
    expect(await ledger.readTrial(account.id)).toBeUndefined();
    expect(await ledger.rowsDelivered(account.id, 86_400_000, Date.now())).toBe(0);
  });
});
