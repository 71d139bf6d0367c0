/**
 * The bench's Redis-ledger pieces against real parts: accounts created through the ledger seam in
 * a real redis-server (the same plans as in the SQLite ledger), CPU time read from /proc for a
 * process group, and the cores projection in RESULTS.md's Redis table.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { digestKey } from "../server/keys.ts";
import { openRedisLedger, type RedisLedger } from "../server/ledger/redis.ts";
import { UNLIMITED_RATE } from "./bench/lib/config.ts";
import { groupCpuS, processCpuS } from "./bench/lib/cpu.ts";
import { cleanRunDir, createLedgerKeys } from "./bench/lib/fixture.ts";
import { projectedRps } from "./bench/lib/report.ts";
import { type RedisServer, startRedisServer } from "./redis-server.ts";

let redis: RedisServer;
let ledger: RedisLedger;

beforeAll(async () => {
  redis = await startRedisServer();
  ledger = await openRedisLedger(redis.url);
});

afterAll(async () => {
  await ledger.close();
  await redis.stop();
  cleanRunDir();
});

describe("bench accounts on the Redis ledger", () => {
  it("creates one account and live key per line of the key file, with the bench's plans", async () => {
    const trial = await createLedgerKeys(ledger, "trial", 300, "test");
    const bench = await createLedgerKeys(ledger, "bench", 2, "test-main");
    expect(readFileSync(trial.file, "utf8").trim().split("\n")).toEqual(trial.keys);
    expect(new Set(trial.keys).size).toBe(300);
    const accounts = new Set<number>();
    for (const key of [...trial.keys.slice(0, 20), trial.keys[299]]) {
      const row = await ledger.findKeyByDigest(digestKey(key));
      expect(row?.kind).toBe("live");
      const account = await ledger.readAccount(row!.accountId);
      expect(account).toMatchObject({ plan: "none", verified: true, hadSubscription: false });
      accounts.add(row!.accountId);
    }
    expect(accounts.size).toBe(21);
    const row = await ledger.findKeyByDigest(digestKey(bench.keys[1]));
    expect(await ledger.readAccount(row!.accountId)).toMatchObject({
      plan: "enterprise",
      rowBudget: null,
      rateSustained: UNLIMITED_RATE,
      rateBurst: UNLIMITED_RATE,
    });
    expect(await ledger.countAccounts()).toBe(302);
  });
});

describe("CPU time from /proc", () => {
  it("grows by about the CPU a busy process group used, and not for an idle one", async () => {
    const busy = spawn(process.execPath, ["-e", "const end = Date.now() + 700; while (Date.now() < end);"], {
      detached: true,
      stdio: "ignore",
    });
    const idle = spawn("sleep", ["2"], { detached: true, stdio: "ignore" });
    await new Promise((r) => setTimeout(r, 150));
    const before = groupCpuS(busy.pid!);
    const idleBefore = processCpuS(idle.pid!);
    await new Promise((r) => setTimeout(r, 400));
    const after = groupCpuS(busy.pid!);
    expect(after - before).toBeGreaterThan(0.15);
    expect(after - before).toBeLessThan(0.5);
    expect(processCpuS(idle.pid!) - idleBefore).toBeLessThan(0.05);
    busy.kill("SIGKILL");
    idle.kill("SIGKILL");
    expect(Number.isNaN(groupCpuS(2 ** 22 + 7))).toBe(true);
  });
});

describe("what N cores would serve", () => {
  it("is cores over the CPU per request, and never above one core of Redis", () => {
    expect(projectedRps(2, { marqueeUs: 400, redisUs: 100 })).toBe(4_000);
    expect(projectedRps(8, { marqueeUs: 400, redisUs: 100 })).toBe(10_000); // 16,000 by cores; Redis caps
    expect(projectedRps(4, { marqueeUs: 50 })).toBe(80_000);
  });
});
