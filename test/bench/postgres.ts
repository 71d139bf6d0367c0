#!/usr/bin/env bun
/**
 * The PostgreSQL upstream under load (docs/postgres.md, "Follow your PostgreSQL"):
 *
 * - `measurePostgresCopy`: `marquee sync --from postgres://…` of the demo data set into a new
 *   replica (rows/s; the NDJSON import's figure is the target);
 * - `measureStreaming`: `marquee serve --sync-from postgres://…` while the upstream commits
 *   `changesPerS` event updates a second: commit-to-served latency of probe changes (p50/p99),
 *   the slot's lag from /healthz, and the default page's p99 during the stream against idle;
 * - `measurePeer`: the same default page from a minimal Bun server that queries PostgreSQL
 *   directly (test/bench/postgres-peer.ts), at the same concurrency as Marquee.
 *
 * Each starts from `preparePostgres`, which runs its own PostgreSQL server (test/pg-server.ts)
 * and writes the demo data set into it. Standalone:
 *
 *   bun test/bench/postgres.ts [--events 1000000] [--seconds 60] [--rate 1000] [--runs 1] [--copy-only]
 *
 * `--runs N` times N initial copies and keeps the median; `--copy-only` measures the copy alone.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { type PgServer, startPgServer } from "../pg-server.ts";
import { BUN } from "./lib/config.ts";
import { freePort, runOk, type Server, startServer } from "./lib/proc.ts";
import { medianRun } from "./lib/sync-load.ts";

export interface PostgresFixture {
  server: PgServer;
  url: string;
  dir: string;
  events: number;
  close(): void;
}

/** A PostgreSQL server holding the demo data set of `events` events. */
export async function preparePostgres(events: number, log: (s: string) => void = () => {}): Promise<PostgresFixture> {
  const server = await startPgServer();
  const dir = mkdtempSync(join(tmpdir(), "marquee-bench-pg-"));
  const url = server.url();
  const t = performance.now();
  await runOk(BUN, ["server/main.ts", "demo-data", "--events", String(events), "--out", url]);
  log(
    `demo data (${events.toLocaleString("en-US")} events) written to PostgreSQL in ${((performance.now() - t) / 1000).toFixed(1)} s`,
  );
  return {
    server,
    url,
    dir,
    events,
    close() {
      server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface CopyResult {
  rows: number;
  /** The median run's. */
  seconds: number;
  rowsPerS: number;
  /** Each run's seconds, in the order they ran. */
  runs: number[];
}

/**
 * The initial copy into a new replica, timed end to end (process, copy and snapshot included):
 * the median of `runs` copies, each into its own new replica, as the NDJSON import is measured
 * (test/bench/lib/sync-load.ts). The last copy's replica is left at `db`, with its slot; the others'
 * slots are dropped and their files removed.
 */
export async function measurePostgresCopy(
  fx: PostgresFixture,
  db = join(fx.dir, "copy.db"),
  runs = 1,
): Promise<CopyResult> {
  const results: Array<{ rows: number; seconds: number }> = [];
  for (let i = 0; i < runs; i++) {
    const path = i === runs - 1 ? db : join(fx.dir, `copy-${i}.db`);
    const r = await runOk(BUN, ["server/main.ts", "sync", "--from", fx.url, "--db", path, "--json"]);
    results.push({ rows: (JSON.parse(r.stdout) as { copied: number }).copied, seconds: r.ms / 1000 });
    if (path !== db) {
      await runOk(BUN, ["server/main.ts", "sync", "--from", fx.url, "--db", path, "--drop-slot"]);
      for (const suffix of ["", "-wal", "-shm"]) rmSync(path + suffix, { force: true });
    }
  }
  const seconds = medianRun(results.map((r) => r.seconds));
  const median = results.find((r) => r.seconds === seconds)!;
  return {
    rows: median.rows,
    seconds: median.seconds,
    rowsPerS: median.rows / median.seconds,
    runs: results.map((r) => r.seconds),
  };
}

export interface Latencies {
  count: number;
  p50: number;
  p99: number;
  max: number;
  perS: number;
}

function summarize(ms: number[], seconds: number): Latencies {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return {
    count: sorted.length,
    p50: at(0.5),
    p99: at(0.99),
    max: sorted[sorted.length - 1] ?? NaN,
    perS: sorted.length / seconds,
  };
}

/** `connections` loops requesting `path` back to back for `seconds`; latencies of every request. */
export async function loadPage(
  baseUrl: string,
  path: string,
  headers: Record<string, string>,
  seconds: number,
  connections = 4,
): Promise<Latencies> {
  const until = performance.now() + seconds * 1000;
  const ms: number[] = [];
  let failures = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) {
        const t = performance.now();
        const res = await fetch(baseUrl + path, { headers });
        await res.arrayBuffer();
        if (res.status !== 200) failures++;
        ms.push(performance.now() - t);
      }
    }),
  );
  if (failures > 0) throw new Error(`${failures} of ${ms.length} requests to ${path} failed`);
  return summarize(ms, seconds);
}

export interface StreamingResult {
  changesPerS: number;
  seconds: number;
  /** Upstream changes committed during the run. */
  committed: number;
  commitToServed: Latencies;
  maxLagBytes: number;
  idle: Latencies;
  duringStream: Latencies;
  /** duringStream.p99 / idle.p99 (target at most 2). */
  p99Ratio: number;
}

/** A serving process on a copied replica, following the upstream, with a key that is never rate limited. */
async function startFollowingServer(fx: PostgresFixture, db: string): Promise<{ server: Server; key: string }> {
  const port = await freePort();
  const server = await startServer(
    "marquee-pg",
    BUN,
    [
      "server/main.ts",
      "serve",
      "--test-mode",
      "--port",
      String(port),
      "--host",
      "127.0.0.1",
      "--db",
      db,
      "--sync-from",
      fx.url,
      // No request lines, as every bench server (test/bench/lib/targets.ts serveArgs).
      "--log-level",
      "warn",
    ],
    { port, probe: "/healthz", env: { MARQUEE_SECRET: "bench" } },
  );
  const post = async (path: string, body: unknown) =>
    (await (
      await fetch(server.baseUrl + path, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      })
    ).json()) as Record<string, unknown>;
  const account = await post("/_test/accounts", {
    email: "bench@example.com",
    plan: "enterprise",
    verified: true,
    rateSustained: 1e9,
    rateBurst: 1e9,
  });
  const { key } = (await post(`/_test/accounts/${account.id}/keys`, { kind: "live" })) as { key: string };
  return { server, key };
}

/**
 * Streams `changesPerS` upstream event updates a second for `seconds` into a serving process.
 * Ten times a second one of them renames a probe event; the time from its commit until the API
 * serves the new title is the commit-to-served latency.
 */
export async function measureStreaming(
  fx: PostgresFixture,
  options: { seconds: number; changesPerS: number; idleSeconds?: number; db?: string },
  log: (s: string) => void = () => {},
): Promise<StreamingResult> {
  const db = options.db ?? join(fx.dir, "stream.db");
  await runOk(BUN, ["server/main.ts", "sync", "--from", fx.url, "--db", db]);
  const { server, key } = await startFollowingServer(fx, db);
  const auth = { authorization: `Bearer ${key}` };
  const writer = new pg.Client({ connectionString: fx.url });
  await writer.connect();
  try {
    // The probe: the first event of the default page, found through the API.
    const first = (await (await fetch(`${server.baseUrl}/v1/events?limit=1`, { headers: auth })).json()) as {
      data: Array<{ id: number; venue: { city: string; state: string } }>;
    };
    const probe = first.data[0];
    const probePath = `/v1/events?limit=1&state=${probe.venue.state}&city=${encodeURIComponent(probe.venue.city)}`;
    const ids = (
      await writer.query<{ id: string }>("SELECT id FROM marquee.events WHERE id <> $1 ORDER BY id", [probe.id])
    ).rows.map((r) => Number(r.id));

    const idle = await loadPage(server.baseUrl, "/v1/events", auth, options.idleSeconds ?? 10);
    log(`idle default page: p50 ${idle.p50.toFixed(2)} ms, p99 ${idle.p99.toFixed(2)} ms`);

    const served: number[] = [];
    let committed = 0;
    let maxLag = 0;
    const until = performance.now() + options.seconds * 1000;
    const lagWatch = (async () => {
      while (performance.now() < until) {
        const h = (await (await fetch(`${server.baseUrl}/healthz`)).json()) as {
          upstream: { lagBytes: number | null };
        };
        maxLag = Math.max(maxLag, h.upstream.lagBytes ?? 0);
        await Bun.sleep(1000);
      }
    })();
    // Upstream writes: one transaction of changesPerS/10 updates every 100 ms, the probe among them.
    const perTick = Math.max(1, Math.round(options.changesPerS / 10));
    const probes: Array<Promise<void>> = [];
    const writes = (async () => {
      let tick = 0;
      let cursor = 0;
      while (performance.now() < until) {
        const due = performance.now() + 100;
        const batch = Array.from({ length: perTick - 1 }, () => ids[cursor++ % ids.length]);
        const n = tick++;
        const title = `probe ${n}`;
        await writer.query(
          `WITH u AS (UPDATE marquee.events SET is_low_tickets = NOT is_low_tickets WHERE id = ANY($1::bigint[]) RETURNING 1)
           UPDATE marquee.events SET title = $2 WHERE id = $3`,
          [batch, title, probe.id],
        );
        const at = performance.now();
        committed += perTick;
        probes.push(
          (async () => {
            for (;;) {
              const page = (await (await fetch(server.baseUrl + probePath, { headers: auth })).json()) as {
                data: Array<{ title: string }>;
              };
              // A later probe's title means this one was served too (it was replaced sooner).
              const shown = page.data[0]?.title ?? "";
              if (shown.startsWith("probe ") && Number(shown.slice(6)) >= n)
                return void served.push(performance.now() - at);
              if (performance.now() - at > 30_000) return void served.push(Infinity);
              await Bun.sleep(5);
            }
          })(),
        );
        await Bun.sleep(Math.max(0, due - performance.now()));
      }
    })();
    const duringStream = await loadPage(server.baseUrl, "/v1/events", auth, options.seconds);
    await writes;
    await Promise.all(probes);
    await lagWatch;
    const commitToServed = summarize(served, options.seconds);
    log(
      `during the stream: default page p99 ${duringStream.p99.toFixed(2)} ms; commit-to-served p50 ${commitToServed.p50.toFixed(0)} ms, p99 ${commitToServed.p99.toFixed(0)} ms; max lag ${maxLag} bytes`,
    );
    return {
      changesPerS: options.changesPerS,
      seconds: options.seconds,
      committed,
      commitToServed,
      maxLagBytes: maxLag,
      idle,
      duringStream,
      p99Ratio: duringStream.p99 / idle.p99,
    };
  } finally {
    await writer.end();
    await server.stop();
  }
}

export interface PeerResult {
  marquee: Latencies;
  peer: Latencies;
  /** Requests per second, Marquee over the peer (target at least 10). */
  throughputRatio: number;
}

/** The default page from Marquee and from the PostgreSQL peer, one after the other, same concurrency. */
export async function measurePeer(fx: PostgresFixture, options: { seconds: number; db?: string }): Promise<PeerResult> {
  const db = options.db ?? join(fx.dir, "peer.db");
  await runOk(BUN, ["server/main.ts", "sync", "--from", fx.url, "--db", db]);
  fx.server.psql(
    "CREATE INDEX IF NOT EXISTS events_default_page ON marquee.events (start_date, id) WHERE status = 'active' AND duplicate_of IS NULL; ANALYZE",
  );
  const { server, key } = await startFollowingServer(fx, db);
  let marquee: Latencies;
  try {
    marquee = await loadPage(server.baseUrl, "/v1/events", { authorization: `Bearer ${key}` }, options.seconds);
  } finally {
    await server.stop();
  }
  const port = await freePort();
  const peerServer = await startServer(
    "postgres-peer",
    BUN,
    ["test/bench/postgres-peer.ts", "--port", String(port), "--url", fx.url],
    { port, probe: "/healthz" },
  );
  let peer: Latencies;
  try {
    peer = await loadPage(peerServer.baseUrl, "/v1/events", {}, options.seconds);
  } finally {
    await peerServer.stop();
  }
  return { marquee, peer, throughputRatio: marquee.perS / peer.perS };
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      events: { type: "string" },
      seconds: { type: "string" },
      rate: { type: "string" },
      "copy-only": { type: "boolean", default: false },
      runs: { type: "string" },
    },
  });
  const events = Number(values.events ?? 1_000_000);
  const seconds = Number(values.seconds ?? 60);
  const changesPerS = Number(values.rate ?? 1000);
  const started = performance.now();
  const log = (s: string) => console.error(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${s}`);
  const fx = await preparePostgres(events, log);
  try {
    const copy = await measurePostgresCopy(fx, undefined, Number(values.runs ?? 1));
    log(
      `initial copy: ${copy.rows.toLocaleString("en-US")} rows in ${copy.seconds.toFixed(1)} s, ${Math.round(copy.rowsPerS).toLocaleString("en-US")} rows/s (runs: ${copy.runs.map((r) => r.toFixed(1)).join(", ")} s)`,
    );
    if (values["copy-only"]) console.log(JSON.stringify({ events, copy }, null, 2));
    else {
      const streaming = await measureStreaming(fx, { seconds, changesPerS, idleSeconds: Math.min(10, seconds) }, log);
      const peer = await measurePeer(fx, { seconds: Math.min(10, seconds) });
      log(
        `default page: Marquee ${Math.round(peer.marquee.perS)} req/s (p99 ${peer.marquee.p99.toFixed(2)} ms), PostgreSQL peer ${Math.round(peer.peer.perS)} req/s (p99 ${peer.peer.p99.toFixed(2)} ms): ${peer.throughputRatio.toFixed(1)}x`,
      );
      console.log(JSON.stringify({ events, copy, streaming, peer }, null, 2));
    }
  } finally {
    fx.close();
  }
  process.exit(0);
}
