/**
 * The REST trial (docs/api.md, Trials): started by the
 * first valid request, 7 days and 1,000 rows in total, pages clamped to 25 and to the unreserved
 * remainder, X-Trial-* headers, shared by every key, ended by subscribing.
 */
import { expect, it } from "vitest";
import {
  after,
  DAY_S,
  expectError,
  expectRows,
  iso,
  list,
  NOW_MS,
  seededAtNow,
  trialRowsUsed,
} from "./access-fixtures.ts";
import { type Client, describeMatrix } from "./harness.ts";

const TRIAL = { plan: "none", verified: true };
const EXPIRES = iso(NOW_MS + 7 * DAY_S * 1000);

/** Delivers `rows` trial rows through page-one repeats (repeats count, spec pagination rule 7). */
async function spend(c: Client, key: string, rows: number): Promise<void> {
  while (rows > 0) {
    const n = Math.min(25, rows);
    await expectRows(list(c, key, `?limit=${n}`), n);
    rows -= n;
  }
}

describeMatrix("REST trial", (use) => {
  seededAtNow(use);

  it("starts on the first valid request only; rejected requests leave it unstarted", async () => {
    const c = use();
    const account = await c.account(TRIAL);
    const key = await c.key(account);
    const rejected = [
      await expectError(list(c, key, "?page=2"), 400, "unsupported_pagination"),
      await expectError(list(c, key, "?limit=0"), 400, "invalid_limit"),
      await expectError(list(c, key, `?starts_before=${after(31 * DAY_S)}`), 403, "lookahead_not_in_plan"),
      await expectError(list(c, key, "?polygon=1,1;1,2;2,2"), 403, "feature_not_in_plan"),
    ];
    for (const r of rejected) {
      expect(r.header("x-dataapi-access")).toBe("trial");
      expect(r.header("x-trial-rowbudget-remaining")).toBe("1000");
      expect(r.header("x-trial-expires-at")).toBeNull();
    }
    expect(await trialRowsUsed(c, account)).toBeUndefined();

    await c.advance(3600); // the clock starts at the first valid request, not at account creation
    const ok = await expectRows(list(c, key), 25);
    expect(ok.header("x-dataapi-access")).toBe("trial");
    expect(ok.header("x-trial-rowbudget-limit")).toBe("1000");
    expect(ok.header("x-trial-rowbudget-remaining")).toBe("975");
    expect(ok.header("x-trial-expires-at")).toBe(iso(NOW_MS + 3600_000 + 7 * DAY_S * 1000));
    expect(ok.header("x-rowbudget-limit")).toBeNull();
  });

  it("clamps pages to 25 and serves the 30-day horizon with radius searches but no polygons", async () => {
    const c = use();
    const key = await c.keyFor(TRIAL);
    await expectRows(list(c, key, "?limit=100"), 25);
    await expectRows(list(c, key, `?starts_before=${after(30 * DAY_S)}&limit=3`), 3);
    await expectRows(list(c, key, "?lat=40.7128&lng=-74.006&radius_miles=5&limit=2"), 2);
    await expectError(list(c, key, "?polygon=40,-74;40.1,-74;40.1,-74.1"), 403, "feature_not_in_plan");
  });

  it("expires at exactly 7 days with X-Trial-* headers; a new key does not reset it", async () => {
    const c = use();
    const account = await c.account(TRIAL);
    const key = await c.key(account);
    await expectRows(list(c, key, "?limit=5"), 5);
    await c.advance(7 * DAY_S - 1);
    const last = await expectRows(list(c, key, "?limit=5"), 5);
    expect(last.header("x-trial-expires-at")).toBe(EXPIRES);
    await c.advance(1);
    for (const k of [key, await c.key(account)]) {
      const r = await expectError(list(c, k), 402, "trial_expired");
      expect(r.header("x-trial-expires-at")).toBe(EXPIRES);
      expect(r.header("x-trial-rowbudget-remaining")).toBe("990");
      expect(r.header("x-dataapi-access")).toBe("trial");
      expect(r.header("x-ratelimit-limit")).toBe("60");
    }
  });

  it("is exhausted at exactly 1,000 rows across keys, clamping the last page to the remainder", async () => {
    const c = use();
    const account = await c.account(TRIAL);
    const [a, b] = [await c.key(account), await c.key(account)];
    await spend(c, a, 500);
    await spend(c, b, 490); // all keys share the allowance
    const clamped = await expectRows(list(c, a, "?limit=25"), 10);
    expect(clamped.header("x-trial-rowbudget-remaining")).toBe("0");
    for (const k of [a, b, await c.key(account)]) {
      const r = await expectError(list(c, k), 402, "trial_exhausted");
      expect(r.header("x-trial-rowbudget-remaining")).toBe("0");
      expect(r.header("x-trial-expires-at")).toBe(EXPIRES);
    }
    expect(await trialRowsUsed(c, account)).toBe(1000);
    // Later expiry does not change why it ended.
    await c.advance(8 * DAY_S);
    await expectError(list(c, a), 402, "trial_exhausted");
  });

  it("empty pages cost nothing", async () => {
    const c = use();
    const key = await c.keyFor(TRIAL);
    const r = await expectRows(list(c, key, "?city=Nowhere"), 0);
    expect(r.header("x-trial-rowbudget-remaining")).toBe("1000");
    expect(r.header("x-trial-expires-at")).toBe(EXPIRES); // a valid request: the clock runs
  });

  it("subscribing after the trial gives paid access with the same key", async () => {
    const c = use();
    const account = await c.account(TRIAL);
    const key = await c.key(account);
    await expectRows(list(c, key), 25);
    await c.advance(7 * DAY_S);
    await expectError(list(c, key), 402, "trial_expired");
    await c.patchAccount(account, { plan: "basic" });
    const paid = await expectRows(list(c, key, "?limit=100"), 100);
    expect(paid.header("x-dataapi-access")).toBeNull();
    expect(paid.header("x-rowbudget-limit")).toBe("100000");
    // Cancelling leaves a prior subscription: no second trial.
    await c.patchAccount(account, { plan: "none" });
    await expectError(list(c, key), 402, "subscription_required");
  });

  it("after /_test/reset, an account that reuses an id starts with a fresh trial and bucket", async () => {
    const c = use();
    await c.reset();
    const account = await c.account(TRIAL);
    await spend(c, await c.key(account), 50);
    for (let i = 0; i < 58; i++) await list(c, await c.key(account), "?limit=1"); // the bucket nearly empty
    await c.reset();
    const again = await c.account(TRIAL);
    expect(again).toBe(account); // the ledger was emptied, so the id comes back
    const r = await expectRows(list(c, await c.key(again), "?limit=10"), 10);
    expect(r.header("x-trial-rowbudget-remaining")).toBe("990");
    expect(r.header("x-ratelimit-remaining")).toBe("59");
    expect(await trialRowsUsed(c, again)).toBe(10);
  });

  it("never delivers more than 1,000 rows to 50 simultaneous requests", async () => {
    const c = use();
    const account = await c.account(TRIAL);
    const keys = [await c.key(account), await c.key(account)];
    await spend(c, keys[0], 990);
    await c.advance(60); // refill the account's bucket: 50 more requests fit
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => list(c, keys[i % 2])));
    const delivered = results.filter((r) => r.status === 200).reduce((n, r) => n + r.body.page.count, 0);
    expect(delivered).toBe(10);
    for (const r of results.filter((r) => r.status !== 200)) {
      expect([`429 trial_capacity_reserved`, `402 trial_exhausted`]).toContain(`${r.status} ${r.body.error.code}`);
    }
    expect(await trialRowsUsed(c, account)).toBe(1000);
    // Every hold was released: the trial reads as exhausted, not as reserved.
    await expectError(list(c, keys[0]), 402, "trial_exhausted");
  });

  it("an unverified account gets 403 email_verification_required and no trial until verified", async () => {
    const c = use();
    const account = await c.account({ plan: "none", verified: false });
    const key = await c.key(account);
    const r = await expectError(list(c, key), 403, "email_verification_required");
    expect(r.header("x-ratelimit-limit")).toBe("60");
    expect(await trialRowsUsed(c, account)).toBeUndefined();
    await c.patchAccount(account, { verified: true });
    await expectRows(list(c, key), 25);
  });
});
