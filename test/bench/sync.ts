/**
 * `npm run bench:sync`: the import of the 1,000,000-event demo stream into an empty replica,
 * as an operator runs it (`marquee demo-data … --out F && marquee sync --from F --db D`).
 * Reports records/second of the whole `marquee sync` process (snapshot refresh included; the
 * best of --runs, and the median), the time of each phase and the sizes of the NDJSON file, the replica and the ledger. Then an
 * incremental sync into the imported replica: the last --changes records of the stream again,
 * renumbered after its watermark (event updates, a few venues and deletes), as a serving
 * process with --sync-from would receive them; its snapshot refresh replaces only changed rows.
 *
 *   bun test/bench/sync.ts [--events N] [--batch-size N] [--runs N] [--changes N] [--keep]
 *
 * The NDJSON is cached in .bench/sync/ and reused while the generator's sources are unchanged.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { availableParallelism, cpus, loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ledgerPathFor, openLedger } from "../../db/ledger.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const BUN = join(ROOT, "node_modules", ".bin", "bun");
const DIR = join(ROOT, ".bench", "sync");
const TARGET_RECORDS_PER_S = 50_000;

const { values } = parseArgs({
  options: {
    events: { type: "string", default: "1000000" },
    "batch-size": { type: "string" },
    runs: { type: "string", default: "1" },
    keep: { type: "boolean", default: false },
    changes: { type: "string", default: "50000" },
  },
});
const events = Number(values.events);
const seed = "1";
const anchor = "2026-12-01";
/** The generator's sources, hashed: a cached NDJSON is reused only while they are unchanged. */
const DEMO_SRC = join(ROOT, "sync", "demo");
const generatorHash = createHash("sha256")
  .update(
    readdirSync(DEMO_SRC)
      .sort()
      .map((f) => readFileSync(join(DEMO_SRC, f), "utf8"))
      .join("\0"),
  )
  .digest("hex")
  .slice(0, 10);
const ndjson = join(DIR, `demo-${events}-seed${seed}-${anchor}-${generatorHash}.ndjson`);
const replica = join(DIR, "replica.db");

const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
const mib = (bytes: number) => `${fmt(bytes / 1048576, 1)} MiB`;
const size = (path: string) => (existsSync(path) ? statSync(path).size : 0);

function marquee(args: string[]): { ms: number; stdout: string } {
  const started = performance.now();
  const r = spawnSync(BUN, ["server/main.ts", ...args], { cwd: ROOT, encoding: "utf8", maxBuffer: 16 << 20 });
  const ms = performance.now() - started;
  if (r.status !== 0) throw new Error(`marquee ${args[0]} failed (${r.status}): ${r.stderr}`);
  return { ms, stdout: r.stdout };
}

function removeReplica(): void {
  for (const base of [replica, ledgerPathFor(replica)])
    for (const s of ["", "-wal", "-shm"]) rmSync(base + s, { force: true });
}

mkdirSync(DIR, { recursive: true });
for (const f of readdirSync(DIR)) if (f.endsWith(".ndjson") && join(DIR, f) !== ndjson) rmSync(join(DIR, f)); // stale caches
console.log(
  `machine: ${cpus()[0]?.model ?? "?"}, ${availableParallelism()} cores, load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);

let generated: { s: number; records: number } | undefined;
if (!existsSync(ndjson)) {
  console.log(`generating ${fmt(events)} demo events into ${ndjson} …`);
  const r = marquee([
    "demo-data",
    "--events",
    String(events),
    "--seed",
    seed,
    "--anchor",
    anchor,
    "--out",
    ndjson,
    "--json",
  ]);
  generated = { s: r.ms / 1000, records: (JSON.parse(r.stdout) as { records: number }).records };
}

interface Summary {
  records: number;
  applied: number;
  batches: number;
  watermark: number;
  snapshotEvents: number;
  snapshotMs: number;
  elapsedMs: number;
}

const runs: Array<{ processS: number; summary: Summary }> = [];
for (let i = 0; i < Number(values.runs); i++) {
  removeReplica();
  const args = ["sync", "--from", ndjson, "--db", replica, "--json"];
  if (values["batch-size"]) args.push("--batch-size", values["batch-size"]);
  const r = marquee(args);
  runs.push({ processS: r.ms / 1000, summary: JSON.parse(r.stdout) as Summary });
}
(await openLedger(ledgerPathFor(replica))).close(); // the ledger a server would create beside it

const best = runs.reduce((a, b) => (b.processS < a.processS ? b : a));
const s = best.summary;
const recordsPerS = s.records / best.processS;
const rows: Array<[string, string]> = [
  ["records (venues, events, updates, deletes)", fmt(s.records)],
  [
    "demo-data generation",
    generated ? `${fmt(generated.s, 1)} s (${fmt(generated.records / generated.s)} records/s)` : "cached file",
  ],
  ["sync, whole process (best run)", `${fmt(best.processS, 1)} s`],
  ["  of which snapshot refresh", `${fmt(s.snapshotMs / 1000, 1)} s (${fmt(s.snapshotEvents)} servable events)`],
  [
    "  of which parse + validate + apply",
    `${fmt((s.elapsedMs - s.snapshotMs) / 1000, 1)} s in ${fmt(s.batches)} transactions`,
  ],
  ["throughput (best run)", `${fmt(recordsPerS)} records/s`],
  ["NDJSON", mib(size(ndjson))],
  ["replica (db + wal)", mib(size(replica) + size(`${replica}-wal`))],
  ["ledger", mib(size(ledgerPathFor(replica)) + size(`${ledgerPathFor(replica)}-wal`))],
];
// The machine is shared and noisy: the median says more than the best run, and `npm run bench`
// judges the target by it too.
const sorted = runs.map((r) => r.processS).sort((a, b) => a - b);
const median = sorted[Math.floor((sorted.length - 1) / 2)];
const medianRecordsPerS = s.records / median;
if (runs.length > 1) {
  rows.push(["runs (process s)", runs.map((r) => fmt(r.processS, 1)).join(", ")]);
  rows.push(["median run", `${fmt(median, 1)} s (${fmt(s.records / median)} records/s)`]);
}
const width = Math.max(...rows.map(([k]) => k.length));
for (const [k, v] of rows) console.log(`${k.padEnd(width)}  ${v}`);
console.log(
  `target ≥ ${fmt(TARGET_RECORDS_PER_S)} records/s, by the median run: ${medianRecordsPerS >= TARGET_RECORDS_PER_S ? "met" : "MISSED"} (${fmt(medianRecordsPerS)})`,
);

/** The last `n` lines of the stream with seqs renumbered after `watermark`. */
function changeFile(n: number, watermark: number): string {
  const fd = openSync(ndjson, "r");
  const length = Math.min(fstatSync(fd).size, n * 2048); // demo lines are well under 2 KiB
  const buf = Buffer.alloc(length);
  readSync(fd, buf, 0, length, fstatSync(fd).size - length);
  closeSync(fd);
  const lines = buf.toString("utf8").trimEnd().split("\n").slice(-n);
  const out = lines.map((l, i) => JSON.stringify({ ...JSON.parse(l), seq: watermark + i + 1 }));
  const path = join(DIR, "changes.ndjson");
  writeFileSync(path, `${out.join("\n")}\n`);
  return path;
}

const changes = Number(values.changes);
if (changes > 0 && s.applied > 0) {
  const path = changeFile(changes, s.watermark);
  const r = marquee(["sync", "--from", path, "--db", replica, "--json"]);
  const c = JSON.parse(r.stdout) as Summary;
  console.log(
    `incremental sync of ${fmt(c.applied)} changes into the ${fmt(s.snapshotEvents)}-event replica: ${fmt(r.ms / 1000, 1)} s ` +
      `(snapshot refresh ${fmt(c.snapshotMs / 1000, 1)} s, ${fmt(c.snapshotEvents)} servable events)`,
  );
  rmSync(path);
}
if (!values.keep) removeReplica();
