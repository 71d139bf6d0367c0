/**
 * The changes of a PostgreSQL upstream after its initial copy, read from the replica's logical
 * replication slot (pgoutput). Each upstream transaction is gathered whole; transactions that
 * arrive together are applied as one SQLite transaction that commits the log position they
 * end at, and only then is that position confirmed to PostgreSQL, so a crash at any point
 * neither loses a change nor applies one twice (docs/upstream-records.md, "PostgreSQL tables").
 */
import { LogicalReplicationService, type Pgoutput, PgoutputPlugin } from "pg-logical-replication";
import type { Change, ChangeApplier, ChangeResult } from "./apply.ts";
import { clientConfig, explain } from "./connect.ts";
import { compareLsn, formatLsn, laterLsn, lsnValue } from "./lsn.ts";
import type { PostgresSource, UpstreamTable } from "./schema.ts";

export interface StreamOptions {
  slot: string;
  publication: string;
  /** The position the replica has committed: streaming resumes right after it. */
  position: string;
  /** Stop once caught up with this position (a one-off sync); follow forever when absent. */
  until?: string;
  signal?: AbortSignal;
  /** Once the server has started sending the slot's changes. */
  onStart?: () => void;
  /** After each applied batch (the serving process refreshes its snapshot). */
  onApplied?: (result: ChangeResult, position: string, changes: number) => void;
}

export interface StreamCounts {
  changes: number;
  transactions: number;
  position: string;
}

/** Upstream transactions gathered while the last batch was applied: at most this many changes go in one. */
const MAX_BATCH_CHANGES = 20_000;

const FOLLOW_PING_MS = 10_000;
/**
 * While following an upstream whose tables are idle, the slot moves on past the rest of the
 * server's log at most this often: a slot holds back at most this much of that log.
 */
const ADVANCE_EVERY_MS = 30_000;
const CATCH_UP_PING_MS = 500;

/**
 * Streams until `until` is reached, the signal aborts, or the connection fails (rejects with a
 * one-line UpstreamError).
 */
export function streamChanges(
  source: PostgresSource,
  applier: ChangeApplier,
  options: StreamOptions,
): Promise<StreamCounts> {
  const counts: StreamCounts = { changes: 0, transactions: 0, position: options.position };
  const service = new LogicalReplicationService(clientConfig(source), {
    // Confirmed by hand, only after the SQLite commit; never on a timer.
    acknowledge: { auto: false, timeoutSeconds: 0 },
  });
  const plugin = new PgoutputPlugin({ protoVersion: 1, publicationNames: [options.publication] });
  const tables = new Map<number, UpstreamTable>();
  let open: Change[] | null = null;
  let queued: Array<{ changes: Change[]; end: string }> = [];
  let scheduled = false;
  /** Highest position confirmed to PostgreSQL. */
  let confirmed = options.position;
  /** When an idle position was last committed (`performance.now()`); never, at first. */
  let advancedAt = -Infinity;

  return new Promise<StreamCounts>((resolve, reject) => {
    let settled = false;
    const finish = (err?: unknown) => {
      if (settled) return;
      settled = true;
      options.signal?.removeEventListener("abort", onAbort);
      clearInterval(pinger);
      service.removeAllListeners();
      void service.stop().catch(() => {});
      if (err === undefined) resolve(counts);
      else reject(explain(err, source));
    };
    const onAbort = () => {
      // What was received whole is applied first; an open transaction is read again next time.
      try {
        applyQueued();
      } catch (err) {
        return finish(err);
      }
      finish();
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });
    // A status update asking for a keepalive back: it tells a one-off sync how far the server
    // has read (the heartbeat below), and keeps an idle connection known to be alive.
    const pinger = setInterval(
      () => void service.acknowledge(formatLsn(lsnValue(confirmed) - 1n), true).catch(() => {}),
      options.until === undefined ? FOLLOW_PING_MS : CATCH_UP_PING_MS,
    );
    pinger.unref?.();

    // The library adds one to the position it sends; PostgreSQL's own subscribers confirm the
    // commit's end position itself, which is what this sends.
    const confirm = (lsn: string) => {
      if (compareLsn(lsn, confirmed) <= 0) return;
      confirmed = laterLsn(lsn, confirmed);
      void service.acknowledge(formatLsn(lsnValue(lsn) - 1n)).catch(() => {});
    };
    const caughtUp = (lsn: string) => options.until !== undefined && compareLsn(lsn, options.until) >= 0;

    const applyQueued = () => {
      scheduled = false;
      if (queued.length === 0) return;
      const batch = queued;
      queued = [];
      const changes = batch.flatMap((t) => t.changes);
      const end = batch[batch.length - 1].end;
      const result = applier.apply(changes, end);
      counts.changes += changes.length;
      counts.transactions += batch.length;
      counts.position = end;
      confirm(end);
      options.onApplied?.(result, end, changes.length);
    };
    const schedule = () => {
      if (scheduled) return;
      scheduled = true;
      setImmediate(() => {
        if (settled) return; // stopped meanwhile: what is queued is read again next time
        try {
          applyQueued();
          if (caughtUp(counts.position) && open === null) finish();
        } catch (err) {
          finish(err);
        }
      });
    };

    service.on("data", (_lsn: string, msg: Pgoutput.Message) => {
      try {
        switch (msg.tag) {
          case "relation":
            if (msg.schema === source.schema && (msg.name === "venues" || msg.name === "events"))
              tables.set(msg.relationOid, msg.name);
            else tables.delete(msg.relationOid);
            break;
          case "begin":
            open = [];
            break;
          case "insert":
          case "update": {
            const table = tables.get(msg.relation.relationOid);
            if (table && open) open.push({ op: "upsert", table, row: msg.new });
            break;
          }
          case "delete": {
            const table = tables.get(msg.relation.relationOid);
            if (table && open) open.push({ op: "delete", table, row: (msg.key ?? msg.old)! });
            break;
          }
          case "truncate":
            for (const rel of msg.relations) {
              const table = tables.get(rel.relationOid);
              if (table && open) open.push({ op: "truncate", table });
            }
            break;
          case "commit": {
            const end = formatLsn(lsnValue(msg.commitEndLsn!));
            const changes = open ?? [];
            open = null;
            // A transaction at or before the committed position was applied before a restart.
            if (
              compareLsn(end, counts.position) <= 0 ||
              (queued.length > 0 && compareLsn(end, queued[queued.length - 1].end) <= 0)
            )
              break;
            queued.push({ changes, end });
            if (queued.reduce((n, t) => n + t.changes.length, 0) >= MAX_BATCH_CHANGES) applyQueued();
            schedule();
            break;
          }
        }
      } catch (err) {
        finish(err);
      }
    });
    service.on("heartbeat", (lsn: string, _time: number, shouldRespond: boolean) => {
      // Nothing received and unapplied: everything before `lsn` that the publication covers has
      // been applied, so the slot may move on (it would otherwise hold back the server's log).
      const idle = open === null && queued.length === 0 && !scheduled;
      if (idle) {
        // Committed in the replica before it is confirmed, as every applied position is. While
        // following, at most every ADVANCE_EVERY_MS: each such commit starts the serving
        // process's page caches again (they key on the replica's changes).
        const due = options.until !== undefined || performance.now() - advancedAt >= ADVANCE_EVERY_MS;
        if (compareLsn(lsn, confirmed) > 0 && due) {
          try {
            applier.advance(lsn);
          } catch (err) {
            return finish(err);
          }
          advancedAt = performance.now();
          counts.position = lsn;
          confirm(lsn);
        } else if (shouldRespond) void service.acknowledge(formatLsn(lsnValue(confirmed) - 1n)).catch(() => {});
        if (caughtUp(lsn)) finish();
      } else if (shouldRespond) {
        void service.acknowledge(formatLsn(lsnValue(confirmed) - 1n)).catch(() => {});
      }
    });
    service.on("error", (err: unknown) => finish(err));
    service.once("start", () => options.onStart?.());
    if (options.signal?.aborted) return finish();
    service
      .subscribe(plugin, options.slot, options.position)
      .then(() => finish(new Error("the replication stream ended")))
      .catch((err: unknown) => finish(err));
  });
}
