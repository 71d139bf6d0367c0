/**
 * Every filter combination of GET /v1/events reads through an index: EXPLAIN QUERY PLAN
 * of each page query, each estimate query and the hydration query shows no full scan of the
 * snapshot, events or venues. Checked on an empty replica and after ANALYZE on a populated one,
 * so statistics cannot talk the planner out of it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../db/driver.ts";
import { buildHalfQuery, choosePlan, type PageFilter, type PagePlan } from "../db/events-query.ts";
import { sourceGlob } from "../db/page-filter.ts";
import { openReplica } from "../db/replica.ts";
import { refreshSnapshot, SERVABLE_SQL } from "../db/snapshot.ts";
import { applyBatch } from "../sync/apply.ts";
import { parseRecordLine } from "../sync/records.ts";
import { eventRecord, venueRecord } from "./records.ts";

let dir: string;
let db: Db;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "marquee-plans-"));
  db = await openReplica(join(dir, "replica.db"));
});
afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

function plan(sql: string, params: object): string[] {
  return db
    .prepare<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
    .all(params as never)
    .map((r) => r.detail);
}

/** A full scan names the table without an index: `SCAN snapshot`, `SCAN e`, … */
function fullScans(details: string[]): string[] {
  return details.filter(
    (d) => /^SCAN (snapshot|events|venues|e|v|snapshot_sources)\b/.test(d) && !/USING (COVERING )?INDEX/.test(d),
  );
}

const FLAGS = ["state", "city", "source", "sources", "venues", "soldOut", "aggregators"] as const;

function filterFor(mask: number): PageFilter {
  const has = (f: (typeof FLAGS)[number]) => (mask & (1 << FLAGS.indexOf(f))) !== 0;
  return {
    afterMs: 1_900_000_000_000,
    beforeMs: 1_907_776_000_000,
    state: has("state") ? "CA" : null,
    city: has("city") ? "San Francisco" : null,
    sources: has("sources") ? ["ticketmaster", "scraper:fill_more"] : has("source") ? ["songkick"] : null,
    venueIds: has("venues") ? [1, 2, 3] : null,
    excludeSoldOut: has("soldOut"),
    excludeAggregators: has("aggregators"),
  };
}

/** Every plan choosePlan can return for a filter, whatever the estimates. */
function plansFor(f: PageFilter): PagePlan[] {
  const out: PagePlan[] = [f.city ? (f.state ? "state_city" : "city") : f.state ? "state" : "time"];
  if (f.sources) out.push("source");
  if (f.sources && !f.state && !f.city && !f.venueIds) out.push("source_each");
  if (f.venueIds) out.push("venue");
  if (f.venueIds && !f.state && !f.city) out.push("venue_states");
  return out;
}

const EXPECTED_INDEX: Record<PagePlan, RegExp> = {
  time: /^SEARCH snapshot USING PRIMARY KEY \(long=\? AND \(start_ms,id\)>\(\?,\?\) AND start_ms<\?\)$/,
  source:
    /^SEARCH snapshot USING (COVERING )?INDEX snapshot_source \(source=\? AND long=\? AND \(start_ms,id\)>\(\?,\?\) AND start_ms<\?\)$/,
  source_each:
    /^SEARCH snapshot USING (COVERING )?INDEX snapshot_source \(source=\? AND long=\? AND \(start_ms,id\)>\(\?,\?\) AND start_ms<\?\)$/,
  venue_states:
    /^SEARCH snapshot USING (COVERING )?INDEX snapshot_state \(state=\? AND long=\? AND \(start_ms,id\)>\(\?,\?\) AND start_ms<\?\)$/,
  venue:
    /^SEARCH snapshot USING (COVERING )?INDEX snapshot_venue \(venue_id=\? AND long=\? AND \(start_ms,id\)>\(\?,\?\) AND start_ms<\?\)$/,
  state_city:
    /^SEARCH snapshot USING (COVERING )?INDEX snapshot_city \(city=\? AND long=\? AND \(start_ms,id\)>\(\?,\?\) AND start_ms<\?\)$/,
  city: /^SEARCH snapshot USING (COVERING )?INDEX snapshot_city \(city=\? AND long=\? AND \(start_ms,id\)>\(\?,\?\) AND start_ms<\?\)$/,
  state:
    /^SEARCH snapshot USING (COVERING )?INDEX snapshot_state \(state=\? AND long=\? AND \(start_ms,id\)>\(\?,\?\) AND start_ms<\?\)$/,
};

function checkAllCombinations(): number {
  let checked = 0;
  for (let mask = 0; mask < 1 << FLAGS.length; mask++) {
    const f = filterFor(mask);
    if (f.sources && (mask & 0b1100) === 0b1100) continue; // one source flavour at a time
    for (const p of plansFor(f)) {
      // On ordered plans the geo venue check may run in SQL or in JS; check both query shapes.
      for (const venuesInSql of f.venueIds && p !== "venue" ? [true, false] : [true]) {
        for (const long of [0, 1] as const) {
          const q = buildHalfQuery(p, long, f, p === "source" ? ["songkick", "songkick:us"] : null, venuesInSql);
          const details = plan(q.sql, { ...q.params, ls: 0, lid: 0, lim: 26 });
          const where = `${p} long=${long} venuesInSql=${venuesInSql} ${JSON.stringify(f)}\n${details.join("\n")}`;
          expect(fullScans(details), where).toEqual([]);
          // An ordered range scan on the intended index …
          const searches = details.filter((d) => d.startsWith("SEARCH snapshot"));
          expect(searches, where).toHaveLength(1);
          expect(searches[0], where).toMatch(EXPECTED_INDEX[p]);
          // Every column the query tests after its range is in the index (replica v8), so it never
          // reads the table; only a source pattern on another plan's index still does.
          if (p !== "time" && (!f.sources || p === "source" || p === "source_each"))
            expect(searches[0], where).toMatch(/USING COVERING INDEX/);
          // … that needs no sort unless the plan sorts by design (bounded by its row count).
          const sorts = details.filter((d) => d.includes("TEMP B-TREE")).length;
          expect(sorts, where).toBe(p === "source" || p === "venue" ? 1 : 0);
          checked++;
        }
      }
    }
  }
  return checked;
}

describe("query plans", () => {
  it("every filter combination and plan reads the snapshot by index, on an empty replica", () => {
    expect(checkAllCombinations()).toBeGreaterThan(300);
  });

  it("and after ANALYZE on a populated replica", () => {
    const records = [
      ...Array.from({ length: 40 }, (_, v) =>
        venueRecord(v + 1, { state: v % 2 ? "CA" : "NY", city: `City ${v % 7}` }),
      ),
      ...Array.from({ length: 4000 }, (_, i) =>
        eventRecord(i + 1, (i % 40) + 1, new Date(1_900_000_000_000 + (i % 500) * 3_600_000).toISOString(), {
          endDate:
            i % 50 === 0 ? new Date(1_900_000_000_000 + (i % 500) * 3_600_000 + 5 * 86_400_000).toISOString() : null,
          source: ["ticketmaster", "songkick:us", "scraper:fillmore", "axs"][i % 4],
          isSoldOut: i % 9 === 0,
        }),
      ),
    ];
    applyBatch(
      db,
      records.map((r, i) => parseRecordLine(JSON.stringify(r), i + 1)),
    );
    refreshSnapshot(db, 1_900_000_000_000);
    db.exec("ANALYZE");
    expect(checkAllCombinations()).toBeGreaterThan(300);
  });

  it("estimates, the long-event bound and hydration use indexes too", () => {
    const g = sourceGlob("scraper:fill_more");
    expect(
      plan(
        "SELECT sum(events) AS n FROM snapshot_sources WHERE source >= $lo AND source < $hi AND source GLOB $glob",
        g,
      ),
    ).toEqual(["SEARCH snapshot_sources USING PRIMARY KEY (source>? AND source<?)"]);
    expect(
      plan("SELECT max(end_ms - start_ms) AS span FROM snapshot INDEXED BY snapshot_span WHERE long = 1", {}),
    ).toEqual(["SEARCH snapshot USING COVERING INDEX snapshot_span"]);
    const hydrate = plan(
      `SELECT e.id FROM json_each($ids) j JOIN events e ON e.id = j.value JOIN venues v ON v.id = e.venue_id WHERE ${SERVABLE_SQL}`,
      { ids: "[1,2]" },
    );
    expect(fullScans(hydrate)).toEqual([]);
    expect(hydrate).toContain("SEARCH e USING INTEGER PRIMARY KEY (rowid=?)");
    expect(hydrate).toContain("SEARCH v USING INTEGER PRIMARY KEY (rowid=?)");
  });

  it("chooses the plan the file comment documents", () => {
    const f = (o: Partial<PageFilter>): PageFilter => ({ ...filterFor(0), ...o });
    const est = (sourceRows: number | null, venueRows: number | null) => ({ sourceRows, venueRows, threshold: 1000 });
    expect(choosePlan(f({ sources: ["a"], state: "CA" }), est(10, null))).toBe("source");
    expect(choosePlan(f({ sources: ["a"], state: "CA" }), est(5000, null))).toBe("state");
    expect(choosePlan(f({ venueIds: [1], city: "X" }), est(null, 999))).toBe("venue");
    expect(choosePlan(f({ venueIds: [1], city: "X" }), est(null, 1001))).toBe("city");
    expect(choosePlan(f({ city: "X", state: "CA" }), est(null, null))).toBe("state_city");
    expect(choosePlan(f({ sources: ["a"] }), est(5000, null))).toBe("time");
    expect(choosePlan(f({}), est(null, null))).toBe("time");
  });

  it("scans a geo filter's states in memory when kept ranges are expected to hold its page", () => {
    const f = (o: Partial<PageFilter>): PageFilter => ({
      ...filterFor(0),
      venueIds: [1, 2],
      venueStates: ["CA"],
      ...o,
    });
    // 26 rows wanted among 100 of 10,000 in the states: about 2,600 rows scanned, sorting 100 costs less in SQLite.
    const est = { sourceRows: null, venueRows: 100, venueStateRows: 10_000, threshold: 1000, want: 26 };
    expect(choosePlan(f({}), est)).toBe("venue");
    expect(choosePlan(f({}), { ...est, keptScanRows: 8192 })).toBe("venue_states");
    // Past half a kept range, or with another column filter (no kept range), the sort stays.
    expect(choosePlan(f({}), { ...est, keptScanRows: 4096 })).toBe("venue");
    expect(choosePlan(f({ state: "CA" }), { ...est, keptScanRows: 8192 })).toBe("venue");
  });
});
