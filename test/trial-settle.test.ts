/**
 * The ListAccess protocol around a trial reservation, driven in-process where HTTP cannot reach:
 * a request holding rows between open() and settle(), and time passing meanwhile. Spec
 * "Errors": trial_unavailable when "the reservation expired", with no data returned; docs/api.md, Plans and access: remainder 0 with reservations in flight → 429 trial_capacity_reserved.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCESS } from "../db/contract.ts";
import { readTrial } from "../db/trials.ts";
import { HOT_PATH } from "../db/tuning.ts";
import type { Access } from "../server/access.ts";
import { resolveConfig } from "../server/config.ts";
import { type AppContext, createContext, sqliteLedgerDb } from "../server/context.ts";
import { isApiError } from "../server/errors.ts";
import { type RequestScope, WebScope } from "../server/handle.ts";
import { issueKey } from "../server/keys.ts";
import { NOW_MS } from "./access-fixtures.ts";

describe("trial reservations between open() and settle()", () => {
  let dir: string;
  let ctx: AppContext;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "marquee-trial-settle-"));
    ctx = await createContext(resolveConfig({ dbPath: join(dir, "marquee.db") }, {}));
    ctx.clock.set(NOW_MS);
  });
  afterAll(() => {
    ctx.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function trialKey() {
    const { id: accountId } = await ctx.ledger.createAccount({ email: "t@example.com", plan: "none" }, ctx.clock.now());
    const { key } = await issueKey(ctx.ledger, accountId, "live", ctx.clock.now());
    return { accountId, key };
  }

  function authorize(key: string) {
    const req = new Request("http://x/v1/events", { headers: { authorization: `Bearer ${key}` } });
    const scope: RequestScope = new WebScope(req);
    return { scope, access: (ctx.access as Access).authorizeList(scope, { geo: false }) };
  }

  async function trialAccess() {
    const { accountId, key } = await trialKey();
    return { accountId, key, ...authorize(key) };
  }

  function refusal(fn: () => unknown) {
    try {
      fn();
    } catch (err) {
      if (isApiError(err)) return err;
      throw err;
    }
    throw new Error("expected a refusal");
  }

  it("withholds a page whose reservation expired: 503 trial_unavailable, nothing counted", async () => {
    const { accountId, scope, access } = await trialAccess();
    expect(access.open(100)).toBe(25);
    ctx.clock.advance(ACCESS.reservationTtlMs);
    expect(() => access.settle(25)).toThrowError(expect.objectContaining({ code: "trial_unavailable", status: 503 }));
    // A 503 reports no request-rate counters (docs/api.md).
    expect(scope.headers["X-RateLimit-Remaining"]).toBeUndefined();
    expect(ctx.meter!.readTrial(accountId)?.rowsUsed).toBe(0);
    expect(ctx.meter!.reservedRows(accountId, "trial", ctx.clock.now())).toBe(0);
  });

  it("counts a page settled in time, in the ledger within the meter's flush delay, and settle is once only", async () => {
    const { accountId, scope, access } = await trialAccess();
    expect(access.open(10)).toBe(10);
    ctx.clock.advance(ACCESS.reservationTtlMs - 1);
    access.settle(7);
    access.settle(7);
    expect(ctx.meter!.readTrial(accountId)?.rowsUsed).toBe(7);
    await new Promise((resolve) => setTimeout(resolve, HOT_PATH.meterFlushMs + 60));
    expect(readTrial(sqliteLedgerDb(ctx), accountId)?.rowsUsed).toBe(7);
    expect(scope.headers["X-Trial-RowBudget-Remaining"]).toBe("993");
    expect(scope.headers["X-RateLimit-Remaining"]).toBe("59");
  });

  it("settle(0) after an expired reservation does not throw, so it cannot mask the route's error", async () => {
    const { access } = await trialAccess();
    access.open(25);
    ctx.clock.advance(ACCESS.reservationTtlMs * 2);
    expect(() => access.settle(0)).not.toThrow();
    expect(() => access.open(25)).toThrow(/twice/);
  });

  it("answers 429 trial_capacity_reserved while another request holds the rest, until the hold expires", async () => {
    const { accountId, key } = await trialKey();
    ctx.meter!.startTrial(accountId, ctx.clock.now());
    ctx.meter!.addTrialRows(accountId, 990, ctx.clock.now());
    const inFlight = authorize(key).access;
    expect(inFlight.open(25)).toBe(10);

    const held = refusal(() => authorize(key));
    expect(held.code).toBe("trial_capacity_reserved");
    expect(held.status).toBe(429);
    expect(held.headers["Retry-After"]).toBe("5");
    expect(held.headers["X-Trial-RowBudget-Remaining"]).toBe("0");

    // A request that never settles frees its rows after 30 seconds.
    ctx.clock.advance(ACCESS.reservationTtlMs);
    const { scope, access } = authorize(key);
    expect(access.open(25)).toBe(10);
    access.settle(10);
    expect(scope.headers["X-Trial-RowBudget-Remaining"]).toBe("0");
    expect(refusal(() => authorize(key)).code).toBe("trial_exhausted");
    // The lapsed request can no longer count its rows.
    expect(() => inFlight.settle(10)).toThrowError(expect.objectContaining({ code: "trial_unavailable" }));
    expect(ctx.meter!.readTrial(accountId)?.rowsUsed).toBe(1000);
  });
});
