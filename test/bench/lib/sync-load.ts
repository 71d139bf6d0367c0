/**
 * Sync figures: throughput of a 1,000,000-event import into an empty replica, and the
 * default page's p99 while a 50,000-change sync runs against the replica being served.
 */
import { createReadStream, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Db } from "../../../db/driver.ts";
import { openReplica, readWatermark } from "../../../db/replica.ts";
import { BUN } from "./config.ts";
import { DEMO_NDJSON, REPLICA_DB, RUN_DIR } from "./fixture.ts";
import { run, runOk } from "./proc.ts";
import { type LoadResult, type LoadSpec, startOpenEndedLoad } from "./wrk.ts";

export interface SyncThroughput {
  records: number;
  /** The median run's time. */
  seconds: number;
  recordsPerS: number;
  /** Every run's time, in order. */
  runs: number[];
}

/** Counts lines without holding the (large) file in memory. */
async function countRecords(path: string): Promise<number> {
  let lines = 0;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
  }
  return lines;
}

/**
 * `marquee sync` of the whole demo stream into a new replica, timed end to end (process
 * included), `runs` times; the median run is the figure (one run on this shared machine swings
 * by several seconds, as `npm run bench:sync --runs 3` shows).
 */
export async function measureSyncThroughput(runs: number): Promise<SyncThroughput> {
  const records = await countRecords(DEMO_NDJSON);
  const db = join(RUN_DIR, "sync-throughput.db");
  const clean = () => {
    for (const f of [db, db.replace(/\.db$/, ".ledger.db")])
      for (const s of ["", "-wal", "-shm"]) rmSync(f + s, { force: true });
  };
  const times: number[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      clean();
      times.push((await runOk(BUN, ["server/main.ts", "sync", "--from", DEMO_NDJSON, "--db", db])).ms / 1000);
    }
  } finally {
    clean();
  }
  const seconds = medianRun(times);
  return { records, seconds, recordsPerS: records / seconds, runs: times };
}

/** The median of timed runs (of an even count, the slower of the middle two). */
export function medianRun(seconds: readonly number[]): number {
  return [...seconds].sort((a, b) => a - b)[Math.floor(seconds.length / 2)];
}

interface EventRow {
  id: number;
  venueId: number;
  title: string;
  slug: string;
  startDate: string;
  endDate: string | null;
  costText: string | null;
  isFree: number | null;
  isSoldOut: number;
  isLowTickets: number;
  age: string | null;
  website: string | null;
  websiteBroken: number;
  imageUrl: string | null;
  categories: string;
  source: string;
  status: string;
  duplicateOf: number | null;
  ticketed: number;
  ticketLinks: string | null;
}

const bool = (x: number | null) => (x == null ? null : x === 1);

/**
 * `count` event records with seq above the replica's watermark, each updating an existing event
 * (spread over the whole id range) with a changed title and low-tickets flag: what a busy
 * upstream sends between two syncs.
 */
export async function writeChangeStream(count: number): Promise<{ file: string; records: number }> {
  const replica: Db = await openReplica(REPLICA_DB, { readonly: true });
  try {
    let seq = readWatermark(replica);
    const total = Number(replica.prepare<{ n: number }>("SELECT count(*) AS n FROM events").get()!.n);
    const stride = Math.max(1, Math.floor(total / count));
    const rows = replica
      .prepare<EventRow>(
        `SELECT id, venue_id AS venueId, title, slug, start_date AS startDate, end_date AS endDate, cost_text AS costText,
           is_free AS isFree, is_sold_out AS isSoldOut, is_low_tickets AS isLowTickets, age, coalesce(website_raw, website) AS website,
           website_broken AS websiteBroken, image_url AS imageUrl, categories, source, status, duplicate_of AS duplicateOf,
           ticketed, ticket_links AS ticketLinks
         FROM events WHERE rowid % $stride = 0 LIMIT $count`,
      )
      .all({ stride, count });
    const lines = rows.map((e) =>
      JSON.stringify({
        type: "event",
        seq: ++seq,
        event: {
          ...e,
          title: e.title.endsWith(" (updated)") ? e.title.slice(0, -10) : `${e.title} (updated)`,
          isFree: bool(e.isFree),
          isSoldOut: e.isSoldOut === 1,
          isLowTickets: e.isLowTickets !== 1,
          websiteBroken: e.websiteBroken === 1,
          ticketed: e.ticketed === 1,
          categories: JSON.parse(e.categories),
          ticketLinks: JSON.parse(e.ticketLinks ?? "[]"), // stored as validated upstream (replica v6)
        },
      }),
    );
    const file = join(RUN_DIR, "changes.ndjson");
    writeFileSync(file, `${lines.join("\n")}\n`);
    return { file, records: lines.length };
  } finally {
    replica.close();
  }
}

export interface SyncUnderLoad {
  records: number;
  syncSeconds: number;
  load: LoadResult;
}

/** Runs `marquee sync --from FILE` against the served replica while wrk loads `spec` for exactly as long. */
export async function measureSyncUnderLoad(spec: LoadSpec, file: string, records: number): Promise<SyncUnderLoad> {
  const load = startOpenEndedLoad(spec);
  await Bun.sleep(300); // connections open and warm before the sync starts
  const sync = await run(BUN, ["server/main.ts", "sync", "--from", file, "--db", REPLICA_DB]);
  const result = await load.stop();
  if (sync.code !== 0) throw new Error(`sync under load failed (${sync.code}): ${sync.stderr.slice(-2000)}`);
  return { records, syncSeconds: sync.ms / 1000, load: result };
}
