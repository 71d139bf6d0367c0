/**
 * `npm run bench:sync-api`: a full pass of `marquee sync --from-api` over a 50,000-event scope
 * (the whole demo feed of an Enterprise account, no horizon, a negotiated rate that never makes it
 * wait) against a local upstream on this machine, beside the NDJSON import of the same events
 * into that upstream. Reports rows/s, requests and pages of the first pass into an empty replica
 * and of a second, unchanged pass (what `--follow` does every interval), and the whole process's
 * time of each (test/bench/RESULTS.md, "A replica of another deployment").
 *
 *   bun test/bench/sync-api.ts [--events N]
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { availableParallelism, cpus, loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { freePort } from "../net.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const BUN = join(ROOT, "node_modules", ".bin", "bun");
const DIR = join(ROOT, ".bench", "sync-api");

const { values } = parseArgs({ options: { events: { type: "string", default: "50000" } } });
const events = Number(values.events);
const today = new Date().toISOString().slice(0, 10);
const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });

function marquee(args: string[], env: Record<string, string> = {}): { ms: number; stdout: string } {
  const started = performance.now();
  const r = spawnSync(BUN, ["server/main.ts", ...args], {
    cwd: ROOT,
    encoding: "utf8",
    maxBuffer: 64 << 20,
    env: { ...process.env, ...env },
  });
  const ms = performance.now() - started;
  if (r.status !== 0) throw new Error(`marquee ${args.join(" ")} failed (${r.status}): ${r.stderr}`);
  return { ms, stdout: r.stdout };
}

rmSync(DIR, { recursive: true, force: true });
mkdirSync(DIR, { recursive: true });
const feed = join(DIR, "demo.ndjson");
const upstreamDb = join(DIR, "upstream", "marquee.db");
const replicaDb = join(DIR, "replica", "marquee.db");
console.log(
  `machine: ${cpus()[0]?.model ?? "?"}, ${availableParallelism()} cores, load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);

marquee(["demo-data", "--events", String(events), "--anchor", today, "--out", feed]);
const imported = marquee(["sync", "--from", feed, "--db", upstreamDb, "--json"]);
const importSummary = JSON.parse(imported.stdout) as { records: number; snapshotEvents: number };
const account = marquee([
  "accounts",
  "create",
  "--email",
  "bench@example.com",
  "--plan",
  "enterprise",
  "--rate-sustained",
  "1000000",
  "--rate-burst",
  "1000000",
  "--db",
  upstreamDb,
]).stdout.trim();
const key = marquee(["keys", "create", "--account", account.match(/\d+/)![0], "--db", upstreamDb]).stdout.match(
  /mq_live_\w+/,
)![0];

const port = await freePort();
const upstream: ChildProcess = spawn(
  BUN,
  ["server/main.ts", "serve", "--port", String(port), "--host", "127.0.0.1", "--db", upstreamDb],
  { cwd: ROOT, stdio: "ignore" },
);
try {
  for (let i = 0; i < 200; i++) {
    if (
      await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    await new Promise((r) => setTimeout(r, 50));
  }
  interface Pass {
    rows: number;
    requests: number;
    pages: number;
    upserted: number;
    removed: number;
    elapsedMs: number;
    complete: boolean;
  }
  const pass = () => {
    const r = marquee(["sync", "--from-api", `http://127.0.0.1:${port}/v1/events`, "--db", replicaDb, "--json"], {
      MARQUEE_UPSTREAM_KEY: key,
    });
    const p = JSON.parse(r.stdout) as Pass;
    if (!p.complete) throw new Error(`the pass was not complete: ${r.stdout}`);
    return { processS: r.ms / 1000, ...p };
  };
  const first = pass();
  const second = pass();
  const rows: Array<[string, string]> = [
    [
      "NDJSON import into the upstream, whole process",
      `${fmt(imported.ms / 1000, 1)} s: ${fmt(importSummary.records)} records, ${fmt(importSummary.records / (imported.ms / 1000))} records/s, ${fmt(importSummary.snapshotEvents)} servable events`,
    ],
  ];
  for (const [name, p] of [
    ["first pass, empty replica", first],
    ["second pass, nothing changed", second],
  ] as const) {
    rows.push([
      name,
      `${fmt(p.processS, 1)} s whole process (pass ${fmt(p.elapsedMs / 1000, 1)} s): ${fmt(p.upserted)} events, ` +
        `${fmt(p.rows)} rows, ${fmt(p.rows / (p.elapsedMs / 1000))} rows/s, ${fmt(p.requests)} requests, ${fmt(p.pages)} pages, ${fmt(p.removed)} removed`,
    ]);
  }
  const width = Math.max(...rows.map(([k]) => k.length));
  for (const [k, v] of rows) console.log(`${k.padEnd(width)}  ${v}`);
} finally {
  upstream.kill("SIGTERM");
  rmSync(DIR, { recursive: true, force: true });
}
