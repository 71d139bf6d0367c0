/**
 * The ListAccess protocol around a trial reservation, driven in-process where HTTP cannot reach:
 * time passing between open() and settle(). Spec "Errors": trial_unavailable when "the
 * reservation expired", with no data returned.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../db/accounts.ts";
import { ACCESS } from "../db/contract.ts";
import { readTrial } from "../db/trials.ts";
import { authorizeList } from "../server/access.ts";
import { resolveConfig } from "../server/config.ts";
import { createContext, type AppContext } from "../server/context.ts";
import type { RequestScope } from "../server/handle.ts";
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

  function trialAccess() {
    const accountId = createAccount(ctx.ledger, { email: "t@example.com", plan: "none" }, ctx.clock.now());
    const { key } = issueKey(ctx.ledger, accountId, "live", ctx.clock.now());
    const req = new Request("http://x/v1/events", { headers: { authorization: `Bearer ${key}` } });
    const scope: RequestScope = { req, url: new URL(req.url), requestId: "r", headers: {}, event: undefined as never };
    return { accountId, scope, access: authorizeList(ctx, scope, { geo: false }) };
  }

  it("withholds a page whose reservation expired: 503 trial_unavailable, nothing counted", () => {
    const { accountId, access } = trialAccess();
    expect(access.open(100)).toBe(25);
    ctx.clock.advance(ACCESS.reservationTtlMs);
    expect(() => access.settle(25)).toThrowError(expect.objectContaining({ code: "trial_unavailable", status: 503 }));
    expect(readTrial(ctx.ledger, accountId)?.rowsUsed).toBe(0);
    expect(ctx.ledger.prepare("SELECT count(*) AS n FROM row_reservations").get()).toEqual({ n: 0 });
  });

  it("counts a page settled in time, and settle is once only", () => {
    const { accountId, scope, access } = trialAccess();
    expect(access.open(10)).toBe(10);
    ctx.clock.advance(ACCESS.reservationTtlMs - 1);
    access.settle(7);
    access.settle(7);
    expect(readTrial(ctx.ledger, accountId)?.rowsUsed).toBe(7);
    expect(scope.headers["X-Trial-RowBudget-Remaining"]).toBe("993");
    expect(scope.headers["X-RateLimit-Remaining"]).toBe("59");
  });

  it("settle(0) after an expired reservation does not throw, so it cannot mask the route's error", () => {
    const { access } = trialAccess();
    access.open(25);
    ctx.clock.advance(ACCESS.reservationTtlMs * 2);
    expect(() => access.settle(0)).not.toThrow();
    expect(() => access.open(25)).toThrow(/twice/);
  });
});
