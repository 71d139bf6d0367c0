/**
 * Stages 1–3 of GET /v1/events (docs/api.md; docs/api.md, Listing events; docs/api.md, Plans and access): keys, plans
 * and policies with their precedence, tiers and lookahead, plan changes taking effect at once,
 * fault injection and real ledger failures answering 503 without rows.
 */
import { expect, it } from "vitest";
import { ACCESS } from "../db/contract.ts";
import { HOT_PATH } from "../db/tuning.ts";
import {
  after,
  DAY_S,
  expectError,
  expectRows,
  list,
  openTargetLedger,
  revokeKeysElsewhere,
  seededAtNow,
  trialRowsUsed,
  withTargetLedger,
} from "./access-fixtures.ts";
import { describeMatrix } from "./harness.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const POLYGON = "?polygon=40.6,-74.1;40.8,-74.1;40.8,-73.9;40.6,-73.9&limit=1";

describeMatrix("access", (use, kind) => {
  seededAtNow(use);

  it("answers 401 invalid_api_key for missing, malformed, mistyped, unknown and revoked keys", async () => {
    const c = use();
    const account = await c.account({ plan: "basic" });
    const key = await c.key(account);
    const flipped = key.slice(0, -1) + (key.endsWith("A") ? "B" : "A");
    const unknown = key.replace(/^mq_live_/, "mq_builder_");
    for (const k of [undefined, "not-a-key", flipped, unknown]) {
      const r = await expectError(list(c, k), 401, "invalid_api_key");
      expect(r.header("www-authenticate")).toBe("Bearer");
      expect(r.header("x-ratelimit-limit")).toBe("60");
    }
    expect((await c.get("/v1/events", undefined, { authorization: `Basic ${key}` })).status).toBe(401);
    await expectRows(list(c, key, "?limit=1"), 1);
    // Revoked by another process (the CLI does the same; see cli-accounts.test.ts).
    await revokeKeysElsewhere(c, account);
    // Another process's commit reaches the server's key cache within milliseconds.
    await sleep(HOT_PATH.foreignCommitLagMs + 5);
    await expectError(list(c, key), 401, "invalid_api_key");
  });

  it("gives each page exactly its own account's headers when different accounts take turns", async () => {
    const c = use();
    const keys = {
      legacy: await c.key(await c.account({ plan: "legacy" })),
      basic: await c.key(await c.account({ plan: "basic" })),
      trial: await c.key(await c.account({ plan: "none" })),
    };
    // The names each kind of page carries beyond the fixed ones (docs/api.md).
    const own = {
      legacy: ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"],
      basic: [
        "x-ratelimit-limit",
        "x-ratelimit-remaining",
        "x-ratelimit-reset",
        "x-rowbudget-limit",
        "x-rowbudget-remaining",
      ],
      trial: [
        "x-dataapi-access",
        "x-ratelimit-limit",
        "x-ratelimit-remaining",
        "x-ratelimit-reset",
        "x-trial-expires-at",
        "x-trial-rowbudget-limit",
        "x-trial-rowbudget-remaining",
      ],
    };
    const ids = new Set<string>();
    for (let round = 1; round <= 2; round++) {
      for (const kind of ["trial", "legacy", "basic", "legacy", "trial"] as const) {
        const r = await expectRows(list(c, keys[kind], "?limit=2"), 2);
        const names = [...r.res.headers.keys()].filter((n) => n.startsWith("x-") && n !== "x-request-id").sort();
        expect({ kind, names }).toEqual({ kind, names: own[kind] });
        expect(r.header("cache-control")).toBe("private, no-store");
        expect(r.header("content-type")).toBe("application/json; charset=utf-8");
        ids.add(r.header("x-request-id")!);
      }
    }
    expect(ids.size).toBe(10);
    const basic = await list(c, keys.basic, "?limit=2");
    expect(basic.header("x-rowbudget-remaining")).toBe(String(100_000 - 3 * 2));
  });

  it("decides plan, policy, trial and verification with the documented precedence", async () => {
    const c = use();
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ plan: "none", hadSubscription: true }, 402, "subscription_required"],
      [{ plan: "none", hadSubscription: true, verified: false }, 402, "subscription_required"],
      [{ plan: "none", verified: false }, 403, "email_verification_required"],
      [{ plan: "none", verified: false, policy: "missing" }, 403, "email_verification_required"],
      [{ plan: "basic", policy: "missing" }, 403, "account_not_provisioned"],
      [{ plan: "business", policy: "stale" }, 403, "account_not_provisioned"],
      [{ plan: "legacy", policy: "foreign", verified: false }, 403, "account_not_provisioned"],
    ];
    for (const [fields, status, code] of cases) {
      const r = await expectError(list(c, await c.keyFor(fields)), status, code);
      expect(r.header("x-dataapi-access")).toBeNull();
      expect(r.header("x-ratelimit-limit")).toBe("60");
    }
    // Paid plans do not need a verified email; plan none ignores the policy row (trial).
    await expectRows(list(c, await c.keyFor({ plan: "basic", verified: false }), "?limit=1"), 1);
    const trial = await expectRows(list(c, await c.keyFor({ plan: "none", policy: "missing" }), "?limit=1"), 1);
    expect(trial.header("x-dataapi-access")).toBe("trial");
    // 402 reports the published limit; 403 the account's own.
    const negotiated = { rateSustained: 600, rateBurst: 20 };
    const r402 = await expectError(
      list(c, await c.keyFor({ plan: "none", hadSubscription: true, ...negotiated })),
      402,
      "subscription_required",
    );
    expect(r402.header("x-ratelimit-limit")).toBe("60");
    const r403 = await expectError(
      list(c, await c.keyFor({ plan: "basic", policy: "stale", ...negotiated })),
      403,
      "account_not_provisioned",
    );
    expect(r403.header("x-ratelimit-limit")).toBe("20");
    const r400 = await expectError(
      list(c, await c.keyFor({ plan: "basic", ...negotiated }), "?limit=0"),
      400,
      "invalid_limit",
    );
    expect(r400.header("x-ratelimit-limit")).toBe("20");
  });

  it("applies each tier's lookahead horizon and polygon access", async () => {
    const c = use();
    const tiers: Array<[Record<string, unknown>, number | null, boolean]> = [
      [{ plan: "basic" }, 30, false],
      [{ plan: "business" }, 90, true],
      [{ plan: "enterprise" }, null, true],
      [{ plan: "legacy" }, null, true],
      [{ plan: "legacy", hadSubscription: true }, 30, false], // a replacement subscription is Basic
      [{ plan: "none" }, 30, false], // trial
    ];
    for (const [fields, days, polygons] of tiers) {
      const key = await c.keyFor(fields);
      const horizon = (days ?? 365) * DAY_S;
      await expectRows(list(c, key, `?starts_before=${after(horizon)}&limit=1`), 1);
      await expectRows(list(c, key, `?starts_after=${after(horizon)}&limit=1`), 0);
      if (days !== null) {
        await expectError(list(c, key, `?starts_before=${after(horizon + 1)}`), 403, "lookahead_not_in_plan");
        await expectError(list(c, key, `?starts_after=${after(horizon + 1)}`), 403, "lookahead_not_in_plan");
      } else {
        await expectRows(list(c, key, `?starts_before=${after(5 * 365 * DAY_S)}&limit=1`), 1);
      }
      if (polygons) await expectRows(list(c, key, POLYGON), 1);
      else await expectError(list(c, key, POLYGON), 403, "feature_not_in_plan");
    }
  });

  it("a downgrade takes effect on the next request and invalidates a pinned cursor beyond the new horizon", async () => {
    const c = use();
    const account = await c.account({ plan: "business" });
    const [a, b] = [await c.key(account), await c.key(account)];
    const first = await expectRows(list(c, a, "?limit=2"), 2);
    const cursor = encodeURIComponent(first.body.page.nextCursor);
    await expectRows(list(c, b, `?limit=2&cursor=${cursor}`), 2); // any key of the account
    await c.patchAccount(account, { plan: "basic" });
    await expectError(list(c, b, `?limit=2&cursor=${cursor}`), 403, "lookahead_not_in_plan");
    await expectError(list(c, a, POLYGON), 403, "feature_not_in_plan");
    await c.patchAccount(account, { plan: "business" });
    await expectRows(list(c, a, `?limit=2&cursor=${cursor}`), 2);
  });

  it("injects policy_unavailable, rate_limit_unavailable, trial_unavailable and internal_error without delivering rows", async () => {
    const c = use();
    const paid = await c.keyFor({ plan: "basic" });
    const trialAccount = await c.account({ plan: "none" });
    const trial = await c.key(trialAccount);
    const faults: Array<[string, string, number, string | null]> = [
      ["policy_unavailable", paid, 503, "1"],
      ["rate_limit_unavailable", paid, 503, "1"],
      ["trial_unavailable", trial, 503, "5"],
      ["internal_error", paid, 500, null],
    ];
    for (const [code, key, status, retryAfter] of faults) {
      await c.fault(code, 2);
      for (let i = 0; i < 2; i++) {
        const r = await expectError(list(c, key), status, code);
        expect(r.header("retry-after")).toBe(retryAfter);
        expect(r.header("x-ratelimit-limit")).toBe("60");
        expect(r.body.data).toBeUndefined();
      }
      await expectRows(list(c, key, "?limit=1"), 1);
    }
    // The failed trial requests did not start the trial before the successful one.
    expect(await trialRowsUsed(c, trialAccount)).toBe(1);
    const after503 = await expectRows(list(c, paid, "?limit=1"), 1);
    expect(after503.header("x-rowbudget-remaining")).toBe(String(100_000 - 4)); // no faulted request spent rows
  });

  // The SQLite ledger's own failure (a Redis ledger that stops answering: test/shared-ledger.test.ts).
  if (kind !== "redis-pair")
    it("serves from memory while another process holds the ledger's write lock, then 503 rate_limit_unavailable, and loses no count", async () => {
      const c = use();
      const account = await c.account({ plan: "business" });
      const key = await c.key(account);
      await expectRows(list(c, key, "?limit=1"), 1);
      const holder = openTargetLedger(c);
      holder.exec("BEGIN IMMEDIATE");
      try {
        // The counters wait in memory for the lock (server/limits/meter.ts)…
        await expectRows(list(c, key, "?limit=1"), 1);
        // …until the oldest has waited longer than the request path may wait for the ledger.
        await sleep(ACCESS.ledgerBusyTimeoutMs + 200);
        // A 503, not a wait for the lock: a request that hung would meet the test's own timeout.
        const r = await expectError(list(c, key), 503, "rate_limit_unavailable");
        expect(r.header("retry-after")).toBe("1");
        expect(r.body.data).toBeUndefined();
      } finally {
        holder.exec("ROLLBACK");
        holder.close();
      }
      const again = await expectRows(list(c, key, "?limit=1"), 1);
      expect(again.header("x-rowbudget-remaining")).toBe(String(500_000 - 3));
      // What waited in memory reached the ledger once the lock was gone.
      await sleep(HOT_PATH.meterFlushMs + 100);
      const total = withTargetLedger(
        c,
        (db) =>
          db.prepare("SELECT max(total_rows) AS n FROM row_usage WHERE account_id = ?").get(account) as { n: number },
      );
      expect(total.n).toBe(3);
    });
});
