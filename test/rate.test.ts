/**
 * Request rate and row budgets (docs/api.md, Rate limits and Row budgets):
 * token buckets per key, per trial account and per negotiated account; geo requests cost 5 even
 * when malformed; counters only on 200 and 429 rate_limited; exact rolling 24-hour row budgets.
 */
import { expect, it } from "vitest";
import { DAY_S, expectError, expectRows, list, NOW_MS, seededAtNow } from "./access-fixtures.ts";
import { type Client, describeMatrix } from "./harness.ts";

const NOW_S = NOW_MS / 1000;
const GEO = "?lat=40.7128&lng=-74.006&radius_miles=5&limit=1";

async function drain(c: Client, key: string, requests: number): Promise<void> {
  for (let i = 0; i < requests; i++) await expectRows(list(c, key, "?limit=1"), 1);
}

describeMatrix("request rate", (use) => {
  seededAtNow(use);

  it("gives each key 60 units refilled one a second, with counters on 200 and 429 only", async () => {
    const c = use();
    const account = await c.account({ plan: "legacy" });
    const [key, other] = [await c.key(account), await c.key(account)];
    const first = await expectRows(list(c, key, "?limit=1"), 1);
    expect(first.header("x-ratelimit-limit")).toBe("60");
    expect(first.header("x-ratelimit-remaining")).toBe("59");
    expect(first.header("x-ratelimit-reset")).toBe(String(NOW_S + 1));
    await drain(c, key, 59);
    const limited = await expectError(list(c, key), 429, "rate_limited");
    expect(limited.header("retry-after")).toBe("1");
    expect(limited.header("x-ratelimit-limit")).toBe("60");
    expect(limited.header("x-ratelimit-remaining")).toBe("0");
    expect(limited.header("x-ratelimit-reset")).toBe(String(NOW_S + 60));
    // Another key of a non-negotiated account has its own bucket.
    await expectRows(list(c, other, "?limit=1"), 1);
    await c.advance(1);
    const refilled = await expectRows(list(c, key, "?limit=1"), 1);
    expect(refilled.header("x-ratelimit-remaining")).toBe("0");
    await c.advance(30);
    expect((await expectRows(list(c, key, "?limit=1"), 1)).header("x-ratelimit-remaining")).toBe("29");
  });

  it("charges geo requests 5 units, malformed ones too; a rejected 400 shows no counters", async () => {
    const c = use();
    const key = await c.keyFor({ plan: "legacy" });
    expect((await expectRows(list(c, key, GEO), 1)).header("x-ratelimit-remaining")).toBe("55");
    const bad = await expectError(list(c, key, "?lat=abc&lng=1&radius_miles=1"), 400, "invalid_coordinates");
    expect(bad.header("x-ratelimit-limit")).toBe("60");
    expect(bad.header("x-ratelimit-remaining")).toBeNull();
    await expectError(list(c, key, "?polygon="), 400, "invalid_polygon");
    await expectError(list(c, key, "?limit=abc"), 400, "invalid_limit");
    expect((await expectRows(list(c, key, "?limit=1"), 1)).header("x-ratelimit-remaining")).toBe("43");
    await drain(c, key, 40); // 3 units left: a geo request needs 2 more seconds
    const limited = await expectError(list(c, key, GEO), 429, "rate_limited");
    expect(limited.header("retry-after")).toBe("2");
    expect(limited.header("x-ratelimit-remaining")).toBe("3");
    expect((await expectRows(list(c, key, "?limit=1"), 1)).header("x-ratelimit-remaining")).toBe("2");
  });

  it("meters a trial account with one bucket shared by its keys", async () => {
    const c = use();
    const account = await c.account({ plan: "none" });
    const [a, b] = [await c.key(account), await c.key(account)];
    await drain(c, a, 30);
    await drain(c, b, 30);
    await expectError(list(c, a), 429, "rate_limited");
    const limited = await expectError(list(c, b), 429, "rate_limited");
    expect(limited.header("x-dataapi-access")).toBe("trial");
    expect(limited.header("x-trial-rowbudget-remaining")).toBe("940");
  });

  it("meters a negotiated account per account with its burst and sustained rate", async () => {
    const c = use();
    const account = await c.account({ plan: "business", rateSustained: 120, rateBurst: 10 });
    const [a, b] = [await c.key(account), await c.key(account)];
    await drain(c, a, 5);
    const fifth = await expectRows(list(c, b, "?limit=1"), 1);
    expect(fifth.header("x-ratelimit-limit")).toBe("10");
    expect(fifth.header("x-ratelimit-remaining")).toBe("4");
    expect(fifth.header("x-ratelimit-reset")).toBe(String(NOW_S + 3)); // 6 units at 2 a second
    await drain(c, a, 4);
    const limited = await expectError(list(c, b), 429, "rate_limited");
    expect(limited.header("retry-after")).toBe("1");
    expect(limited.header("x-ratelimit-limit")).toBe("10");
    await c.advance(0.5); // 2 units a second: one unit back
    await expectRows(list(c, b, "?limit=1"), 1);
    await expectError(list(c, a), 429, "rate_limited");
  });
});

describeMatrix("row budget", (use) => {
  seededAtNow(use);

  it("reports Basic 100,000 and Business 500,000 on 200s and nothing for Legacy", async () => {
    const c = use();
    const basic = await expectRows(list(c, await c.keyFor({ plan: "basic" }), "?limit=40"), 40);
    expect([basic.header("x-rowbudget-limit"), basic.header("x-rowbudget-remaining")]).toEqual(["100000", "99960"]);
    const business = await expectRows(list(c, await c.keyFor({ plan: "business" }), "?limit=7"), 7);
    expect([business.header("x-rowbudget-limit"), business.header("x-rowbudget-remaining")]).toEqual([
      "500000",
      "499993",
    ]);
    const legacy = await expectRows(list(c, await c.keyFor({ plan: "legacy" }), "?limit=7"), 7);
    expect(legacy.header("x-rowbudget-limit")).toBeNull();
    const unset = await expectRows(list(c, await c.keyFor({ plan: "enterprise" }), "?limit=7"), 7);
    expect(unset.header("x-rowbudget-limit")).toBeNull();
  });

  it("is an exact rolling 24 hours per account across keys: clamps, refuses, and frees rows as they age out", async () => {
    const c = use();
    const account = await c.account({ plan: "enterprise", rowBudget: 60 });
    const [a, b] = [await c.key(account), await c.key(account)];
    expect((await expectRows(list(c, a, "?limit=25"), 25)).header("x-rowbudget-remaining")).toBe("35");
    await c.advance(3600);
    expect((await expectRows(list(c, b, "?city=Nowhere"), 0)).header("x-rowbudget-remaining")).toBe("35");
    expect((await expectRows(list(c, b, "?limit=25"), 25)).header("x-rowbudget-remaining")).toBe("10");
    await c.advance(3600);
    const clamped = await expectRows(list(c, a, "?limit=25"), 10);
    expect(clamped.header("x-rowbudget-remaining")).toBe("0");

    const spent = await expectError(list(c, b), 429, "row_budget_exhausted");
    expect(spent.header("retry-after")).toBe(String(DAY_S - 7200)); // when the first 25 rows age out
    expect([spent.header("x-rowbudget-limit"), spent.header("x-rowbudget-remaining")]).toEqual(["60", "0"]);
    expect(spent.header("x-ratelimit-remaining")).toBeNull();
    expect(spent.header("x-ratelimit-reset")).toBeNull();

    await c.advance(DAY_S - 7200 - 1);
    expect((await expectError(list(c, a), 429, "row_budget_exhausted")).header("retry-after")).toBe("1");
    await c.advance(1); // exactly 24 hours after the first delivery
    const freed = await expectRows(list(c, a, "?limit=100"), 25);
    expect(freed.header("x-rowbudget-remaining")).toBe("0");
    await c.advance(3600);
    expect((await expectRows(list(c, b, "?limit=100"), 25)).header("x-rowbudget-remaining")).toBe("0");
  });

  it("counts rows delivered before a budget applied (usage is recorded for every account)", async () => {
    const c = use();
    const account = await c.account({ plan: "legacy" });
    const key = await c.key(account);
    await expectRows(list(c, key, "?limit=30"), 30);
    await c.patchAccount(account, { plan: "basic" });
    expect((await expectRows(list(c, key, "?limit=1"), 1)).header("x-rowbudget-remaining")).toBe("99969");
  });
});
