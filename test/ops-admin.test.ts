/**
 * The operator's administration commands (docs/operations.md, Accounts and keys), as the real CLI
 * on Bun beside a real server: accounts list and show (what a list request gets, the trial's
 * rows left, rows used in 24 hours), one account per email unless allowed, key labels, keys of
 * every account, keys find; then `ledger copy` into a real redis-server, after which a server on
 * `--ledger redis://…` honours the same keys, continues the same trial and the same usage, and
 * redeems a handoff made before the move exactly once.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBunServer, type Target } from "./harness.ts";
import { marquee, ok, stopKeepingFiles, waitFor } from "./ops-cli.ts";
import { eventRecord, venueRecord } from "./records.ts";
import { type RedisServer, startRedisServer } from "./redis-server.ts";

// On the wall clock: `accounts show` counts the last 24 hours of the real now.
const TODAY = new Date().toISOString().slice(0, 10);
const DAY_MS = 86_400_000;
const PAGE = "/v1/events?limit=25";
const HANDOFF_VENUE = 990_001;
const HANDOFF_EVENT = 99_000_001;

let dir: string;
let db: string;
let redis: RedisServer;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "marquee-admin-"));
  db = join(dir, "data", "marquee.db");
  redis = await startRedisServer();
  const records = join(dir, "demo.ndjson");
  const demo = JSON.parse(
    ok(marquee(["demo-data", "--events", "3000", "--seed", "admin", "--anchor", TODAY, "--out", records, "--json"])),
  );
  ok(marquee(["sync", "--from", records, "--db", db]));
  // One event a handoff can send to a supported seller.
  const venue = { ...venueRecord(HANDOFF_VENUE), seq: demo.lastSeq + 1 };
  const event = {
    ...eventRecord(HANDOFF_EVENT, HANDOFF_VENUE, new Date(Date.now() + 4 * DAY_MS).toISOString()),
    seq: demo.lastSeq + 2,
  };
  const extra = join(dir, "extra.ndjson");
  writeFileSync(extra, `${JSON.stringify(venue)}\n${JSON.stringify(event)}\n`);
  ok(marquee(["sync", "--from", extra, "--db", db]));
}, 60_000);
afterAll(async () => {
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const cli = (...args: string[]) => marquee([...args, "--db", db]);
const json = (...args: string[]) => JSON.parse(ok(cli(...args, "--json")));
const get = (t: Target, path: string, key: string) => t.fetch(path, { headers: { authorization: `Bearer ${key}` } });

describe("accounts and keys", () => {
  it("lists accounts by email and plan, refuses a second account for an email unless allowed", () => {
    const first = json("accounts", "create", "--email", "Dup@Example.com", "--plan", "basic");
    const refused = cli("accounts", "create", "--email", "dup@example.com");
    expect(refused.status).toBe(1);
    expect(refused.stderr).toBe(
      `marquee accounts: an account with email dup@example.com exists already (account ${first.id}); ` +
        `see it with marquee accounts show ${first.id}, or pass --allow-duplicate-email to create another`,
    );
    const second = json("accounts", "create", "--email", "dup@example.com", "--allow-duplicate-email");
    expect(json("accounts", "list", "--email", "DUP@example.com").map((a: { id: number }) => a.id)).toEqual([
      first.id,
      second.id,
    ]);
    expect(json("accounts", "list", "--plan", "basic").map((a: { id: number }) => a.id)).toEqual([first.id]);
    const table = ok(cli("accounts", "list"));
    expect(table.split("\n")[0]).toMatch(/^id\s+plan\s+policy\s+verified\s+created\s+email$/);
    expect(table).toContain("dup@example.com");
    expect(cli("accounts", "list", "--plan", "gold")).toMatchObject({ status: 2 });
  });

  it("labels keys, lists every account's keys, finds keys by prefix or whole key, never printing one", () => {
    const a = json("accounts", "create", "--email", "keys-a@example.com", "--plan", "business");
    const b = json("accounts", "create", "--email", "keys-b@example.com", "--plan", "business");
    const ka = json("keys", "create", "--account", String(a.id), "--label", "ci runner");
    const kb = json("keys", "create", "--account", String(b.id));
    expect(ka.label).toBe("ci runner");
    expect(cli("keys", "create", "--account", String(a.id), "--label", "x".repeat(200))).toMatchObject({ status: 2 });

    const all = json("keys", "list");
    expect(all.map((k: { id: number }) => k.id)).toEqual(expect.arrayContaining([ka.id, kb.id]));
    expect(all.find((k: { id: number }) => k.id === ka.id)).toMatchObject({ accountId: a.id, label: "ci runner" });
    const table = ok(cli("keys", "list"));
    expect(table).toContain('"ci runner"');
    expect(table).not.toContain(ka.key);

    expect(json("keys", "find", ka.prefix).map((k: { id: number }) => k.id)).toEqual([ka.id]);
    // A longer part of the key than its display prefix, and the whole key (looked up by digest).
    expect(json("keys", "find", ka.key.slice(0, 20)).map((k: { id: number }) => k.id)).toEqual([ka.id]);
    const whole = cli("keys", "find", kb.key);
    expect(whole.status).toBe(0);
    expect(whole.stdout).toContain(`${kb.prefix}…`);
    expect(whole.stdout + whole.stderr).not.toContain(kb.key);
    expect(cli("keys", "find", "mq_live_zzzzzzzz")).toMatchObject({
      status: 1,
      stdout: "no key matches mq_live_zzzzzzzz",
    });
  });
});

describe("accounts show beside a running server, then ledger copy to Redis", () => {
  it("reports trials, usage and access; a Redis ledger copied from it carries every key on", async () => {
    const trial = json("accounts", "create", "--email", "trial@example.com");
    const unverified = json("accounts", "create", "--email", "new@example.com", "--unverified");
    const paid = json("accounts", "create", "--email", "paid@example.com", "--plan", "business");
    const trialKey = json("keys", "create", "--account", String(trial.id)).key;
    const paidKey = json("keys", "create", "--account", String(paid.id)).key;
    const builderKey = json("keys", "create", "--account", String(paid.id), "--kind", "builder").key;
    const revoked = json("keys", "create", "--account", String(paid.id));
    ok(cli("keys", "revoke", String(revoked.id)));

    const dataDir = join(dir, "data");
    const sqlite = await startBunServer([], dataDir);
    let shared: Target | undefined;
    try {
      expect((await get(sqlite, PAGE, trialKey)).headers.get("x-trial-rowbudget-remaining")).toBe("975");
      for (let i = 0; i < 3; i++) expect((await get(sqlite, PAGE, paidKey)).status).toBe(200);
      const handoff = async (t: Target) =>
        (
          await t.fetch("/v1/ticket-handoffs", {
            method: "POST",
            headers: { authorization: `Bearer ${builderKey}`, "content-type": "application/json" },
            body: JSON.stringify({ event_id: HANDOFF_EVENT }),
          })
        ).json();
      const open = await handoff(sqlite);
      const used = await handoff(sqlite);
      expect(open).toMatchObject({ handoff_id: expect.stringMatching(/^ho_/) });
      expect((await sqlite.fetch(`/handoffs/${used.handoff_id}/continue`, { method: "POST" })).status).toBe(303);

      // The server writes usage behind the requests: the CLI sees it within moments.
      await waitFor(
        "the trial's rows in the ledger",
        () => json("accounts", "show", String(trial.id)).trial.rowsUsed === 25,
      );
      const trialShown = json("accounts", "show", String(trial.id));
      expect(trialShown).toMatchObject({
        access: { allowed: true, tier: "trial" },
        trial: { state: "active", rowsUsed: 25, rowsLeft: 975 },
      });
      const { startedAt, expiresAt } = trialShown.trial;
      expect(Date.parse(expiresAt) - Date.parse(startedAt)).toBe(7 * DAY_MS);
      expect(ok(cli("accounts", "show", String(trial.id)))).toContain(
        `active: 975 of 1,000 rows left, until ${expiresAt}`,
      );
      await waitFor("the paid account's rows", () => json("accounts", "show", String(paid.id)).rowsUsed24h === 75);
      const paidShown = json("accounts", "show", String(paid.id));
      expect(paidShown).toMatchObject({ rowBudget: 500_000, rate: { perMinute: 60, burst: 60, scope: "key" } });
      expect(paidShown.keys.map((k: { revokedAt: string | null }) => k.revokedAt !== null)).toEqual([
        false,
        false,
        true,
      ]);
      expect(json("accounts", "show", String(unverified.id))).toMatchObject({
        access: { allowed: false, status: 403, code: "email_verification_required" },
        trial: { state: "not started" },
      });
      expect(cli("accounts", "show", "999")).toMatchObject({ status: 1, stderr: "marquee accounts: no account 999" });

      // The copy needs the SQLite ledger to itself.
      const busy = cli("ledger", "copy", "--to", redis.url);
      expect(busy.status).toBe(1);
      expect(busy.stderr).toMatch(/another marquee serve is using the ledger .*: stop it first/);
      await stopKeepingFiles(sqlite);

      const copied = json("ledger", "copy", "--to", redis.url);
      expect(copied).toMatchObject({ accounts: expect.any(Number), handoffs: 2, clicks: 1 });
      expect(copied.keys).toBeGreaterThanOrEqual(4);
      const again = cli("ledger", "copy", "--to", redis.url);
      expect(again.status).toBe(1);
      expect(again.stderr).toMatch(/is not empty \(\d+ keys under marquee:\*\); copy into an empty one/);

      shared = await startBunServer(["--ledger", redis.url], dataDir);
      expect((await get(shared, PAGE, paidKey)).status).toBe(200);
      expect((await get(shared, PAGE, revoked.key)).status).toBe(401);
      // The trial goes on where it was.
      expect((await get(shared, PAGE, trialKey)).headers.get("x-trial-rowbudget-remaining")).toBe("950");
      const onRedis = (id: number) =>
        JSON.parse(ok(marquee(["accounts", "show", String(id), "--ledger", redis.url, "--json"])));
      expect(onRedis(trial.id).trial).toMatchObject({ rowsUsed: 50, rowsLeft: 950 });
      await waitFor(
        "the paid account's rows on Redis",
        () => onRedis(paid.id).rowsUsed24h >= paidShown.rowsUsed24h + 25,
      );
      // Handoffs: the open one redeems once, the used one stays used.
      expect((await shared.fetch(`/handoffs/${open.handoff_id}/continue`, { method: "POST" })).status).toBe(303);
      expect((await shared.fetch(`/handoffs/${open.handoff_id}/continue`, { method: "POST" })).status).toBe(409);
      expect((await shared.fetch(`/handoffs/${used.handoff_id}/continue`, { method: "POST" })).status).toBe(409);
      // New ids continue after the copied ones.
      const next = JSON.parse(
        ok(marquee(["accounts", "create", "--email", "after@example.com", "--ledger", redis.url, "--json"])),
      );
      expect(next.id).toBeGreaterThan(paid.id);
    } finally {
      await stopKeepingFiles(sqlite);
      await shared?.close();
    }
  }, 120_000);
});

describe("a Redis ledger a newer Marquee wrote", () => {
  it("is refused with one line naming both versions; a new one is marked with this build's", () => {
    const newer = `${redis.url}/5`;
    redis.cli("-n", "5", "SET", "marquee:settings:schema-version", "99");
    const r = marquee(["accounts", "list", "--ledger", newer]);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(
      `marquee accounts: the Redis ledger at ${newer} has schema version 99, written by a newer Marquee; this one knows up to version 1: run the newer Marquee`,
    );
    ok(marquee(["accounts", "list", "--ledger", `${redis.url}/6`]));
    expect(redis.cli("-n", "6", "GET", "marquee:settings:schema-version").trim()).toBe("1");
  });
});
