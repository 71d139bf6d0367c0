/**
 * `marquee sync --from SRC [--follow]` (docs/operations.md, The program): pulls upstream records into the replica.
 * A PostgreSQL source's client and machinery (server/cli/sync-postgres.ts) load only for such a source.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { API_SYNC, SYNC } from "../../db/contract.ts";
import { assertSourceKind, openReplica } from "../../db/replica.ts";
import { COPY_THREAD_MIN_ROWS, isPostgresUrl } from "../../sync/postgres/schema.ts";
import { enterBackground, SYNC_PRIORITIES } from "../../sync/priority.ts";
import { createProgressBar, formatSummary } from "../../sync/progress.ts";
import { openSource } from "../../sync/source.ts";
import { SyncError, type SyncSummary, syncFrom } from "../../sync/sync-from.ts";
import { resolveConfig } from "../config.ts";
import { abortOnSignals, type Command, intFlag, oneOf, UsageError } from "./args.ts";
import { parseSettings } from "./settings.ts";

export const syncCommand: Command = {
  usage: `marquee sync --from SRC [--follow] [--slot NAME] [--drop-slot] [--resync] [--batch-size N] [--thread-rows N] [--priority P] [--db PATH] [--config FILE] [--json]
       marquee sync --from-api https://HOST/v1/events?FILTERS [--follow] [--interval S] [--budget-reserve F]
                    [--aggregators] [--upstream-key-file PATH] [--db PATH] [--config FILE] [--json]

  --from SRC      an NDJSON file of upstream records (docs/upstream-records.md), - for stdin, an http(s):// URL of an
                  NDJSON stream (--follow asks again every 2 s), or a PostgreSQL URL
                  postgres://user:password@host:port/db[?schema=NAME] (default schema marquee)
  --slot NAME     PostgreSQL: the replica's replication slot (default: derived from --db)
  --drop-slot     PostgreSQL: drop the replica's slot (the next sync copies the tables again)
  --resync        PostgreSQL: copy both tables again from a new slot, whatever the replica held;
                  for a replica refused as behind its slot (restored from a backup, or copied)
  --follow        keep reading lines appended to the file until Ctrl-C / SIGTERM; the snapshot
                  is refreshed whenever it has caught up (at most every 5 s) and on exit.
                  With - (stdin) it changes nothing: stdin is read until it closes.
                  PostgreSQL: keep streaming the slot's changes (snapshot refreshed within 0.2 s).
  --batch-size N  records per transaction (default ${SYNC.batchSize}; PostgreSQL: rows per
                  transaction of the initial copy, default 5,000)
  --thread-rows N PostgreSQL: an initial copy of at least N rows is written by a second thread
                  (default ${COPY_THREAD_MIN_ROWS.toLocaleString("en-US")})
  --priority P    background (default): on Linux the sync runs in the scheduler's idle class,
                  so a server on the same cores always goes first and the sync takes what they
                  leave (alone on a machine it runs at full speed); elsewhere at nice 19.
                  normal: the priority it was started with.
  --config FILE   settings from a file (default $MARQUEE_CONFIG); every flag may also come from
                  MARQUEE_<FLAG> (MARQUEE_FROM, …) or the file's [sync] section, a flag winning
                  over the environment, the environment over the file

  --from-api URL  a replica of what another deployment's list endpoint selects for the URL's
                  filters (state, city, source, geo, exclusions; none: the whole feed), read with
                  the key in MARQUEE_UPSTREAM_KEY or --upstream-key-file PATH. A pass walks from
                  now to the account's lookahead horizon and upserts every event; only a pass that
                  walked everything removes those it did not see (docs/upstream-records.md,
                  A replica of another deployment).
  --interval S    with --follow: a pass every S seconds (default ${API_SYNC.intervalS})
  --budget-reserve F
                  leave this share of the row budget or trial allowance unspent (default ${API_SYNC.budgetReserve})
  --aggregators   also tell aggregators' events apart (a second walk: about twice the rows)

Records at or below the replica's watermark are skipped, so a rerun (or a run after an
interrupted one) applies only what is new. A bad line stops the run and names its line; the
batch it is in is not applied, batches committed before it stay applied. Ctrl-C stops reading
a file, commits what was read and refreshes the snapshot; a second Ctrl-C exits at once.`,
  async run(argv) {
    const { values } = parseSettings("sync", argv, {
      from: { type: "string" },
      follow: { type: "boolean", default: false },
      "batch-size": { type: "string" },
      "thread-rows": { type: "string" },
      priority: { type: "string", default: "background" },
      slot: { type: "string" },
      "drop-slot": { type: "boolean", default: false },
      resync: { type: "boolean", default: false },
      "from-api": { type: "string" },
      interval: { type: "string" },
      "budget-reserve": { type: "string" },
      aggregators: { type: "boolean", default: false },
      "upstream-key-file": { type: "string" },
    });
    const apiOnly = [
      values.interval !== undefined && "--interval",
      values["budget-reserve"] !== undefined && "--budget-reserve",
      values.aggregators && "--aggregators",
      values["upstream-key-file"] !== undefined && "--upstream-key-file",
    ].filter(Boolean);
    if (values["from-api"] !== undefined) {
      if (values.from !== undefined)
        throw new UsageError("--from and --from-api name two sources; a replica follows one kind of source");
      const otherFlags = [
        values.slot !== undefined && "--slot",
        values["drop-slot"] && "--drop-slot",
        values["thread-rows"] !== undefined && "--thread-rows",
        values["batch-size"] !== undefined && "--batch-size",
      ].filter(Boolean);
      if (otherFlags.length > 0) throw new UsageError(`${otherFlags.join(" and ")}: not for --from-api`);
      const { runApiSync } = await import("./sync-api.ts");
      return runApiSync(values["from-api"], {
        db: values.db,
        json: values.json,
        follow: values.follow,
        interval: values.interval,
        budgetReserve: values["budget-reserve"],
        aggregators: values.aggregators,
        upstreamKeyFile: values["upstream-key-file"],
      });
    }
    if (apiOnly.length > 0)
      throw new UsageError(`${apiOnly.join(" and ")} need${apiOnly.length > 1 ? "" : "s"} --from-api URL`);
    if (!values.from)
      throw new UsageError(
        "--from SRC is required (a file path, - for stdin, or a postgres:// URL), or --from-api URL",
      );
    if (isPostgresUrl(values.from))
      return syncPostgres(values.from, {
        ...values,
        batchSize: intFlag("batch-size", values["batch-size"], 1),
        threadRows: intFlag("thread-rows", values["thread-rows"], 0),
      });
    const postgresOnly = [
      values.slot !== undefined && "--slot",
      values["drop-slot"] && "--drop-slot",
      values.resync && "--resync",
      values["thread-rows"] !== undefined && "--thread-rows",
    ].filter(Boolean);
    if (postgresOnly.length > 0)
      throw new UsageError(
        `${postgresOnly.join(" and ")} need${postgresOnly.length > 1 ? "" : "s"} a postgres:// source`,
      );
    const batchSize = intFlag("batch-size", values["batch-size"], 1);
    // Before any thread is started: the writer thread and SQLite's sorters inherit it.
    const background =
      oneOf("priority", values.priority, SYNC_PRIORITIES) === "background" ? await enterBackground() : null;
    const { dbPath } = resolveConfig({ dbPath: values.db });
    const controller = new AbortController();
    const source = openSource(values.from, { follow: values.follow, signal: controller.signal });
    if (dbPath !== ":memory:") mkdirSync(dirname(dbPath), { recursive: true });
    const db = await openReplica(dbPath);
    // A serving process may hold the write lock for a snapshot refresh (seconds on a large
    // replica); this process has nothing better to do than wait for it.
    db.exec(`PRAGMA busy_timeout = ${SYNC.cliBusyTimeoutMs}`);
    try {
      assertSourceKind(db, "ndjson");
    } catch (err) {
      db.close();
      throw err;
    }

    // First signal: stop reading, commit what was read, refresh the snapshot. Second: exit now.
    const release = abortOnSignals(controller);
    const bar = createProgressBar(process.stderr, `syncing ${source.name}`);
    const report = (summary: SyncSummary, error?: SyncError) => {
      bar.clear();
      if (values.json)
        console.log(
          JSON.stringify(error ? { ...summary, error: { line: error.line, message: error.message } } : summary),
        );
      else if (!error) console.log(formatSummary(summary));
    };
    try {
      let sweptAt = 0;
      const onProgress: typeof bar.update = (p) => {
        // Threads the runtime starts later (I/O pool, collector) join the background too.
        if (background && p.elapsedMs - sweptAt >= 250) {
          sweptAt = p.elapsedMs;
          background.sweep();
        }
        bar.update(p);
      };
      const summary = await syncFrom(db, source, { batchSize, onProgress });
      report(summary);
      if (controller.signal.aborted && !values.follow && summary.position.offset < (source.size ?? 0)) {
        // Stopped before the end of the input: what was read is applied; a rerun resumes.
        console.error(`marquee sync: interrupted at line ${summary.position.line}; run it again to resume`);
        return 130;
      }
      return 0;
    } catch (err) {
      if (!(err instanceof SyncError)) throw err;
      report(err.summary, err);
      console.error(`marquee sync: ${source.name}: ${err.message}`);
      return 1;
    } finally {
      release();
      db.close();
    }
  },
};

async function syncPostgres(
  from: string,
  values: {
    db?: string;
    follow: boolean;
    slot?: string;
    "drop-slot": boolean;
    resync: boolean;
    json: boolean;
    batchSize?: number;
    threadRows?: number;
  },
): Promise<number> {
  const { dbPath } = resolveConfig({ dbPath: values.db });
  if (dbPath !== ":memory:") mkdirSync(dirname(dbPath), { recursive: true });
  const db = await openReplica(dbPath);
  db.exec(`PRAGMA busy_timeout = ${SYNC.cliBusyTimeoutMs}`);
  try {
    // The PostgreSQL client and the streaming machinery load for a postgres:// source only.
    const { runPostgresSync } = await import("./sync-postgres.ts");
    return await runPostgresSync(db, from, {
      follow: values.follow,
      slot: values.slot,
      dropSlot: values["drop-slot"],
      resync: values.resync,
      json: values.json,
      batchSize: values.batchSize,
      threadRows: values.threadRows,
    });
  } finally {
    db.close();
  }
}
