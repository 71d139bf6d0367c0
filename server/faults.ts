/**
 * Test mode's faults (docs/api.md, Test mode): each armed fault fails the next `times` requests it
 * matches, in the order the faults were armed, one fault per request. What a request offers to
 * match (its path, its key, the codes its route can answer with) is worked out once per request
 * by server/fault-injection.ts; the answer a fault gives is built there too.
 *
 * This is the store of one process (the SQLite ledger's test state, server/ledger/sqlite.ts); a
 * shared ledger keeps the same records in Redis and matches them with the same rule in one
 * script (server/ledger/redis-test-state.ts).
 */
import type { FaultCode } from "../db/contract.ts";

/** A fault as `POST /_test/faults` arms it. */
export interface FaultSpec {
  code: FaultCode;
  /** Requests it still fails. */
  times: number;
  /** Only requests with this key (its id); null: any request. */
  keyId: number | null;
  /** Only requests whose path starts with this; null: any path. */
  path: string | null;
  /** `delay` only: how long the answer waits. */
  delayMs: number | null;
}

export interface Fault extends FaultSpec {
  /** Ids grow in the order faults are armed (from 1 after a reset). */
  id: number;
}

/** What one request offers a fault: a fault matches when all three agree. */
export interface FaultTarget {
  path: string;
  /** The request's key, when it authenticated; else null. */
  keyId: number | null;
  /** The codes this request can be answered with (`delay` and `reset` included where they apply). */
  codes: readonly FaultCode[];
}

/** The one matching rule (mirrored in Lua by server/ledger/redis-test-state.ts). */
export function faultMatches(fault: FaultSpec, target: FaultTarget): boolean {
  return (
    target.codes.includes(fault.code) &&
    (fault.keyId === null || fault.keyId === target.keyId) &&
    (fault.path === null || target.path.startsWith(fault.path))
  );
}

export interface Faults {
  arm(spec: FaultSpec): Fault;
  /** The first armed fault that matches, with one use spent; null when none does. */
  take(target: FaultTarget): Fault | null;
  /** Armed faults in arming order, with the uses each has left. */
  pending(): Fault[];
  /** Disarms every fault; returns how many there were. */
  clear(): number;
  /** Armed faults, so a request can skip matching when there are none. */
  readonly size: number;
}

export function createFaults(): Faults {
  let armed: Fault[] = [];
  let nextId = 1;
  return {
    arm(spec) {
      const fault = { id: nextId++, ...spec };
      armed.push(fault);
      return { ...fault };
    },
    take(target) {
      const fault = armed.find((f) => faultMatches(f, target));
      if (!fault) return null;
      const taken = { ...fault };
      fault.times--;
      if (fault.times <= 0) armed = armed.filter((f) => f !== fault);
      return taken;
    },
    pending: () => armed.map((f) => ({ ...f })),
    clear() {
      const n = armed.length;
      armed = [];
      nextId = 1;
      return n;
    },
    get size() {
      return armed.length;
    },
  };
}
