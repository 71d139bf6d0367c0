/**
 * The list pipeline on a Redis ledger (server/ledger/redis-access.ts) driven in-process through
 * ListService and the route wrapper, over a real redis-server and the real RedisLedger: two
 * "servers" (each its own ledger connections, counters and caches) share every limit exactly,
 * and each answer matches, status and headers, what the SQLite ledger's `Access` answers to the
 * same request (docs/api.md, Listing events, and Plans and access).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AccountFields } from "../db/accounts.ts";
import { ACCESS, DAY_MS, TRIAL } from "../db/contract.ts";
import { refreshSnapshot } from "../db/snapshot.ts";
import { resolveConfig } from "../server/config.ts";
import { type AppContext, createContext } from "../server/context.ts";
import { direct, handle, type RequestScope, WebScope } from "../server/handle.ts";
import { digestKey, displayPrefix, generateKey, issueKey } from "../server/keys.ts";
import { openRedisLedger, type RedisLedger } from "../server/ledger/redis.ts";
import { RedisAccess } from "../server/ledger/redis-access.ts";
import { connectRedis, type RedisClient } from "../server/ledger/redis-connection.ts";
import { RedisCounters } from "../server/ledger/redis-counters.ts";
import { REDIS_KEYS } from "../server/ledger/redis-keys.ts";
import { ListService } from "../server/list/service.ts";
import { applyBatch } from "../sync/apply.ts";
import { parseRecordLine } from "../sync/records.ts";
import { NOW_MS } from "./access-fixtures.ts";
import { eventRecord, venueRecord } from "./records.ts";
import { type RedisServer, startRedisServer } from "./redis-server.ts";

const EVENTS = 60;
const iso = (ms: number) => new Date(ms).toISOString();

/** One serving process on the Redis ledger: its own connections, counters, caches and list route. */
interface RedisServing {
  ledger: RedisLedger;
  redis: RedisClient;
  access: RedisAccess;
  list: ListService;
  get(path: string, key?: string, method?: string): Promise<Response>;
}

describe("the list pipeline on a Redis ledger", () => {
  let dir: string;
  let ctx: AppContext;
  let server: RedisServer;
  const servers: RedisServing[] = [];

  const route = (list: ListService) => {
    const answer = (head: boolean) =>
      direct(handle((scope: RequestScope) => list.answer(scope, head), "list", { setsRequestId: true }));
    const [get, head] = [answer(false), answer(true)];
    return async (path: string, key?: string, method = "GET") => {
      const req = new Request(`http://marquee.test${path}`, {
        method,
        headers: key ? { authorization: `Bearer ${key}` } : {},
      });
      return method === "HEAD" ? head(req) : get(req);
    };
  };

  async function serving(): Promise<RedisServing> {
    const ledger = await openRedisLedger(server.url);
    const redis = await connectRedis(server.url);
    const access = new RedisAccess({ ledger, counters: new RedisCounters(redis), clock: ctx.clock });
    const list = new ListService({
      replica: ctx.replica,
      access,
      clock: ctx.clock,
      secret: ctx.secret,
      baseUrl: "http://marquee.test",
    });
    return { ledger, redis, access, list, get: route(list) };
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "marquee-redis-access-"));
    ctx = await createContext(resolveConfig({ dbPath: join(dir, "marquee.db"), baseUrl: "http://marquee.test" }, {}));
    ctx.clock.set(NOW_MS);
    const records: object[] = [
      venueRecord(7001, { latitude: 40.7128, longitude: -74.006, city: "New York", state: "NY" }),
    ];
    for (let i = 0; i < EVENTS; i++)
      records.push(eventRecord(700_000 + i, 7001, iso(NOW_MS + 10 * DAY_MS + i * 3_600_000)));
    applyBatch(
      ctx.replica,
      records.map((r, i) => parseRecordLine(JSON.stringify(r), i + 1)),
    );
    refreshSnapshot(ctx.replica, NOW_MS);
    ctx.replicaWrites.changed();
    server = await startRedisServer();
    servers.push(await serving(), await serving());
  });
  afterAll(async () => {
    for (const s of servers) {
      s.access.close();
      await s.ledger.close();
      s.redis.disconnect();
    }
    await server?.stop();
    ctx?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** An account and a key on the Redis ledger. */
  async function redisKey(fields: Partial<AccountFields>) {
    const ledger = servers[0].ledger;
    const account = await ledger.createAccount({ email: "r@example.com", ...fields }, ctx.clock.now());
    const key = generateKey("live");
    const keyId = await ledger.insertKey(
      { accountId: account.id, kind: "live", digest: digestKey(key), prefix: displayPrefix(key) },
      ctx.clock.now(),
    );
    return { accountId: account.id, keyId, key };
  }

  /** The same account on the SQLite ledger (the default `Access`). */
  async function sqliteKey(fields: Partial<AccountFields>) {
    const account = await ctx.ledger.createAccount({ email: "s@example.com", ...fields }, ctx.clock.now());
    return (await issueKey(ctx.ledger, account.id, "live", ctx.clock.now())).key;
  }
  const sqliteGet = () => route(ctx.list);

  /** Status, error code, count and every header but the request's own id. */
  async function shape(res: Response) {
    const text = await res.text();
    // HEAD: no body.
    const json = text ? JSON.parse(text) : null;
    const body = res.status === 200 ? json : null;
    const error = res.status === 200 ? undefined : json?.error;
    const headers = Object.fromEntries([...res.headers].filter(([k]) => k !== "x-request-id" && k !== "date"));
    if (error) expect(error.requestId).toBe(res.headers.get("x-request-id"));
    expect(res.headers.get("x-request-id")).toBeTruthy();
    return { status: res.status, code: error?.code, count: body?.page?.count, headers };
  }

  it("answers every stage's outcome with the status and headers the SQLite ledger answers", async () => {
    const redisGet = servers[1].get;
    const cases: [string, Partial<AccountFields> | null, string[]][] = [
      // A page asked for a third time is the page cache's, counted with stage 3 instead of reserved.
      [
        "trial",
        { plan: "none" },
        ["?limit=100", "?limit=3", "?limit=3", "?limit=3", "?polygon=40.6,-74.1;40.8,-74.1;40.8,-73.9", "HEAD"],
      ],
      ["basic", { plan: "basic" }, ["?limit=30", "?lat=40.7&lng=-74&radius_miles=5", "?page=2", "HEAD"]],
      ["budget", { plan: "enterprise", rowBudget: 30 }, ["?limit=25", "?limit=25", "?limit=1", "HEAD"]],
      [
        "budget counted",
        { plan: "enterprise", rowBudget: 30 },
        ["?limit=9", "?limit=9", "?limit=9", "?limit=25", "?limit=1"],
      ],
      ["legacy", { plan: "legacy" }, ["?limit=2", "?starts_before=2031-01-01"]],
      ["negotiated", { plan: "basic", rateSustained: 6, rateBurst: 2 }, ["", "", "", "HEAD"]],
      ["unverified", { plan: "none", verified: false }, [""]],
      ["resubscriber", { plan: "none", hadSubscription: true }, [""]],
      ["no policy", { plan: "business", policy: "missing" }, [""]],
      ["legacy replacement", { plan: "legacy", hadSubscription: true }, ["?starts_before=2031-01-01"]],
    ];
    const outcomes: string[] = [];
    const keys: [redis: string, sqlite: string][] = [];
    for (const [name, fields, requests] of cases) {
      const r = await redisKey(fields!);
      const s = await sqliteKey(fields!);
      for (const q of requests) {
        const [path, method] = q === "HEAD" ? ["/v1/events?limit=5", "HEAD"] : [`/v1/events${q}`, "GET"];
        const want = await shape(await sqliteGet()(path, s, method));
        const got = await shape(await redisGet(path, r.key, method));
        expect({ name, q, ...got }).toEqual({ name, q, ...want });
        outcomes.push(`${name} ${q}: ${got.status} ${got.code ?? got.count ?? ""}`);
      }
      keys.push([r.key, s]);
    }
    expect(outcomes).toEqual([
      "trial ?limit=100: 200 25",
      "trial ?limit=3: 200 3",
      "trial ?limit=3: 200 3",
      "trial ?limit=3: 200 3",
      "trial ?polygon=40.6,-74.1;40.8,-74.1;40.8,-73.9: 403 feature_not_in_plan",
      "trial HEAD: 200 ",
      "basic ?limit=30: 200 30",
      "basic ?lat=40.7&lng=-74&radius_miles=5: 200 25",
      "basic ?page=2: 400 unsupported_pagination",
      "basic HEAD: 200 ",
      "budget ?limit=25: 200 25",
      "budget ?limit=25: 200 5",
      "budget ?limit=1: 429 row_budget_exhausted",
      "budget HEAD: 429 row_budget_exhausted",
      "budget counted ?limit=9: 200 9",
      "budget counted ?limit=9: 200 9",
      "budget counted ?limit=9: 200 9",
      "budget counted ?limit=25: 200 3",
      "budget counted ?limit=1: 429 row_budget_exhausted",
      "legacy ?limit=2: 200 2",
      "legacy ?starts_before=2031-01-01: 200 25",
      "negotiated : 200 25",
      "negotiated : 200 25",
      "negotiated : 429 rate_limited",
      "negotiated HEAD: 429 rate_limited",
      "unverified : 403 email_verification_required",
      "resubscriber : 402 subscription_required",
      "no policy : 403 account_not_provisioned",
      "legacy replacement ?starts_before=2031-01-01: 403 lookahead_not_in_plan",
    ]);
    // Day 7 of the trial started above: 402 trial_expired with its headers, from both ledgers.
    ctx.clock.advance(TRIAL.days * DAY_MS);
    try {
      const [r, s] = keys[0];
      const want = await shape(await sqliteGet()("/v1/events", s));
      expect(want).toMatchObject({ status: 402, code: "trial_expired" });
      expect(await shape(await redisGet("/v1/events", r))).toEqual(want);
    } finally {
      ctx.clock.set(NOW_MS);
    }
    // Stage 1: no key, a malformed key, an unknown well-formed key.
    for (const key of [undefined, "mq_live_nope", generateKey("live")]) {
      const want = await shape(await sqliteGet()("/v1/events", key));
      expect(await shape(await redisGet("/v1/events", key))).toEqual(want);
      expect(want.status).toBe(401);
    }
  });

  it.each([
    ["new pages, reserved before they are read", 25, false],
    ["pages the page cache holds, counted with stage 3", 5, true],
  ])("delivers exactly the 10 trial rows left when 50 requests race on two servers: %s", async (_, limit, kept) => {
    const path = `/v1/events?limit=${limit}`;
    if (kept) {
      // Another trial's pages: the same window, so the same page; a page's body is kept once it
      // is asked for a second time (server/list/page-cache.ts).
      const other = await redisKey({ plan: "none" });
      for (const s of [...servers, ...servers]) expect((await s.get(path, other.key)).status).toBe(200);
    }
    const { accountId, key } = await redisKey({ plan: "none" });
    await servers[0].redis.hset(REDIS_KEYS.trial(accountId), "startedMs", NOW_MS, "rowsUsed", TRIAL.rows - 10);
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => servers[i % 2].get(path, key).then(shape)));
    const delivered = answers.filter((a) => a.status === 200).reduce((n, a) => n + a.count, 0);
    expect(delivered).toBe(10);
    for (const a of answers) {
      expect([200, 402, 429]).toContain(a.status);
      if (a.status === 429)
        expect(a).toMatchObject({ code: "trial_capacity_reserved", headers: { "retry-after": "5" } });
      if (a.status === 402) expect(a.code).toBe("trial_exhausted");
    }
    expect(await servers[1].ledger.readTrial(accountId)).toMatchObject({ rowsUsed: TRIAL.rows });
    expect(await servers[0].ledger.rowsDelivered(accountId, ACCESS.rowBudgetWindowMs, ctx.clock.now())).toBe(10);
    expect(await shape(await servers[1].get("/v1/events", key))).toMatchObject({
      status: 402,
      code: "trial_exhausted",
    });
  });

  it("shares a key's 60 units between the servers and keeps a row budget exact across them", async () => {
    const { key } = await redisKey({ plan: "legacy" });
    const answers = await Promise.all(
      Array.from({ length: 61 }, (_, i) => servers[i % 2].get("/v1/events?limit=1", key).then(shape)),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(60);
    expect(answers.filter((a) => a.status === 429 && a.code === "rate_limited")).toHaveLength(1);

    const budget = await redisKey({ plan: "enterprise", rowBudget: 40 });
    const pages = await Promise.all(
      Array.from({ length: 6 }, (_, i) => servers[i % 2].get("/v1/events?limit=10", budget.key).then(shape)),
    );
    expect(pages.filter((p) => p.status === 200).reduce((n, p) => n + p.count, 0)).toBe(40);
    const refused = await shape(await servers[0].get("/v1/events?limit=1", budget.key));
    // The rows age out 24 hours after their delivery (the test clock stands still).
    expect(refused).toMatchObject({
      status: 429,
      code: "row_budget_exhausted",
      headers: { "retry-after": String(DAY_MS / 1000), "x-rowbudget-remaining": "0" },
    });
  });

  it("asks Redis twice for a new page outside test mode, and once for a metered page the page cache holds", async () => {
    /** Commands Redis has run so far, by name. */
    const commands = () => {
      const calls: Record<string, number> = {};
      for (const m of server.cli("INFO", "commandstats").matchAll(/^cmdstat_(\w+):calls=(\d+)/gm))
        calls[m[1]] = Number(m[2]);
      return calls;
    };
    // Commands inside a script count too, so only the scripts are compared; every step of the
    // request path is a script (keys and accounts are cached).
    const scripts = () => {
      const at = commands();
      return (at.evalsha ?? 0) + (at.eval ?? 0);
    };
    const counts: Record<string, number[]> = {};
    for (const [i, fields] of ([{ plan: "none" }, { plan: "basic" }, { plan: "legacy" }] as const).entries()) {
      const { key } = await redisKey(fields);
      // Keys and accounts are read once, then cached.
      expect((await servers[1].get("/v1/events?limit=2", key)).status).toBe(200);
      counts[fields.plan] = [];
      // A new page, then the same page twice: its body is kept from the second time.
      for (let n = 0; n < 3; n++) {
        const before = scripts();
        const answer = await shape(await servers[1].get(`/v1/events?limit=${13 + i}`, key));
        expect(answer).toMatchObject({ status: 200, count: 13 + i });
        counts[fields.plan].push(scripts() - before);
      }
    }
    // Trial and row budget: stage 3 with the reservation, then the count; stage 3 alone counts a
    // kept page. Unmetered: the bucket take, then the delivery's record behind the page.
    expect(counts).toEqual({ none: [2, 2, 1], basic: [2, 2, 1], legacy: [2, 2, 2] });
  });

  it("drops cached keys and accounts when any server changes them", async () => {
    const { accountId, keyId, key } = await redisKey({ plan: "basic" });
    expect((await servers[1].get("/v1/events?limit=1", key)).status).toBe(200);
    await servers[0].ledger.updateAccount(accountId, { plan: "business" }, ctx.clock.now());
    const deadline = Date.now() + 1000;
    for (;;) {
      const res = await servers[1].get("/v1/events?limit=1&polygon=40.6,-74.1;40.8,-74.1;40.8,-73.9", key);
      if (res.status === 200) break;
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 20));
    }
    await servers[0].ledger.revokeKey(keyId, ctx.clock.now());
    // Only the change notification drops a cached key (no expiry): a generous deadline still proves it.
    const revokedBy = Date.now() + 10_000;
    for (;;) {
      const res = await servers[1].get("/v1/events?limit=1", key);
      if (res.status === 401) break;
      expect(Date.now()).toBeLessThan(revokedBy);
      await new Promise((r) => setTimeout(r, 20));
    }
    await expect(
      servers[1].access.authenticate(new Request("http://x", { headers: { authorization: `Bearer ${key}` } })),
    ).rejects.toMatchObject({ code: "invalid_api_key" });
  });

  it("withholds a page whose trial reservation expired: 503 trial_unavailable, nothing counted", async () => {
    const { accountId, key } = await redisKey({ plan: "none" });
    const req = new Request("http://x/v1/events", { headers: { authorization: `Bearer ${key}` } });
    const scope: RequestScope = new WebScope(req);
    const access = await servers[1].access.authorizeList(scope, { geo: false });
    expect(await access.open(100)).toBe(25);
    ctx.clock.advance(ACCESS.reservationTtlMs);
    try {
      await expect(access.settle(25)).rejects.toMatchObject({ code: "trial_unavailable", status: 503 });
      expect(scope.headers["X-RateLimit-Remaining"]).toBeUndefined();
      expect(await servers[0].ledger.readTrial(accountId)).toMatchObject({ rowsUsed: 0 });
    } finally {
      ctx.clock.set(NOW_MS);
    }
  });

  it("answers each stage's 503 by the command timeout while Redis hangs, and recovers when it answers", async () => {
    const paid = await redisKey({ plan: "basic" });
    const trial = await redisKey({ plan: "none" });
    const s = servers[1];
    // Cached keys and accounts: the first Redis step is stage 3's script.
    expect((await s.get("/v1/events?limit=1", paid.key)).status).toBe(200);
    expect((await s.get("/v1/events?limit=1", trial.key)).status).toBe(200);
    server.pause();
    try {
      for (const [key, code] of [
        [paid.key, "rate_limit_unavailable"],
        [trial.key, "trial_unavailable"],
        [generateKey("live"), "policy_unavailable"],
      ] as const) {
        // The command timeout answers; a request waiting on the paused server would meet the test's timeout.
        const got = await shape(await s.get("/v1/events?limit=1", key));
        expect(got).toMatchObject({ status: 503, code, headers: { "retry-after": expect.any(String) } });
      }
    } finally {
      server.resume();
    }
    const deadline = Date.now() + 5000;
    while ((await s.get("/v1/events?limit=1", paid.key)).status !== 200) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 50));
    }
  });
});
