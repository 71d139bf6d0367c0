/**
 * What a pass applies (docs/upstream-records.md, A replica of another deployment): every
 * delivered event and its venue, upserted by id through the ordinary apply path in batches, and,
 * once a pass has walked everything, the events and venues it did not see, deleted (mark and
 * sweep). The snapshot's change tracking, the watermark and the serving caches then work as they
 * do for any other source.
 */
import { API_SYNC } from "../../db/contract.ts";
import type { Db } from "../../db/driver.ts";
import { readWatermark } from "../../db/replica.ts";
import { applyRowsInTransaction } from "../apply.ts";
import type { UpstreamRecord } from "../records.ts";
import { encodeRecords } from "../rows.ts";
import { type Delivered, venueKey } from "./records.ts";

/**
 * Applies records in one transaction, numbered after the watermark read in it: the records of a
 * replica of another deployment carry no `seq` of their own, and numbering them inside the
 * transaction keeps two writers of one replica from skipping each other's records.
 */
export function applyNumbered(db: Db, records: UpstreamRecord[]): number {
  if (records.length === 0) return 0;
  return db.transaction(() => {
    let seq = readWatermark(db);
    for (const r of records) r.seq = ++seq;
    return applyRowsInTransaction(db, encodeRecords(records)).applied;
  });
}

export class PassWriter {
  private pending: UpstreamRecord[] = [];
  private pendingEvents = 0;
  /** Venues seen by this pass, with the fields last applied. */
  private readonly venues = new Map<number, string>();
  readonly events = new Set<number>();
  /** Records applied so far (upserts and deletes). */
  applied = 0;

  constructor(
    private readonly db: Db,
    /** Events per transaction. */
    private readonly batchEvents: number = API_SYNC.batchEvents,
  ) {}

  upsert(d: Delivered): void {
    const key = venueKey(d.venue);
    if (this.venues.get(d.venue.venue.id) !== key) {
      this.venues.set(d.venue.venue.id, key);
      this.pending.push(d.venue);
    }
    this.pending.push(d.event);
    this.events.add(d.event.event.id);
    if (++this.pendingEvents >= this.batchEvents) this.flush();
  }

  /** Everything delivered so far, applied. */
  flush(): void {
    this.applied += applyNumbered(this.db, this.pending);
    this.pending = [];
    this.pendingEvents = 0;
  }

  /** After a complete pass only: deletes the events and venues it did not see; returns the events removed. */
  sweep(): number {
    this.flush();
    const ids = (sql: string) => this.db.prepare<{ id: number }>(sql).all();
    const staleEvents = ids("SELECT id FROM events").filter((r) => !this.events.has(r.id));
    const staleVenues = ids("SELECT id FROM venues").filter((r) => !this.venues.has(r.id));
    const deletes: UpstreamRecord[] = [
      ...staleEvents.map((r) => ({ type: "delete" as const, seq: 0, entity: "event" as const, id: r.id })),
      ...staleVenues.map((r) => ({ type: "delete" as const, seq: 0, entity: "venue" as const, id: r.id })),
    ];
    for (let i = 0; i < deletes.length; i += this.batchEvents)
      this.applied += applyNumbered(this.db, deletes.slice(i, i + this.batchEvents));
    return staleEvents.length;
  }
}
