/**
 * Changes of a PostgreSQL upstream applied to the replica through the same batch path as NDJSON
 * records (sync/apply.ts): rows become records, numbered on from the replica's watermark, and
 * one batch is one SQLite transaction that also commits the upstream log position it reaches.
 * A row that breaks the record rules is not applied: its older version leaves the replica
 * (it is no longer upstream's row), it is listed in upstream_rejects, and a later valid version
 * replaces it (docs/upstream-records.md, "PostgreSQL tables").
 */
import type { Db } from "../../db/driver.ts";
import { readWatermark, writeUpstreamState } from "../../db/replica.ts";
import { applyRows } from "../apply.ts";
import type { UpstreamRecord } from "../records.ts";
import { encodeRecords, type RowEncoder } from "../rows.ts";
import { idOfRow, type Row, recordOfRow } from "./records.ts";
import type { UpstreamTable } from "./schema.ts";

export type Change =
  /** `narrow`: none of the row's strings holds a character above U+00FF (sync/rows.ts RowEncoder.push). */
  | { op: "upsert"; table: UpstreamTable; row: Row; narrow?: boolean }
  | { op: "delete"; table: UpstreamTable; row: Row }
  | { op: "truncate"; table: UpstreamTable };

export interface Reject {
  table: UpstreamTable;
  id: number;
  reason: string;
}

export interface ChangeResult {
  /** Records applied (rejected rows' removals included). */
  applied: number;
  rejects: Reject[];
  watermark: number;
}

const ENTITY = { venues: "venue", events: "event" } as const;

export class ChangeApplier {
  private readonly clearReject;
  private readonly putReject;
  private readonly storedEvent;
  constructor(
    readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {
    this.clearReject = db.prepare("DELETE FROM upstream_rejects WHERE entity = $entity AND id = $id");
    this.putReject = db.prepare(
      "INSERT OR REPLACE INTO upstream_rejects(entity, id, reason, position, at_ms) VALUES ($entity, $id, $reason, $position, $at)",
    );
    this.storedEvent = db.prepare<Row>(
      `SELECT title, slug, cost_text, age, coalesce(website_raw, website) AS website, image_url, json(categories) AS categories,
         source, coalesce(ticket_links, '[]') AS ticket_links FROM events WHERE id = $id`,
    );
  }

  /**
   * An update leaves out a large (TOASTed) value it did not change; the replica holds it, as
   * applied from upstream (categories already filtered, which filtering again does not change).
   */
  private withUnchangedValues(table: UpstreamTable, row: Row): Row {
    if (table !== "events" || !leavesOut(row)) return row;
    const stored = this.storedEvent.get({ id: idOfRow(row) });
    if (!stored) return row;
    const filled: Row = { ...row };
    for (const [column, value] of Object.entries(row)) {
      if (value === undefined && column in stored) filled[column] = stored[column];
    }
    return filled;
  }

  /**
   * Turns `changes` into records numbered after `seq`, and says what becomes of each row's
   * reject entry. `fresh`: the rows are new to an emptied replica (the initial copy), so none
   * has an entry to clear. `into`: the records go straight into that encoder (the initial copy's
   * batches), not into `records`.
   */
  prepare(changes: readonly Change[], seq: number, options: { fresh?: boolean; into?: RowEncoder } = {}): Prepared {
    const records: UpstreamRecord[] = [];
    const rejects: Reject[] = [];
    const verdicts: Verdict[] = [];
    const into = options.into;
    // A delete record holds no strings, so it is narrow whatever its row held.
    const emit = (record: UpstreamRecord, narrow: boolean) => (into ? into.push(record, narrow) : records.push(record));
    for (const change of changes) {
      const entity = ENTITY[change.table];
      if (change.op === "truncate") {
        const ids = this.db.prepare<{ id: number }>(`SELECT id FROM ${change.table}`).all();
        for (const { id } of ids) emit({ type: "delete", seq: ++seq, entity, id: Number(id) }, true);
        continue;
      }
      const id = idOfRow(change.row);
      if (!Number.isSafeInteger(id) || id < 1) {
        rejects.push({ table: change.table, id, reason: "id: not a positive integer" });
        continue;
      }
      if (change.op === "delete") {
        emit({ type: "delete", seq: ++seq, entity, id }, true);
        verdicts.push({ entity, id, reason: null });
        continue;
      }
      const outcome = recordOfRow(change.table, this.withUnchangedValues(change.table, change.row), seq + 1);
      seq++;
      if ("record" in outcome) {
        emit(outcome.record, change.narrow === true);
        if (!options.fresh) verdicts.push({ entity, id, reason: null });
      } else {
        emit({ type: "delete", seq, entity, id }, true);
        rejects.push({ table: change.table, id, reason: outcome.reason });
        verdicts.push({ entity, id, reason: outcome.reason });
      }
    }
    return { records, rejects, verdicts, seq };
  }

  /** Writes reject entries and, unless null, the position reached (inside the caller's transaction). */
  book(verdicts: readonly Verdict[], position: string | null): void {
    const at = this.now();
    for (const { entity, id, reason } of verdicts) {
      if (reason === null) this.clearReject.run({ entity, id });
      else this.putReject.run({ entity, id, reason, position: position ?? "copy", at });
    }
    if (position !== null) writeUpstreamState(this.db, { position, appliedAt: at });
  }

  /**
   * Commits `position` alone: the publication's tables had no change up to it. Only a position
   * the replica holds is ever confirmed to PostgreSQL, so a replica behind its slot's confirmed
   * position is one that lost changes (sync/postgres/sync.ts, `ReplicaBehindError`).
   */
  advance(position: string): void {
    this.db.transaction(() => writeUpstreamState(this.db, { position }));
  }

  /** Applies `changes` in order and commits `position` with them, all in one transaction. */
  apply(changes: readonly Change[], position: string): ChangeResult {
    const prepared = this.prepare(changes, readWatermark(this.db));
    const result = applyRows(this.db, encodeRecords(prepared.records), () => this.book(prepared.verdicts, position));
    return { applied: result.applied, rejects: prepared.rejects, watermark: result.watermark };
  }
}

/**
 * Whether a value was left out. Not Object.values: an array per row, where every row of the
 * initial copy has all its values (about 2.5 % of its main thread's CPU profile).
 */
function leavesOut(row: Row): boolean {
  for (const column in row) if (row[column] === undefined) return true;
  return false;
}

/** What becomes of a row's reject entry: removed (null) or (re)written with a reason. */
export interface Verdict {
  entity: string;
  id: number;
  reason: string | null;
}

export interface Prepared {
  /** Empty when the records went into an encoder (`prepare`'s `into`). */
  records: UpstreamRecord[];
  rejects: Reject[];
  verdicts: Verdict[];
  /** The last seq given out. */
  seq: number;
}
