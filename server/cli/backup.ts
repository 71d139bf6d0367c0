/**
 * `marquee backup --to DIR` (docs/operations.md, Backups): consistent copies of the replica and
 * the SQLite ledger, taken while `marquee serve` runs, and how to put them back.
 */
import { existsSync, mkdirSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { type BackupCopy, backupDatabase } from "../../db/backup.ts";
import { openDb } from "../../db/driver.ts";
import { ledgerPathFor } from "../../db/ledger.ts";
import { readSourceKind } from "../../db/replica.ts";
import { resolveConfig } from "../config.ts";
import { type Command, parseFlags, UsageError } from "./args.ts";
import { CONFIG_FLAG, readSharedSettings } from "./settings.ts";

export const backupCommand: Command = {
  usage: `marquee backup --to DIR [--db PATH] [--ledger URL] [--config FILE] [--json]

Writes DIR/<replica>.db and DIR/<replica>.ledger.db: each a consistent copy of one moment (SQLite's
VACUUM INTO), checked before it is named, taken while marquee serve keeps serving. DIR is created
when missing; files already there are never overwritten. A ledger in Redis (--ledger redis://…)
is not copied: Redis keeps it (its append-only file; redis-cli --rdb FILE takes a copy).
Prints the commands that restore the copies.`,
  async run(argv) {
    const { values, positionals } = parseFlags(
      argv,
      { to: { type: "string" }, ledger: { type: "string" }, ...CONFIG_FLAG },
      true,
    );
    if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
    if (!values.to) throw new UsageError("--to DIR is required");
    const shared = readSharedSettings(values);
    const { dbPath, ledgerUrl } = resolveConfig({ dbPath: shared.db, ledgerUrl: shared.ledger });
    if (dbPath === ":memory:") throw new UsageError("an in-memory replica cannot be backed up");
    const replica = resolve(dbPath);
    const dir = resolve(values.to);
    mkdirSync(dir, { recursive: true });
    const copies: Record<string, BackupCopy> = {};
    copies.replica = await backupDatabase(replica, join(dir, basename(replica)));
    const ledger = ledgerPathFor(replica);
    // A replica only ever synced, never served, has no ledger yet: nothing to copy.
    const noLedger = ledgerUrl === undefined && !existsSync(ledger);
    if (ledgerUrl === undefined && !noLedger) copies.ledger = await backupDatabase(ledger, join(dir, basename(ledger)));
    const followsPostgres = await replicaFollowsPostgres(copies.replica.to);
    const restore = restoreSteps(copies, followsPostgres);
    // The Redis client's module only when a Redis ledger is named.
    const displayRedisUrl =
      ledgerUrl === undefined ? null : (await import("../ledger/redis-connection.ts")).displayRedisUrl;
    const redisNote =
      ledgerUrl === undefined || displayRedisUrl === null
        ? null
        : `the ledger is in Redis at ${displayRedisUrl(ledgerUrl)}: Redis keeps it (its append-only file); redis-cli --rdb FILE takes a copy`;
    if (values.json) {
      console.log(JSON.stringify({ ...copies, ledgerInRedis: redisNote !== null, restore }));
      return 0;
    }
    for (const [what, c] of Object.entries(copies))
      console.log(`backed up the ${what} ${c.from} to ${c.to} (${mib(c.bytes)}, schema version ${c.schemaVersion})`);
    if (redisNote) console.log(redisNote);
    if (noLedger) console.log(`no ledger at ${ledger} yet: nothing to back up there`);
    console.log(["", "To restore:", ...restore.map((line) => `  ${line}`)].join("\n"));
    return 0;
  },
};

const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;

/** A single-quoted shell word. */
const sh = (path: string) => (/^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replaceAll("'", "'\\''")}'`);

/**
 * Stop, remove the files' write-ahead logs (a log left beside a restored file would be replayed
 * into it), copy back, start. A replica that follows PostgreSQL is behind its slot once
 * restored: its next sync refuses it until `--resync` copies the tables again.
 */
function restoreSteps(copies: Record<string, BackupCopy>, followsPostgres: boolean): string[] {
  const files = Object.values(copies);
  const steps = [
    "# 1. stop marquee serve (e.g. systemctl stop marquee), then:",
    `rm -f ${files.flatMap((c) => [`${sh(c.from)}-wal`, `${sh(c.from)}-shm`]).join(" ")}`,
    ...files.map((c) => `cp ${sh(c.to)} ${sh(c.from)}`),
  ];
  if (followsPostgres)
    steps.push(
      "# 2. the replica follows PostgreSQL and is now behind its replication slot: copy the tables again with",
      `marquee sync --from <its postgres:// URL> --db ${sh(copies.replica.from)} --resync`,
      "# 3. start marquee serve again",
    );
  else steps.push("# 2. start marquee serve again");
  return steps;
}

async function replicaFollowsPostgres(path: string): Promise<boolean> {
  const db = await openDb(path, { readonly: true });
  try {
    return readSourceKind(db) === "postgres";
  } catch {
    return false; // a replica that never had a schema follows nothing
  } finally {
    db.close();
  }
}
