/**
 * Test mode (docs/api.md, Test mode). Registered only with `serve --test-mode`; otherwise every
 * `/_test/*` path falls through to the 404 envelope.
 */

import { parseIsoInstant } from "../../db/instant.ts";
import { emptyReplica } from "../../db/replica.ts";
import { refreshSnapshot } from "../../db/snapshot.ts";
import { inTestClockRange, TEST_CLOCK_RANGE } from "../clock.ts";
import { type AppContext, notifyLedgerReset } from "../context.ts";
import { json } from "../handle.ts";
import type { RouteTable } from "../route-table.ts";
import { readBuildInfo } from "../version.ts";
import { testAccountRoutes } from "./test-accounts.ts";
import { testFaultRoutes } from "./test-faults.ts";
import { testHandle } from "./test-handle.ts";
import { testRecordRoutes } from "./test-records.ts";
import { testRequestRoutes } from "./test-requests.ts";

const bad = (message: string) => json({ error: { code: "invalid_request", message } }, 400);

async function readJson(req: Request): Promise<Record<string, unknown> | undefined> {
  try {
    const body = await req.json();
    return body && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export function testModeRoutes(app: RouteTable, ctx: AppContext): void {
  const clockState = () => ({ now: new Date(ctx.clock.now()).toISOString(), frozen: ctx.clock.frozen });

  app.get(
    "/_test/clock",
    testHandle(() => json(clockState())),
  );
  app.post(
    "/_test/clock",
    testHandle(async ({ req }) => {
      const body = await readJson(req);
      let target: number | null = null;
      if (body && typeof body.advanceSeconds === "number" && Number.isFinite(body.advanceSeconds)) {
        target = ctx.clock.now() + body.advanceSeconds * 1000;
      } else if (body && typeof body.set === "string") {
        target = parseInstantOrDate(body.set);
      }
      if (target === null) return bad('expected {"advanceSeconds": N} or {"set": "ISO 8601"}');
      if (!inTestClockRange(target)) {
        const range = `${new Date(TEST_CLOCK_RANGE.minMs).toISOString()} to ${new Date(TEST_CLOCK_RANGE.maxMs).toISOString()}`;
        return bad(`the clock stays within ${range}; it was not moved`);
      }
      // The ledger's test clock (shared by every server on a shared ledger) and this process's own.
      await ctx.ledger.test.writeClock(target);
      ctx.clock.set(target);
      return json(clockState());
    }),
  );

  app.post(
    "/_test/snapshot",
    testHandle(async () => {
      const snapshotEvents = await ctx.replicaWrites.apply((db) => refreshSnapshot(db, ctx.clock.now()));
      return json({ snapshotEvents });
    }),
  );

  app.post(
    "/_test/reset",
    testHandle(async ({ req }) => {
      const body = (await readJson(req)) ?? {};
      const extra = Object.keys(body).filter((k) => k !== "replica");
      if (extra.length > 0 || (body.replica !== undefined && typeof body.replica !== "boolean")) {
        return bad('expected {} or {"replica": true|false}');
      }
      await resetLedger(ctx);
      // The emptied replica's (empty) snapshot too; other processes see it as any commit (docs/architecture.md, "Freshness").
      if (body.replica === true)
        await ctx.replicaWrites.apply((db) => {
          emptyReplica(db);
          refreshSnapshot(db, ctx.clock.now(), { full: true });
        });
      return json({ ok: true, replica: body.replica === true ? "emptied" : "kept" });
    }),
  );

  testRecordRoutes(app, ctx);
  testFaultRoutes(app, ctx);

  // Built on first request, like /v1/openapi.json: a test instance that never asks loads none of it
  // (docs/operations.md, Start-up).
  let description: Promise<string> | undefined;
  const describe = async () => {
    const { buildTestModeOpenApi } = await import("../openapi-test-mode.ts");
    return JSON.stringify(buildTestModeOpenApi({ baseUrl: ctx.config.baseUrl, version: readBuildInfo().version }));
  };
  app.get(
    "/_test/openapi.json",
    testHandle(async () => {
      description ??= describe();
      return new Response(await description, { headers: { "content-type": "application/json; charset=utf-8" } });
    }),
  );
  testAccountRoutes(app, ctx);
  testRequestRoutes(app, ctx);
}

/** Empties the ledger except its settings (the HMAC secret), then drops this process's caches and faults. */
export async function resetLedger(ctx: AppContext): Promise<void> {
  await ctx.ledger.reset();
  ctx.faults.clear();
  notifyLedgerReset(ctx);
}

/** `YYYY-MM-DD` (midnight UTC) or an RFC 3339 date-time. */
function parseInstantOrDate(s: string): number | null {
  return /^\d{4}-\d{2}-\d{2}$/.test(s) ? parseIsoInstant(`${s}T00:00:00Z`) : parseIsoInstant(s);
}
