/**
 * Crash safety of `marquee sync` (docs/upstream-records.md): a sync killed with SIGKILL in the middle of a
 * large import, then run again, ends in exactly the state of an uninterrupted run, and the
 * killed run left only whole batches behind (nothing past its watermark).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openDb } from "../db/driver.ts";
import { openReplica, readWatermark } from "../db/replica.ts";
import { writeDemoData } from "../sync/demo/generate.ts";
import { dumpReplica } from "./fixtures/replica-dump.ts";
import { BUN, ROOT } from "./harness.ts";

const EVENTS = 100_000;
const BATCH = "2000";
let dir: string;
let file: string;
let total: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "marquee-kill-"));
  file = join(dir, "demo.ndjson");
  const fd = openSync(file, "w");
  try {
    total = (await writeDemoData({ events: EVENTS, seed: "kill", anchor: "2026-12-01" }, (c) => void writeSync(fd, c)))
      .records;
  } finally {
    closeSync(fd);
  }
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function startSync(db: string): {
  child: ChildProcess;
  done: Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>;
} {
  const child = spawn(BUN, ["server/main.ts", "sync", "--from", file, "--db", db, "--batch-size", BATCH, "--json"], {
    cwd: ROOT,
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d) => (stdout += d));
  child.stderr!.on("data", (d) => (stderr += d));
  const done = new Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done };
}

/** The replica's watermark as another process sees it, or 0 while it is still being created. */
async function peekWatermark(path: string): Promise<number> {
  try {
    const db = await openDb(path, { readonly: true });
    try {
      return readWatermark(db);
    } finally {
      db.close();
    }
  } catch {
    return 0;
  }
}

it("a sync killed mid-way and run again equals an uninterrupted sync", async () => {
  const reference = startSync(join(dir, "reference.db"));
  const killedDb = join(dir, "killed.db");
  const victim = startSync(killedDb);

  // Kill once a few batches are committed, well before the end.
  let seen = 0;
  while (victim.child.exitCode === null && seen < total * 0.15) {
    await new Promise((r) => setTimeout(r, 15));
    seen = await peekWatermark(killedDb);
  }
  expect(victim.child.exitCode, "the sync finished before it could be killed").toBe(null);
  victim.child.kill("SIGKILL");
  expect((await victim.done).signal).toBe("SIGKILL");

  const ref = await reference.done;
  expect(ref.code, ref.stderr).toBe(0);
  expect(JSON.parse(ref.stdout)).toMatchObject({ records: total, applied: total, skipped: 0 });

  // What the killed run left: whole batches up to its watermark, nothing beyond.
  const left = await openReplica(killedDb);
  let watermark: number;
  try {
    watermark = readWatermark(left);
    expect(watermark).toBeGreaterThan(0);
    expect(watermark).toBeLessThan(total);
    expect(watermark % Number(BATCH)).toBe(0);
    const maxSeq = left
      .prepare<{ n: number }>("SELECT max(seq) AS n FROM (SELECT seq FROM events UNION ALL SELECT seq FROM venues)")
      .get()!.n;
    expect(maxSeq).toBeLessThanOrEqual(watermark);
  } finally {
    left.close();
  }

  const rerun = startSync(killedDb);
  const result = await rerun.done;
  expect(result.code, result.stderr).toBe(0);
  expect(JSON.parse(result.stdout)).toMatchObject({
    records: total,
    skipped: watermark,
    applied: total - watermark,
    watermark: total,
  });

  const [a, b] = [await openReplica(join(dir, "reference.db")), await openReplica(killedDb)];
  try {
    const expected = dumpReplica(a);
    expect(expected.events.rows).toBeGreaterThan(EVENTS * 0.9);
    expect(expected.snapshot.rows).toBeGreaterThan(EVENTS * 0.8);
    expect(dumpReplica(b)).toEqual(expected);
  } finally {
    a.close();
    b.close();
  }
}, 120_000);
