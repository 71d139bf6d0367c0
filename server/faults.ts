/**
 * Fault injection for test mode (docs/api.md, Test mode): the next N requests that reach the point where
 * a code can arise fail with it. Production code asks `faults.take(code)` at that point.
 */
import type { FaultCode } from "../db/contract.ts";

export interface Faults {
  arm(code: FaultCode, times: number): void;
  /** True (and one use spent) when a fault for `code` is armed. */
  take(code: FaultCode): boolean;
  clear(): void;
  pending(): Partial<Record<FaultCode, number>>;
}

export function createFaults(): Faults {
  const armed = new Map<FaultCode, number>();
  return {
    arm(code, times) {
      if (times > 0) armed.set(code, times);
      else armed.delete(code);
    },
    take(code) {
      const n = armed.get(code);
      if (!n) return false;
      if (n <= 1) armed.delete(code);
      else armed.set(code, n - 1);
      return true;
    },
    clear: () => armed.clear(),
    pending: () => Object.fromEntries(armed),
  };
}
