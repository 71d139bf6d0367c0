/**
 * The serving process reads the replica through a memory map (db/tuning.ts
 * HOT_PATH.replicaMmapBytes): on this driver too the pragma takes, and pages read through the
 * map see what another connection commits afterwards.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { openReplica } from "../db/replica.ts";
import { HOT_PATH } from "../db/tuning.ts";
import { applyBatch } from "../sync/apply.ts";
import { parseRecordLine } from "../sync/records.ts";
import { eventRecord, venueRecord } from "./records.ts";

const dir = mkdtempSync(join(tmpdir(), "marquee-mmap-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("maps the replica and reads another connection's commits through the map", async () => {
  const path = join(dir, "replica.db");
  const writer = await openReplica(path);
  const reader = await openReplica(path, { mmapBytes: HOT_PATH.replicaMmapBytes });
  const plain = await openReplica(path);
  try {
    expect(Number(reader.pragma("mmap_size"))).toBeGreaterThan(0);
    expect(Number(plain.pragma("mmap_size"))).toBe(0);
    const count = () => reader.prepare<{ n: number }>("SELECT count(*) AS n FROM events").get()!.n;
    expect(count()).toBe(0);
    const records = [
      venueRecord(1, {}),
      ...Array.from({ length: 500 }, (_, i) => eventRecord(i + 1, 1, "2030-01-01T20:00:00Z")),
    ];
    applyBatch(
      writer,
      records.map((r, i) => parseRecordLine(JSON.stringify(r), i + 1)),
    );
    // Checkpointed into the file itself, which the map reads.
    writer.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    expect(count()).toBe(500);
  } finally {
    reader.close();
    plain.close();
    writer.close();
  }
});
