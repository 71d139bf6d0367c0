/**
 * Test mode's faults at work (docs/api.md, Test mode, Faults). Every route but `/_test/*` first
 * asks the ledger's test state for the first armed fault that matches the request
 * (server/faults.ts): its path, its key, and the codes its route can answer with. The question is
 * asked once, before the route runs, so a faulted request spends nothing: no request-rate units,
 * no rows, no trial start, no handoff slot.
 *
 * - An error code answers as the route itself refuses with it (server/list/refusals.ts for
 *   `/v1/events`, `handoffRefusal` for `/v1/ticket-handoffs`, the 503 page for Continue).
 * - `delay` waits `delayMs`, then the route answers as it would have.
 * - `reset` closes the connection without an answer: the route's answer is a body that fails
 *   before its first byte, which makes `Bun.serve` and the `node:http` listener drop the
 *   connection; an in-process `app.request` rejects instead (`rejectResetsInProcess`). A HEAD
 *   request is never reset: its answer has no body to fail.
 *
 * On a shared ledger the same round trip reads the shared test clock, which every route follows
 * (server/app.ts follows it for `/_test/*`).
 *
 * A code fault needs the request's key (a real refusal of it depends on the key's account), so
 * requests whose key does not authenticate match only `delay` and `reset`.
 */
import type { H3 } from "h3";
import type { Account } from "../db/accounts.ts";
import {
  type FaultCode,
  HANDOFF_FAULT_CODES,
  type HandoffErrorCode,
  LIST_FAULT_CODES,
  type ListFaultCode,
} from "../db/contract.ts";
import type { AppContext } from "./context.ts";
import { isApiError } from "./errors.ts";
import type { Fault } from "./faults.ts";
import type { Reply, RequestScope, Route } from "./handle.ts";
import { onTrialPath } from "./limits/grant.ts";
import { PUBLISHED_RATE_LIMIT } from "./limits/headers.ts";
import { unavailable } from "./limits/ledger.ts";
import { listRefusal, refusableWith } from "./list/refusals.ts";
import { isGeoRequest } from "./params-geo.ts";
import type { RouteTable } from "./route-table.ts";
import { handoffRefusal } from "./routes/handoffs.ts";
import { handoffUnavailablePage } from "./routes/pages.ts";

/** The key a request authenticated with, and its account. */
interface Caller {
  keyId: number;
  account: Account | undefined;
}

/** A route that answers error codes: which it can answer this caller with, and how. */
interface FaultPoint {
  codes(caller: Caller | null): readonly FaultCode[];
  /** Throws the refusal (or returns the answer) of `code`. */
  answer(code: FaultCode, scope: RequestScope, caller: Caller | null): Promise<Reply>;
  /**
   * The answer when the ledger could not be asked for faults, where the route's own next ledger
   * step is on another connection that would wait out its own timeout (the list's counters).
   */
  unavailable?(scope: RequestScope): Reply;
}

/** The routes that answer error codes, by `METHOD path` as the route table has them. */
function faultPoints(ctx: AppContext): Map<string, FaultPoint> {
  const list: FaultPoint = {
    codes: (caller) => (caller?.account ? refusableWith(caller.account, LIST_FAULT_CODES) : []),
    async answer(code, scope, caller) {
      const account = caller!.account!;
      const trial = onTrialPath(account) ? await ctx.ledger.readTrial(account.id) : undefined;
      const { error, scopeHeaders } = listRefusal(ctx.list, code as ListFaultCode, {
        account,
        keyId: caller!.keyId,
        trial,
        geo: isGeoRequest(scope.url.searchParams),
        nowMs: ctx.clock.now(),
      });
      Object.assign(scope.headers, scopeHeaders);
      throw error;
    },
    unavailable(scope) {
      // What stage 2 answers when it cannot read the ledger (docs/api.md, Plans and access).
      Object.assign(scope.headers, PUBLISHED_RATE_LIMIT);
      throw unavailable("policy_unavailable");
    },
  };
  const handoffs: FaultPoint = {
    codes: (caller) => (caller ? HANDOFF_FAULT_CODES : []),
    async answer(code, scope) {
      throw await handoffRefusal(ctx, code as HandoffErrorCode, scope.req);
    },
  };
  const redeem: FaultPoint = {
    codes: () => ["handoff_unavailable"],
    answer: async () => handoffUnavailablePage(),
  };
  return new Map([
    ["GET /v1/events", list],
    ["HEAD /v1/events", list],
    ["POST /v1/ticket-handoffs", handoffs],
    ["POST /handoffs/:id/continue", redeem],
  ]);
}

/** The paths under which each error code can arise, for checking a fault's scope when it is armed. */
export const FAULT_POINT_PATHS: ReadonlyArray<{ path: string; codes: readonly FaultCode[] }> = [
  { path: "/v1/events", codes: LIST_FAULT_CODES },
  { path: "/v1/ticket-handoffs", codes: HANDOFF_FAULT_CODES },
  { path: "/handoffs/", codes: ["handoff_unavailable"] },
];

/** Wraps every route but `/_test/*` so that armed faults are taken before it runs. */
export function injectFaults(routes: RouteTable, ctx: AppContext): void {
  const points = faultPoints(ctx);
  for (const entry of routes.entries) {
    if (entry.path.startsWith("/_test/")) continue;
    const point = points.get(`${entry.method} ${entry.path}`) ?? null;
    const run = entry.handler.run as Route<RequestScope>;
    entry.handler = {
      ...entry.handler,
      // One server's own faults: none armed, nothing to ask. A shared ledger is asked every time,
      // and answers with its clock too.
      run: (scope: RequestScope) =>
        ctx.ledger.kind === "sqlite" && ctx.faults.size === 0 ? run(scope) : faulted(ctx, scope, run, point),
    };
  }
}

async function faulted(
  ctx: AppContext,
  scope: RequestScope,
  run: Route<RequestScope>,
  point: FaultPoint | null,
): Promise<Reply> {
  let caller: Caller | null;
  try {
    caller = await identify(ctx, scope);
  } catch {
    // The ledger cannot say whose key it is: it is in trouble, so nothing is injected and the
    // clock stays as it was; the route meets the same trouble and answers its 503 at once.
    return run(scope);
  }
  const codes: FaultCode[] = [...(point?.codes(caller) ?? []), "delay"];
  if (scope.method !== "HEAD") codes.push("reset");
  const target = { path: scope.url.pathname, keyId: caller?.keyId ?? null, codes };
  let fault: Fault | null = null;
  try {
    const taken = await ctx.ledger.test.takeFault(target);
    fault = taken.fault;
    // On a shared ledger the clock is the ledger's, read in the same step (server/app.ts).
    if (ctx.ledger.kind !== "sqlite") followClock(ctx, taken.clockMs);
  } catch {
    // A ledger that cannot answer injects nothing and leaves the clock as it was. The route
    // meets the same trouble and answers its 503 at once (the failed step made the connection
    // fail fast), except where its next step is on another connection: that answer is given here,
    // so the request still answers within one command timeout.
    return point?.unavailable ? point.unavailable(scope) : run(scope);
  }
  if (!fault) return run(scope);
  if (fault.code === "delay") {
    await new Promise((resolve) => setTimeout(resolve, fault.delayMs ?? 0));
    return run(scope);
  }
  if (fault.code === "reset") return new ConnectionReset();
  return point!.answer(fault.code, scope, caller);
}

/** This process's clock set to the shared test clock: frozen at `ms`, or the wall clock when null. */
export function followClock(ctx: AppContext, ms: number | null): void {
  if (ms === null) ctx.clock.unfreeze();
  else ctx.clock.set(ms);
}

/**
 * The request's key and its account, read as stages 1 and 2 read them (spending nothing); null
 * without a key that authenticates. Rejects when the ledger cannot answer.
 */
async function identify(ctx: AppContext, scope: RequestScope): Promise<Caller | null> {
  if (scope.header("authorization") === null) return null;
  try {
    const identity = await ctx.access.authenticate(scope.req);
    return { keyId: identity.keyId, account: await ctx.access.account(identity.accountId) };
  } catch (err) {
    if (isApiError(err) && err.code === "invalid_api_key") return null;
    throw err;
  }
}

/**
 * A `reset` fault's answer: a body that fails before its first byte, so the listener closes the
 * connection without having sent anything.
 */
export class ConnectionReset extends Response {
  constructor() {
    // An error without a value: Bun logs nothing for it.
    super(new ReadableStream({ start: (controller) => controller.error(undefined) }));
  }
}

/**
 * In-process (`app.request`, the way tests drive the app without a port) there is no connection
 * to close: a `reset` fault rejects the request's promise, as `fetch` rejects when a server hangs up.
 */
export function rejectResetsInProcess(app: H3): void {
  const request = app.request;
  app.request = (...args: Parameters<H3["request"]>) =>
    Promise.resolve(request(...args)).then((res) => {
      if (res instanceof ConnectionReset) {
        throw new TypeError(
          "fetch failed: the server closed the connection without an answer (a test-mode reset fault)",
        );
      }
      return res;
    });
}
