/**
 * One contract for the access stages over both counters (server/limits/counters.ts): every case
 * runs against an in-process server on the SQLite ledger (the process's meter) and against one on
 * a real redis-server (server/ledger/redis-counters.ts), with the same statuses, codes and headers
 * (docs/api.md, Plans and access, Trials, Row budgets, Headers, Ticket handoffs, Test mode).
 * The last cases drive the counters themselves, where HTTP cannot reach (reservations in flight,
 * a lapsed hold, a page counted with stage 3).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ACCESS, HANDOFF, TRIAL } from "../db/contract.ts";
import type { AccessStages } from "../server/access.ts";
import type { AppContext } from "../server/context.ts";
import type { Counters } from "../server/limits/counters.ts";
import {
  after as atSeconds,
  DAY_S,
  expectError,
  expectRows,
  list,
  NOW,
  NOW_MS,
  seedEvents,
} from "./access-fixtures.ts";
import { Client } from "./harness.ts";
import { type RedisServer, startRedisServer } from "./redis-server.ts";

const BASE_URL = "http://marquee.test";
const TRIAL_SPEC = { kind: "trial" } as const;
const bucket = (accountId: number) => ({ bucket: `account:${accountId}`, capacity: 60, refillPerSecond: 1 });

/** An in-process test-mode server on the SQLite ledger, or on a throwaway redis-server. */
async function startServer(ledger: "sqlite" | "redis") {
  const [{ createApp }, { createContext }, { resolveConfig }] = await Promise.all([
    import("../server/app.ts"),
    import("../server/context.ts"),
    import("../server/config.ts"),
  ]);
  const redis: RedisServer | null = ledger === "redis" ? await startRedisServer() : null;
  const dir = mkdtempSync(join(tmpdir(), "marquee-counters-"));
  const ctx = await createContext(
    resolveConfig({ dbPath: join(dir, "marquee.db"), testMode: true, baseUrl: BASE_URL, ledgerUrl: redis?.url }, {}),
  );
  const app = createApp(ctx);
  const client = new Client({
    kind: "in-process",
    baseUrl: BASE_URL,
    dir,
    fetch: async (path, init) => app.request(new URL(path, BASE_URL).href, init),
    async close() {
      await ctx.close();
      await redis?.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  });
  return { ctx, client };
}

function createHandoff(c: Client, key: string) {
  return c.fetch("/v1/ticket-handoffs", {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ event_id: 999 }),
  });
}

describe.each(["sqlite", "redis"] as const)("the access stages on the %s counters", (ledger) => {
  let c: Client;
  let ctx: AppContext;
  let counters: Counters;

  beforeAll(async () => {
    ({ ctx, client: c } = await startServer(ledger));
    counters = (ctx.access as AccessStages).counters;
    await c.setClock(NOW);
    await seedEvents(c);
  });
  afterAll(async () => c?.target.close());
  beforeEach(async () => c.setClock(NOW));

  it("refuses over the bucket with 429 rate_limited, Retry-After until the request fits, and spends nothing refused", async () => {
    // A negotiated bucket of 3 units refilled 6 a minute: one unit every 10 s.
    const key = await c.keyFor({ plan: "enterprise", rateBurst: 3, rateSustained: 6 });
    for (let left = 2; left >= 0; left--) {
      const r = await expectRows(list(c, key, "?limit=1"), 1);
      expect([r.header("x-ratelimit-limit"), r.header("x-ratelimit-remaining")]).toEqual(["3", String(left)]);
    }
    const refused = await expectError(list(c, key, "?limit=1"), 429, "rate_limited");
    expect(refused.header("retry-after")).toBe("10");
    expect(refused.header("x-ratelimit-limit")).toBe("3");
    expect(refused.header("x-ratelimit-remaining")).toBe("0");
    expect(refused.header("x-ratelimit-reset")).toBe(String(NOW_MS / 1000 + 30));
    await c.advance(10);
    // The refused request took nothing: exactly one unit has refilled.
    expect((await expectRows(list(c, key, "?limit=1"), 1)).header("x-ratelimit-remaining")).toBe("0");
    // A geo request (5 units) dearer than the whole bucket fits once it is full.
    await c.advance(30);
    await expectRows(list(c, key, "?lat=40.71&lng=-74.0&radius_miles=5&limit=1"), 1);
    await expectError(list(c, key, "?limit=1"), 429, "rate_limited");
  });

  it("clamps pages to the row budget, then 429 row_budget_exhausted until the rows age out", async () => {
    const key = await c.keyFor({ plan: "enterprise", rowBudget: 30 });
    const first = await expectRows(list(c, key, "?limit=25"), 25);
    expect([first.header("x-rowbudget-limit"), first.header("x-rowbudget-remaining")]).toEqual(["30", "5"]);
    const clamped = await expectRows(list(c, key, "?limit=25"), 5);
    expect(clamped.header("x-rowbudget-remaining")).toBe("0");
    await c.advance(60);
    const spent = await expectError(list(c, key, "?limit=1"), 429, "row_budget_exhausted");
    expect(spent.header("retry-after")).toBe(String(DAY_S - 60));
    expect([spent.header("x-rowbudget-limit"), spent.header("x-rowbudget-remaining")]).toEqual(["30", "0"]);
    expect(spent.header("x-ratelimit-remaining")).toBeNull();
    await c.setClock(atSeconds(DAY_S));
    expect((await expectRows(list(c, key, "?limit=25"), 25)).header("x-rowbudget-remaining")).toBe("5");
  });

  it("starts the trial with the first valid page, counts its rows and ends it at 1,000 rows or day 7", async () => {
    const unverified = await c.keyFor({ plan: "none", verified: false });
    await expectError(list(c, unverified), 403, "email_verification_required");
    const account = await c.account({ plan: "none" });
    const key = await c.key(account);
    // A rejected request starts nothing.
    const invalid = await expectError(list(c, key, "?limit=0"), 400, "invalid_limit");
    expect(invalid.header("x-trial-expires-at")).toBeNull();
    const first = await expectRows(list(c, key, "?limit=100"), TRIAL.maxRowsPerPage);
    expect(first.header("x-dataapi-access")).toBe("trial");
    expect(first.header("x-trial-rowbudget-limit")).toBe("1000");
    expect(first.header("x-trial-rowbudget-remaining")).toBe(String(TRIAL.rows - 25));
    expect(first.header("x-trial-expires-at")).toBe(atSeconds(TRIAL.days * DAY_S));
    // The invalid request was admitted by the limiter (stage 3 before validation) and kept its unit.
    expect(first.header("x-ratelimit-remaining")).toBe("58");
    // Day 7 ends it, whatever rows are left.
    await c.setClock(atSeconds(TRIAL.days * DAY_S));
    const expired = await expectError(list(c, key), 402, "trial_expired");
    expect(expired.header("x-ratelimit-limit")).toBe("60");
    expect(expired.header("x-trial-rowbudget-remaining")).toBe(String(TRIAL.rows - 25));

    await c.setClock(NOW);
    const rich = await c.keyFor({ plan: "none" });
    for (let page = 0; page < TRIAL.rows / 25; page++) await expectRows(list(c, rich, "?limit=25"), 25);
    const exhausted = await expectError(list(c, rich), 402, "trial_exhausted");
    expect(exhausted.header("x-trial-rowbudget-remaining")).toBe("0");
  });

  it("gives each page its own account's headers, and HEAD those of a 200 while spending only units", async () => {
    const legacy = await c.keyFor({ plan: "legacy" });
    const basic = await c.keyFor({ plan: "basic" });
    const names = (r: { res: Response }) =>
      [...r.res.headers.keys()]
        .filter(
          (n) =>
            n.startsWith("x-ratelimit") ||
            n.startsWith("x-rowbudget") ||
            n.startsWith("x-trial") ||
            n === "x-dataapi-access",
        )
        .sort();
    expect(names(await expectRows(list(c, legacy, "?limit=2"), 2))).toEqual([
      "x-ratelimit-limit",
      "x-ratelimit-remaining",
      "x-ratelimit-reset",
    ]);
    const page = await expectRows(list(c, basic, "?limit=2"), 2);
    expect(names(page)).toEqual([
      "x-ratelimit-limit",
      "x-ratelimit-remaining",
      "x-ratelimit-reset",
      "x-rowbudget-limit",
      "x-rowbudget-remaining",
    ]);
    expect(page.header("x-rowbudget-remaining")).toBe("99998");
    const head = await c.fetch("/v1/events?limit=2", { method: "HEAD", headers: { authorization: `Bearer ${basic}` } });
    expect(head.status).toBe(200);
    expect(head.headers.get("x-rowbudget-remaining")).toBe("99998");
    expect(head.headers.get("x-ratelimit-remaining")).toBe("58");
  });

  it("counts handoff attempts in a sliding minute: the 11th is 429 rate_limit_exceeded until the window moves", async () => {
    const builder = await c.key(await c.account({ plan: "none" }), "builder");
    for (let i = 0; i < HANDOFF.creationsPerMinute; i++) expect((await createHandoff(c, builder)).status).toBe(404);
    const refused = await createHandoff(c, builder);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("60");
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("rate_limit_exceeded");
    await c.advance(59);
    expect((await createHandoff(c, builder)).status).toBe(429);
    await c.advance(1);
    expect((await createHandoff(c, builder)).status).toBe(404);
  });

  it("spends nothing on a faulted request: no units, no rows, no trial start, no handoff slot", async () => {
    const account = await c.account({ plan: "none" });
    const key = await c.key(account);
    await c.fault("rate_limited");
    await expectError(list(c, key), 429, "rate_limited");
    await c.fault("trial_unavailable");
    await expectError(list(c, key), 503, "trial_unavailable");
    const first = await expectRows(list(c, key, "?limit=10"), 10);
    expect(first.header("x-ratelimit-remaining")).toBe("59");
    expect(first.header("x-trial-rowbudget-remaining")).toBe(String(TRIAL.rows - 10));
    // The trial's clock started with the real page, after the faults.
    await c.advance(30);
    await c.fault("row_budget_exhausted");
    const budget = await c.keyFor({ plan: "basic" });
    await expectError(list(c, budget), 429, "row_budget_exhausted");
    expect((await expectRows(list(c, budget, "?limit=3"), 3)).header("x-rowbudget-remaining")).toBe("99997");

    const builder = await c.key(account, "builder");
    await c.fault("handoff_unavailable");
    expect((await createHandoff(c, builder)).status).toBe(503);
    for (let i = 0; i < HANDOFF.creationsPerMinute; i++) expect((await createHandoff(c, builder)).status).toBe(404);
    expect((await createHandoff(c, builder)).status).toBe(429);
  });

  it("holds rows for requests in flight: pages are clamped to what is not held, a full hold is 429 trial_capacity_reserved", async () => {
    const accountId = await c.account({ plan: "none" });
    const now = NOW_MS;
    const held: number[] = [];
    for (let i = 0; i < 39; i++) held.push((await counters.reserve(accountId, TRIAL_SPEC, 25, now)).rows);
    expect(held.every((rows) => rows === 25)).toBe(true);
    const last = await counters.reserve(accountId, TRIAL_SPEC, 25, now);
    expect([last.rows, last.reserved, last.trial?.startedMs]).toEqual([25, 975, now]);
    const none = await counters.reserve(accountId, TRIAL_SPEC, 25, now);
    expect([none.rows, none.reserved]).toEqual([0, 1000]);
    const refused = await expectError(list(c, await c.key(accountId)), 429, "trial_capacity_reserved");
    expect(refused.header("retry-after")).toBe(String(TRIAL.capacityRetryAfterS));
    expect(refused.header("x-trial-rowbudget-remaining")).toBe("0");
    // A hold settled in time counts what was delivered and frees the rest.
    const settled = await counters.settle(accountId, TRIAL_SPEC, last, 5, now + 1);
    expect([settled.live, settled.trial?.rowsUsed, settled.reserved]).toEqual([true, 5, 975]);
  });

  it("counts nothing for a trial hold that lapsed, and a budget hold's rows whether or not", async () => {
    const trialAccount = await c.account({ plan: "none" });
    const hold = await counters.reserve(trialAccount, TRIAL_SPEC, 10, NOW_MS);
    const lapsed = await counters.settle(trialAccount, TRIAL_SPEC, hold, 10, NOW_MS + ACCESS.reservationTtlMs);
    expect([lapsed.live, lapsed.trial?.rowsUsed, lapsed.reserved]).toEqual([false, 0, 0]);
    // Settling twice ends nothing more and counts nothing more.
    expect((await counters.settle(trialAccount, TRIAL_SPEC, hold, 10, NOW_MS + 1)).live).toBe(false);

    const budgetAccount = await c.account({ plan: "enterprise", rowBudget: 50 });
    const budget = { kind: "budget", limit: 50 } as const;
    const b = await counters.reserve(budgetAccount, budget, 40, NOW_MS);
    expect([b.rows, b.used, b.reserved]).toEqual([40, 0, 0]);
    expect((await counters.reserve(budgetAccount, budget, 40, NOW_MS)).rows).toBe(10);
    const late = await counters.settle(budgetAccount, budget, b, 30, NOW_MS + ACCESS.reservationTtlMs);
    expect([late.live, late.used, late.reserved]).toEqual([false, 30, 0]);
    const spent = await counters.reserve(budgetAccount, budget, 40, NOW_MS + ACCESS.reservationTtlMs);
    expect([spent.rows, spent.used]).toEqual([20, 30]);
  });

  it("admits with the page in one step: reserves it, or counts a known page that fits, and takes nothing when gated", async () => {
    const accountId = await c.account({ plan: "none" });
    const reserved = await counters.admit(accountId, bucket(accountId), 1, TRIAL_SPEC, true, NOW_MS, 100);
    expect(reserved.verdict.admitted).toBe(true);
    expect([reserved.reservation?.rows, reserved.counted, reserved.trial?.startedMs]).toEqual([25, null, NOW_MS]);
    const counted = await counters.admit(accountId, bucket(accountId), 1, TRIAL_SPEC, true, NOW_MS + 1, 20, 7);
    // The state stage 3 decided on, before its own count.
    expect([counted.counted, counted.reservation, counted.trial?.rowsUsed, counted.reserved]).toEqual([7, null, 0, 25]);
    const later = await counters.reserve(accountId, TRIAL_SPEC, 1, NOW_MS + 2);
    expect([later.trial?.rowsUsed, later.reserved]).toEqual([7, 25]);

    const unverified = await c.account({ plan: "none", verified: false });
    const gated = await counters.admit(unverified, bucket(unverified), 1, TRIAL_SPEC, false, NOW_MS);
    expect([gated.gated, gated.verdict.admitted, gated.trial]).toEqual([true, false, undefined]);
    // Its bucket is still full: the unverified account took nothing.
    const paid = await counters.admit(unverified, bucket(unverified), 1, null, false, NOW_MS);
    expect([paid.gated, paid.verdict.admitted, paid.verdict.tokens]).toEqual([false, true, 59]);
  });
});
