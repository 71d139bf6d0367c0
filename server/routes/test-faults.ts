/**
 * `/_test/faults` (docs/api.md, Test mode, Faults): arm, list and clear the faults that
 * server/fault-injection.ts takes. A fault that could never match (a code no route under its
 * `path` answers, a `delay` without `delayMs`) is refused when armed rather than left waiting.
 */
import * as v from "valibot";
import { FAULT_CODES, type FaultCode, TEST_FAULTS } from "../../db/contract.ts";
import type { AppContext } from "../context.ts";
import { FAULT_POINT_PATHS } from "../fault-injection.ts";
import type { FaultSpec } from "../faults.ts";
import { json } from "../handle.ts";
import type { RouteTable } from "../route-table.ts";
import { testHandle } from "./test-handle.ts";

const count = (max: number) => v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(max));

export const FaultInput = v.strictObject({
  code: v.picklist(FAULT_CODES as FaultCode[]),
  times: v.optional(count(TEST_FAULTS.maxTimes), 1),
  keyId: v.optional(v.nullable(count(Number.MAX_SAFE_INTEGER)), null),
  path: v.optional(v.nullable(v.pipe(v.string(), v.startsWith("/"), v.maxLength(2048))), null),
  delayMs: v.optional(v.nullable(count(TEST_FAULTS.maxDelayMs)), null),
});

/** The fault the body arms, or the message saying why it cannot match anything. */
export function parseFault(body: unknown): { fault: FaultSpec } | { message: string } {
  const parsed = v.safeParse(FaultInput, body);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const path = issue.path?.map((p) => p.key).join(".");
    return { message: path ? `${path}: ${issue.message}` : issue.message };
  }
  const fault = parsed.output;
  if ((fault.code === "delay") !== (fault.delayMs !== null))
    return { message: 'delayMs is given with code "delay", and only with it' };
  if (fault.path?.startsWith("/_test")) return { message: "test-mode endpoints are never faulted" };
  if (fault.code !== "delay" && fault.code !== "reset") {
    const under = fault.path;
    const answering = FAULT_POINT_PATHS.filter(
      (p) => p.codes.includes(fault.code) && (under === null || p.path.startsWith(under) || under.startsWith(p.path)),
    );
    if (answering.length === 0) return { message: `no endpoint under ${under} answers ${fault.code}` };
  }
  return { fault };
}

async function readBody(req: Request): Promise<unknown> {
  try {
    return await req.json();
  } catch {
    return undefined;
  }
}

export function testFaultRoutes(app: RouteTable, ctx: AppContext): void {
  app.post(
    "/_test/faults",
    testHandle(async ({ req }) => {
      const parsed = parseFault(await readBody(req));
      if ("message" in parsed) return json({ error: { code: "invalid_request", message: parsed.message } }, 400);
      return json(await ctx.ledger.test.armFault(parsed.fault), 201);
    }),
  );
  app.get(
    "/_test/faults",
    testHandle(async () => json({ faults: await ctx.ledger.test.pendingFaults() })),
  );
  app.delete(
    "/_test/faults",
    testHandle(async () => json({ cleared: await ctx.ledger.test.clearFaults() })),
  );
}
