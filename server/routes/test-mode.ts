/**
 * Test mode (docs/api.md, Test mode). Registered only with `serve --test-mode`; otherwise every
 * `/_test/*` path falls through to the 404 envelope.
 */

import { FAULT_CODES, type FaultCode } from "../../db/contract.ts";
import { parseIsoInstant } from "../../db/instant.ts";
import { refreshSnapshot } from "../../db/snapshot.ts";
import { applyBatch } from "../../sync/apply.ts";
import { parseRecordLine, RecordError, type UpstreamRecord } from "../../sync/records.ts";
import { inTestClockRange, TEST_CLOCK_RANGE } from "../clock.ts";
import { type AppContext, notifyLedgerReset, notifyReplicaChange } from "../context.ts";
import { json } from "../handle.ts";
import type { RouteTable } from "../route-table.ts";
import { testAccountRoutes } from "./test-accounts.ts";
import { testHandle } from "./test-handle.ts";
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
    "/_test/records",
    testHandle(async ({ req }) => {
      const text = await req.text();
      const records: UpstreamRecord[] = [];
      let line = 0;
      try {
        for (const raw of text.split("\n")) {
          line++;
          if (raw.trim() === "") continue;
          const record = parseRecordLine(raw, line);
          const last = records.at(-1);
          if (last && record.seq <= last.seq) throw new RecordError(line, `seq ${record.seq} does not increase`);
          records.push(record);
        }
      } catch (err) {
        if (err instanceof RecordError) return bad(err.message);
        throw err;
      }
      const result = applyBatch(ctx.replica, records);
      const snapshotEvents = refreshSnapshot(ctx.replica, ctx.clock.now());
      notifyReplicaChange(ctx);
      return json({ ...result, snapshotEvents });
    }),
  );

  app.post(
    "/_test/snapshot",
    testHandle(() => {
      const snapshotEvents = refreshSnapshot(ctx.replica, ctx.clock.now());
      notifyReplicaChange(ctx);
      return json({ snapshotEvents });
    }),
  );

  app.post(
    "/_test/faults",
    testHandle(async ({ req }) => {
      const body = await readJson(req);
      const code = body?.code as FaultCode;
      const times = body?.times ?? 1;
      if (!FAULT_CODES.includes(code) || typeof times !== "number" || !Number.isInteger(times) || times < 0) {
        return bad(`expected {"code": one of ${FAULT_CODES.join(", ")}, "times": N}`);
      }
      await ctx.ledger.test.armFault(code, times);
      ctx.faults.arm(code, times);
      return json({ faults: await ctx.ledger.test.pendingFaults() });
    }),
  );

  app.post(
    "/_test/reset",
    testHandle(async () => {
      await resetLedger(ctx);
      return json({ ok: true });
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
