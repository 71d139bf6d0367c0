/**
 * What every operator command on the ledger shares (docs/operations.md, Accounts and keys): the
 * `--ledger` flag, the ledger it names, and ids given as arguments.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { ledgerPathFor } from "../../db/ledger.ts";
import { createClock } from "../clock.ts";
import { assertLedgerUrl, resolveConfig } from "../config.ts";
import { createFaults } from "../faults.ts";
import type { Ledger } from "../ledger/ledger.ts";
import { openSqliteLedger } from "../ledger/sqlite.ts";
import { UsageError } from "./args.ts";
import { CONFIG_FLAG, readSharedSettings } from "./settings.ts";

/** Every operator command that reads or writes the ledger takes the shared one with --ledger. */
export const LEDGER_FLAG = { ledger: { type: "string" }, ...CONFIG_FLAG } as const;

/**
 * Opens the ledger the servers use: the shared one named by --ledger, $MARQUEE_LEDGER or the
 * configuration file (docs/several-servers.md, "Run several servers"), else the SQLite file beside the
 * replica named by --db, $MARQUEE_DB, the file or the default.
 */
export async function openOperatorLedger(flags: { db?: string; ledger?: string; config?: string }): Promise<Ledger> {
  const shared = readSharedSettings(flags);
  const { dbPath, ledgerUrl } = resolveConfig({ dbPath: shared.db, ledgerUrl: shared.ledger });
  await assertLedgerUrl(ledgerUrl, shared.origins.ledger ?? "env");
  if (ledgerUrl !== undefined) {
    const { openRedisLedger } = await import("../ledger/redis.ts");
    return openRedisLedger(ledgerUrl);
  }
  if (dbPath !== ":memory:") mkdirSync(dirname(dbPath), { recursive: true });
  return openSqliteLedger(ledgerPathFor(dbPath), createClock(), createFaults());
}

/** A positive integer id, e.g. an account or key id given as an argument. */
export function idArg(name: string, value: string | undefined): number {
  if (value === undefined) throw new UsageError(`${name} is required`);
  if (!/^[1-9]\d*$/.test(value)) throw new UsageError(`${name} must be a positive integer`);
  return Number(value);
}
