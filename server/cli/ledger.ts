/**
 * `marquee ledger copy --to redis://…` (docs/operations.md, Moving the ledger to Redis): the
 * SQLite ledger beside the replica, copied into an empty Redis ledger, so moving to several
 * servers keeps every key, account, trial, row count and handoff.
 */
import { existsSync } from "node:fs";
import { ledgerPathFor } from "../../db/ledger.ts";
import { readLedgerSnapshot } from "../../db/ledger-export.ts";
import { lockLedgerForServing } from "../../db/serve-lock.ts";
import { createClock } from "../clock.ts";
import { assertLedgerUrl, resolveConfig } from "../config.ts";
import { createFaults } from "../faults.ts";
import { openSqliteLedger } from "../ledger/sqlite.ts";
import { type Command, output, parseFlags, UsageError } from "./args.ts";
import { CONFIG_FLAG, readSharedSettings } from "./settings.ts";

async function copy(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { to: { type: "string" }, ...CONFIG_FLAG }, true);
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  if (!values.to) throw new UsageError("--to redis://[user:password@]host:port[/db] is required");
  await assertLedgerUrl(values.to, "--to");
  // The source is always the SQLite ledger beside the replica, whatever ledger servers are told to use.
  const { dbPath } = resolveConfig({ dbPath: readSharedSettings(values).db });
  const path = ledgerPathFor(dbPath);
  if (path === ":memory:" || !existsSync(path)) throw new Error(`no SQLite ledger at ${path}`);
  // Held for the whole copy: a server that ran on now would write what Redis never gets.
  const lock = await lockLedgerForServing(path).catch((err: Error) => {
    throw new Error(`${err.message}: stop it first, so nothing it writes is left behind`);
  });
  try {
    const ledger = await openSqliteLedger(path, createClock(), createFaults());
    let snapshot: ReturnType<typeof readLedgerSnapshot>;
    try {
      snapshot = readLedgerSnapshot(ledger.db);
    } finally {
      await ledger.close();
    }
    const { importIntoRedis } = await import("../ledger/redis-import.ts");
    const { displayRedisUrl } = await import("../ledger/redis-connection.ts");
    const counts = await importIntoRedis(values.to, snapshot);
    const to = displayRedisUrl(values.to);
    const human = [
      `copied the ledger ${path} to ${to}: ${counts.accounts} accounts, ${counts.keys} keys, ${counts.trials} trials, ` +
        `${counts.usageEntries} usage entries, ${counts.handoffs} handoffs (${counts.clicks} redeemed), ${counts.settings} settings`,
      "Start every server with --ledger (or MARQUEE_LEDGER) naming that Redis; keep the SQLite ledger as a backup.",
    ].join("\n");
    output(values.json, { from: path, to, ...counts }, human);
    return 0;
  } finally {
    lock?.close();
  }
}

export const ledgerCommand: Command = {
  usage: `marquee ledger copy --to redis://[user:password@]host:port[/db] [--db PATH] [--config FILE] [--json]

Copies the SQLite ledger beside the replica (--db) into the Redis ledger at --to, which must be
empty: accounts with their plans and policies, keys (digests only; every key keeps working),
trials, delivered rows, handoffs and their clicks, and the cursor secret (cursors keep working).
Rate buckets start full; portal sessions and sign-in links are not copied (owners sign in again).
No marquee serve may run on the SQLite ledger meanwhile: the copy holds its serve lock.`,
  async run(argv) {
    const [sub, ...rest] = argv;
    if (sub === "copy") return copy(rest);
    throw new UsageError(sub ? `unknown subcommand '${sub}' (copy)` : "expected a subcommand: copy");
  },
};
