/** Flags of `sync --from-api` that `serve --sync-from-api` shares (docs/operations.md, The program). */
import { API_SYNC } from "../../db/contract.ts";
import { UsageError } from "./args.ts";

/** `--budget-reserve F`: a share from 0 up to (not including) 1. */
export function budgetReserveFlag(value: string | undefined): number {
  if (value === undefined) return API_SYNC.budgetReserve;
  const f = Number(value);
  if (!/^\d*\.?\d+$/.test(value) || !(f >= 0 && f < 1))
    throw new UsageError("--budget-reserve must be a share from 0 to below 1, e.g. 0.1 (keep 10 % unspent)");
  return f;
}

export function intervalFlag(value: string | undefined): number {
  if (value === undefined) return API_SYNC.intervalS;
  if (!/^\d+$/.test(value) || Number(value) < 1)
    throw new UsageError("--interval must be a whole number of seconds >= 1");
  return Number(value);
}
