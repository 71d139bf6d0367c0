/**
 * `/metrics` on the admin port (docs/operations.md, Logs and metrics), read with a Prometheus
 * text parser: request counters equal to the requests sent, the duration histogram, rows and
 * handoffs, the replica's and the ledger's gauges, the build and the process metrics; in-process
 * (prom-client on Node), on a spawned Bun server, and summed over the two workers of
 * `serve --workers 2`. `/metrics` is never on the public port.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import parsePrometheusTextFormat, { type ParsedFamily } from "parse-prometheus-text-format";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUN_SERVE_ARGS } from "../bin/find-bun.js";
import pkg from "../package.json" with { type: "json" };
import { listenAdmin, serverAnswers } from "../server/admin.ts";
import { createApp } from "../server/app.ts";
import { resolveConfig } from "../server/config.ts";
import { createContext } from "../server/context.ts";
import { BUN, Client, fetchFresh, freePort, ROOT, startBunServer, type Target } from "./harness.ts";
import { eventRecord, venueRecord } from "./records.ts";
import { type RedisServer, startRedisServer } from "./redis-server.ts";

const NOW = "2030-03-01T12:00:00.000Z";

type Labels = Record<string, string>;

/** The value of the sample of `name` whose labels include `labels` (undefined when none). */
function sample(families: ParsedFamily[], name: string, labels: Labels = {}): number | undefined {
  const family = families.find((f) => f.name === name);
  const hit = family?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return hit?.value === undefined ? undefined : Number(hit.value);
}

const requests = (families: ParsedFamily[], labels: Labels) =>
  sample(families, "marquee_http_requests_total", labels) ?? 0;

interface Scrape {
  families: ParsedFamily[];
  text: string;
}

async function scrape(port: number): Promise<Scrape> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  return { families: parsePrometheusTextFormat(text), text };
}

/**
 * One series of a labelled histogram, read from the text: the parser merges the series of a
 * histogram with labels into one (it flattens by `le` alone), so it cannot tell routes apart.
 */
function histogram(text: string, name: string, route: string) {
  const value = (suffix: string, extra = "") => {
    const line = text
      .split("\n")
      .find((l) => l.startsWith(`${name}_${suffix}{`) && l.includes(`route="${route}"`) && l.includes(extra));
    return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
  };
  return { count: value("count"), sum: value("sum"), inf: value("bucket", 'le="+Inf"') };
}

/**
 * Requests with known answers: `n401` refused, `n200` pages of one event, one handoff. Returns the
 * rows delivered.
 */
async function sendKnown(c: Client, n401: number, n200: number): Promise<void> {
  await c.setClock(NOW);
  await c.records([venueRecord(1), eventRecord(1001, 1, "2030-03-10T20:00:00Z")]);
  const key = await c.keyFor({ plan: "business" });
  const builder = await c.keyFor({ plan: "business" }, "builder");
  for (let i = 0; i < n401; i++) expect((await c.get("/v1/events")).status).toBe(401);
  for (let i = 0; i < n200; i++) expect((await c.get("/v1/events?state=CA", key)).status).toBe(200);
  const handoff = await c.fetch("/v1/ticket-handoffs", {
    method: "POST",
    headers: { authorization: `Bearer ${builder}`, "content-type": "application/json" },
    body: JSON.stringify({ event_id: 1001 }),
  });
  expect(handoff.status).toBe(201);
}

function checkKnown({ families, text }: Scrape, n401: number, n200: number): void {
  expect(requests(families, { route: "/v1/events", method: "GET", status: "401", code: "invalid_api_key" })).toBe(n401);
  expect(requests(families, { route: "/v1/events", method: "GET", status: "200", code: "" })).toBe(n200);
  expect(requests(families, { route: "/v1/ticket-handoffs", method: "POST", status: "201", code: "" })).toBe(1);
  expect(requests(families, { route: "/_test/accounts/:id/keys", method: "POST", status: "201" })).toBe(2);
  expect(sample(families, "marquee_rows_delivered_total")).toBe(n200);
  expect(sample(families, "marquee_handoffs_created_total")).toBe(1);
  expect(families.find((f) => f.name === "marquee_http_request_duration_seconds")?.type).toBe("HISTOGRAM");
  const events = histogram(text, "marquee_http_request_duration_seconds", "/v1/events");
  expect(events.count).toBe(n401 + n200);
  expect(events.inf).toBe(n401 + n200);
  expect(events.sum).toBeGreaterThan(0);
  expect(sample(families, "marquee_replica_events")).toBe(1);
  expect(sample(families, "marquee_snapshot_age_seconds")).toBeGreaterThanOrEqual(0);
  expect(sample(families, "marquee_ledger_up")).toBe(1);
  expect(sample(families, "marquee_ready")).toBe(1);
  expect(sample(families, "marquee_build_info", { version: pkg.version })).toBe(1);
  // No upstream is followed: its gauges have no sample.
  expect(sample(families, "marquee_upstream_lag_bytes")).toBeUndefined();
  expect(families.find((f) => f.name === "marquee_upstream_applied_age_seconds")?.metrics ?? []).toEqual([]);
  for (const name of ["process_cpu_seconds_total", "process_resident_memory_bytes", "process_start_time_seconds"])
    expect(sample(families, name), name).toBeGreaterThan(0);
}

describe("/metrics", () => {
  it("in-process (prom-client on Node): counters equal the requests sent", async () => {
    const dir = mkdtempSync(join(tmpdir(), "marquee-metrics-"));
    const ctx = await createContext(
      resolveConfig({ dbPath: join(dir, "marquee.db"), testMode: true, adminPort: 0, baseUrl: "http://m.test" }, {}),
    );
    const app = createApp(ctx);
    const listener = await listenAdmin({ port: 0, host: "127.0.0.1" }, serverAnswers(ctx.health, ctx.metrics!), (e) => {
      throw e;
    });
    try {
      const target: Target = {
        kind: "in-process",
        baseUrl: "http://m.test",
        dir,
        fetch: async (path, init) => app.request(new URL(path, "http://m.test").href, init),
        close: async () => {},
      };
      await sendKnown(new Client(target), 4, 3);
      checkKnown(await scrape(listener.port), 4, 3);
      expect((await fetch(`http://127.0.0.1:${listener.port}/nope`)).status).toBe(404);
    } finally {
      await listener.close();
      ctx.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("on Bun: the same, and never on the public port", async () => {
    const adminPort = await freePort();
    const target = await startBunServer(["--admin-port", String(adminPort)]);
    try {
      await sendKnown(new Client(target), 5, 2);
      checkKnown(await scrape(adminPort), 5, 2);
      const pub = await target.fetch("/metrics");
      expect(pub.status).toBe(404);
      expect(((await pub.json()) as { error: { code: string } }).error.code).toBe("not_found");
      // The unmatched path is counted too, under one label.
      const { families } = await scrape(adminPort);
      expect(requests(families, { route: "unmatched", method: "GET", status: "404", code: "not_found" })).toBe(1);
    } finally {
      await target.close();
    }
  }, 60_000);
});

describe("/metrics of serve --workers 2", () => {
  let redis: RedisServer;
  let child: ChildProcess;
  let dir: string;
  let port: number;
  let adminPort: number;
  let stdout = "";
  let stderr = "";

  beforeAll(async () => {
    redis = await startRedisServer();
    dir = mkdtempSync(join(tmpdir(), "marquee-metrics-workers-"));
    port = await freePort();
    adminPort = await freePort();
    child = spawn(
      BUN,
      [
        ...BUN_SERVE_ARGS,
        join(ROOT, "server/main.ts"),
        "serve",
        "--test-mode",
        ...["--port", String(port), "--host", "127.0.0.1", "--db", join(dir, "marquee.db")],
        ...["--ledger", redis.url, "--workers", "2", "--admin-port", String(adminPort)],
      ],
      { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, MARQUEE_SECRET: "", MARQUEE_DB: "" } },
    );
    child.stdout!.on("data", (d) => (stdout += d));
    child.stderr!.on("data", (d) => (stderr += d));
    const deadline = Date.now() + 30_000;
    while (!stdout.includes("Marquee listening on")) {
      if (Date.now() > deadline || child.exitCode !== null)
        throw new Error(`the workers did not start: ${stdout}${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }, 60_000);

  afterAll(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
    await redis.stop();
  });

  it("is the sum over both workers, and /readyz waits for both", async () => {
    // Until both workers have answered: each /healthz says which one did.
    const seen = new Set<number>();
    let healthz = 0;
    while (seen.size < 2) {
      const res = await fetchFresh(port, "/healthz");
      healthz++;
      seen.add((JSON.parse(res.body) as { worker: number }).worker);
      if (healthz > 500) throw new Error("one worker never answered");
    }
    const refused = 30;
    for (let i = 0; i < refused; i++) expect((await fetchFresh(port, "/v1/events")).status).toBe(401);
    const { families, text } = await scrape(adminPort);
    expect(histogram(text, "marquee_http_request_duration_seconds", "/v1/events").count).toBe(refused);
    expect(requests(families, { route: "/healthz", method: "GET", status: "200" })).toBe(healthz);
    expect(requests(families, { route: "/v1/events", method: "GET", status: "401", code: "invalid_api_key" })).toBe(
      refused,
    );
    // The shared replica's gauges are not summed; the processes' are.
    expect(sample(families, "marquee_replica_events")).toBe(0);
    expect(sample(families, "marquee_ledger_up")).toBe(1);
    expect(sample(families, "marquee_build_info", { version: pkg.version })).toBe(1);
    expect(sample(families, "process_resident_memory_bytes")).toBeGreaterThan(0);

    const ready = await fetch(`http://127.0.0.1:${adminPort}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      status: "ready",
      checks: { workers: { ok: true, detail: "2 workers answered" } },
      workers: [
        { worker: 0, status: "ready" },
        { worker: 1, status: "ready" },
      ],
    });
    expect((await fetchFresh(port, "/metrics")).status).toBe(404);

    // Each worker logs its own requests on the shared standard output, whole lines, with its index.
    const logged = () =>
      stdout
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as { msg: string; path: string; worker: number })
        .filter((l) => l.msg === "request" && l.path === "/v1/events");
    const deadline = Date.now() + 20_000;
    while (logged().length < refused && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(logged()).toHaveLength(refused);
    // 30 new connections spread by the kernel: all on one worker has odds of 2 in 2^30.
    expect(new Set(logged().map((l) => l.worker))).toEqual(new Set([0, 1]));
  }, 60_000);
});
