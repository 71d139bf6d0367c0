/**
 * Batches the writer parses itself (sync/pipeline.ts, sync/lines.ts): whichever thread parses a
 * batch, a run ends in the same replica with the same summary, and a bad line fails it the same
 * way (line, message, what stays applied). Written once, run under vitest on Node, where the
 * writer works in-thread (test/sync-handoff.test.ts), and under `bun test` with the writer on
 * its own thread (test/bun/sync-handoff.test.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openReplica, readWatermark } from "../db/replica.ts";
import { demoRecords } from "../sync/demo/generate.ts";
import type { HandOff } from "../sync/pipeline.ts";
import { streamSource } from "../sync/source.ts";
import { SyncError, type SyncSummary, syncFrom } from "../sync/sync-from.ts";
import type { TestApi } from "./driver-contract.ts";
import { dumpReplica, type ReplicaDump } from "./fixtures/replica-dump.ts";

const BATCH = 7;

/** A demo stream's lines with blank lines, a CRLF and a line above U+00FF mixed in. */
function demoLines(): string[] {
  const lines = [...demoRecords({ events: 120, seed: "handoff", anchor: "2026-12-01" })].map((r) => JSON.stringify(r));
  lines.splice(30, 0, "");
  lines[41] += "\r";
  const wide = JSON.parse(lines[52]) as { type: string; event?: { title: string }; venue?: { name: string } };
  if (wide.event) wide.event.title += " — Zoë ✓";
  else if (wide.venue) wide.venue.name += " ✓";
  lines[52] = JSON.stringify(wide);
  lines.push("", "  "); // blank lines after the last record
  return lines;
}

interface Outcome {
  summary: Omit<SyncSummary, "elapsedMs" | "snapshotMs" | "position" | "bytes" | "source">;
  error?: { line: number; message: string };
  dump: ReplicaDump;
  watermark: number;
}

/** Syncs `runs` (each a list of lines) one after another into a fresh replica. */
async function outcome(handOff: HandOff, ...runs: string[][]): Promise<Outcome> {
  const dir = mkdtempSync(join(tmpdir(), "marquee-handoff-"));
  const db = await openReplica(join(dir, "replica.db"));
  try {
    let summary: SyncSummary | undefined;
    let error: Outcome["error"];
    for (const lines of runs) {
      try {
        // A stream has no size up front: under Bun the run gets a writer thread (sync/writer.ts).
        summary = await syncFrom(db, streamSource("test", [`${lines.join("\n")}\n`]), {
          batchSize: BATCH,
          handOff,
          now: () => 0,
        });
      } catch (err) {
        if (!(err instanceof SyncError)) throw err;
        summary = err.summary;
        error = { line: err.line, message: err.message };
      }
    }
    const { elapsedMs, snapshotMs, position, bytes, source, ...rest } = summary!;
    return { summary: rest, error, dump: dumpReplica(db), watermark: readWatermark(db) };
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function handOffSuite(t: TestApi): void {
  const { describe, it, expect } = t;

  /** "never" is the reference: every batch parsed by the reading thread. */
  async function expectSame(...runs: string[][]): Promise<Outcome> {
    const reference = await outcome("never", ...runs);
    expect(await outcome("always", ...runs)).toEqual(reference);
    expect(await outcome("balance", ...runs)).toEqual(reference);
    return reference;
  }

  describe("batches parsed by the writer", () => {
    it("end in the replica and summary of batches parsed by the reader", async () => {
      const result = await expectSame(demoLines());
      expect(result.error).toBeUndefined();
      expect(result.summary.batches).toBeGreaterThan(10);
      expect(result.summary.applied).toBe(result.summary.records);
    });

    it("resume a replica the same way: records at or below the watermark are skipped", async () => {
      const lines = demoLines();
      const result = await expectSame(lines.slice(0, 60), lines);
      expect(result.summary.skipped).toBeGreaterThan(50);
    });

    // Batch 1 (lines 1-7) is parsed by the reader; with "always" every batch after is raw lines.
    // Positions: inside a raw batch, its first and last line (the reader parses the last one).
    for (const at of [11, 15, 21, 28, 64]) {
      it(`fail at a bad line ${at} with its number, keeping only the batches before it`, async () => {
        const lines = demoLines();
        lines[at - 1] = "{not json";
        const result = await expectSame(lines);
        expect(result.error?.line).toBe(at);
        expect(result.error?.message).toMatch(new RegExp(`^line ${at}: not valid JSON`));
        expect(result.summary.lines).toBe(at);
        expect(result.watermark).toBe(result.summary.watermark);
      });
    }

    for (const at of [15, 22, 29]) {
      it(`fail at a seq that does not increase on line ${at}, at or across a batch boundary`, async () => {
        const lines = demoLines();
        const record = JSON.parse(lines[at - 1]) as { seq: number };
        record.seq = (JSON.parse(lines[at - 2]) as { seq: number }).seq;
        lines[at - 1] = JSON.stringify(record);
        const result = await expectSame(lines);
        expect(result.error?.message).toContain(`line ${at}: seq ${record.seq} does not increase`);
      });
    }
  });
}
