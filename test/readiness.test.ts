/**
 * Liveness and readiness (docs/operations.md, Health): `/livez` answers while the process does;
 * `/readyz` is 503, naming each failing check, during a PostgreSQL upstream's initial copy, while
 * the Redis ledger hangs (SIGSTOP), and while a followed upstream is down past
 * `--max-upstream-lag`, and 200 again once each recovers; `/healthz` says `degraded` meanwhile.
 * The same answers on the admin port. Nothing here waits on the wall clock: each state is made
 * (a table lock held, a process stopped, the test clock moved) and then polled for.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUN_SERVE_ARGS } from "../bin/find-bun.js";
import { BUN, Client, freePort, ROOT, startBunServer, startInProcess, type Target } from "./harness.ts";
import { type PgServer, startPgServer } from "./pg-server.ts";
import { startRedisServer } from "./redis-server.ts";

interface Readiness {
  status: "ready" | "not ready";
  failing: string[];
  checks: Record<string, { ok: boolean; detail?: string }>;
}

async function readiness(fetcher: (path: string) => Promise<Response>): Promise<{ code: number; body: Readiness }> {
  const res = await fetcher("/readyz");
  return { code: res.status, body: (await res.json()) as Readiness };
}

/** Polls until `probe` returns something (generous deadline: the machine may be busy). */
async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const admin = (port: number) => (path: string) => fetch(`http://127.0.0.1:${port}${path}`);

describe("an empty test instance", () => {
  let target: Target;
  beforeAll(async () => {
    target = await startInProcess();
  });
  afterAll(async () => {
    await target.close();
  });

  it("is live and ready at once, and /healthz says ok with the build's version", async () => {
    const live = await target.fetch("/livez");
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: "ok" });
    const { code, body } = await readiness(target.fetch);
    expect(code).toBe(200);
    expect(body).toEqual({
      status: "ready",
      failing: [],
      checks: { snapshot: { ok: true, detail: "empty replica" }, ledger: { ok: true } },
    });
    const health = (await (await target.fetch("/healthz")).json()) as Record<string, unknown>;
    expect(health).toMatchObject({ status: "ok", version: expect.stringMatching(/^\d+\.\d+\.\d+/), watermark: 0 });
    expect(health.runtime).toMatch(/^(bun|node) /);
  });

  it("needs a snapshot once the replica has data", async () => {
    const c = new Client(target);
    await c.records([
      {
        type: "venue",
        seq: 1,
        venue: {
          id: 1,
          name: "Hall",
          city: "Austin",
          state: "TX",
          timezone: "America/Chicago",
          latitude: 30.27,
          longitude: -97.74,
          geocodePrecision: "street",
          visible: true,
        },
      },
    ]);
    // /_test/records refreshes the snapshot: ready.
    expect((await readiness(target.fetch)).code).toBe(200);
  });
});

describe("a Redis ledger that stops answering", () => {
  it("makes /readyz 503 naming the ledger, on both ports, and 200 again when Redis answers", async () => {
    const redis = await startRedisServer();
    const adminPort = await freePort();
    let target: Target | undefined;
    try {
      target = await startBunServer(["--ledger", redis.url, "--admin-port", String(adminPort)]);
      const t = target;
      expect((await readiness(t.fetch)).code).toBe(200);
      expect((await readiness(admin(adminPort))).code).toBe(200);

      redis.pause();
      const down = await until("the ledger check to fail", async () => {
        const r = await readiness(t.fetch);
        return r.code === 503 ? r.body : undefined;
      });
      expect(down.status).toBe("not ready");
      expect(down.failing).toEqual(["ledger"]);
      expect(down.checks.ledger).toMatchObject({
        ok: false,
        detail: expect.stringMatching(/^the ledger does not answer/),
      });
      expect(down.checks.snapshot.ok).toBe(true);
      const onAdmin = await readiness(admin(adminPort));
      expect(onAdmin.code).toBe(503);
      expect(onAdmin.body.failing).toEqual(["ledger"]);
      const health = (await (await t.fetch("/healthz")).json()) as { status: string };
      expect(health.status).toBe("degraded");
      // Live all along.
      expect((await t.fetch("/livez")).status).toBe(200);
      expect((await admin(adminPort)("/livez")).status).toBe(200);

      redis.resume();
      await until("ready again", async () => ((await readiness(t.fetch)).code === 200 ? true : undefined));
      expect(((await (await t.fetch("/healthz")).json()) as { status: string }).status).toBe("ok");
    } finally {
      redis.resume();
      await target?.close();
      await redis.stop();
    }
  }, 90_000);
});

describe("a followed PostgreSQL upstream", () => {
  let server: PgServer;
  beforeAll(async () => {
    server = await startPgServer();
  }, 30_000);
  afterAll(() => server?.stop());

  /** The upstream tables in a new database `name`, with one venue and one event. */
  function upstreamDatabase(name: string): string {
    server.psql(`CREATE DATABASE ${name}`);
    const ddl = spawnSync(BUN, ["server/main.ts", "upstream-schema"], { cwd: ROOT, encoding: "utf8" }).stdout;
    server.psql(ddl, name);
    server.psql(
      `INSERT INTO marquee.venues VALUES (1, 'Hall', 'Austin', 'TX', 'America/Chicago', 30.27, -97.74, 'street', true);
       INSERT INTO marquee.events (id, venue_id, title, slug, start_date, source) VALUES (1, 1, 'One', 'one', now() + interval '2 days', 'scraper:x')`,
      name,
    );
    return server.url(name);
  }

  it("is not ready during the initial copy, nor when the upstream is down past --max-upstream-lag", async () => {
    upstreamDatabase("ready");
    // The copy reads the tables; while this transaction holds them, it waits.
    const holder = new pg.Client({ connectionString: server.url("ready") });
    holder.on("error", () => {}); // the server's outage below ends its connection if still open
    await holder.connect();
    await holder.query("BEGIN");
    await holder.query("LOCK TABLE marquee.venues, marquee.events IN ACCESS EXCLUSIVE MODE");
    const adminPort = await freePort();
    let target: Target | undefined;
    try {
      target = await startBunServer([
        "--sync-from",
        server.url("ready"),
        "--max-upstream-lag",
        "60",
        "--admin-port",
        String(adminPort),
      ]);
      const t = target;
      const copying = await readiness(t.fetch);
      expect(copying.code).toBe(503);
      expect(copying.body.failing).toEqual(["snapshot", "upstream"]);
      expect(copying.body.checks.snapshot.detail).toBe(
        "no serving snapshot yet: the initial copy from the upstream is running",
      );
      expect(copying.body.checks.upstream.detail).toMatch(
        /^copying; nothing applied yet, more than --max-upstream-lag 60 s$/,
      );
      expect((await readiness(admin(adminPort))).code).toBe(503);
      expect(((await (await t.fetch("/healthz")).json()) as { status: string }).status).toBe("degraded");

      await holder.query("COMMIT");
      await holder.end();
      // Ready once the copy is applied; streaming after it.
      const ready = await until("ready and streaming after the copy", async () => {
        const r = await readiness(t.fetch);
        return r.code === 200 && r.body.checks.upstream.detail === "streaming" ? r.body : undefined;
      });
      expect(ready.failing).toEqual([]);

      // The upstream goes away; an hour later on the test clock it is past the lag.
      server.pause();
      const c = new Client(t);
      await c.advance(3600);
      const stale = await until("the upstream check to fail", async () => {
        const r = await readiness(t.fetch);
        return r.code === 503 ? r.body : undefined;
      });
      expect(stale.failing).toEqual(["upstream"]);
      expect(stale.checks.upstream.detail).toMatch(
        /^(retrying|connecting)\b.*last applied \d+ s ago, more than --max-upstream-lag 60 s$/,
      );
      const metrics = await (await admin(adminPort)("/metrics")).text();
      expect(metrics).toMatch(/^marquee_upstream_applied_age_seconds \d+/m);
      expect(metrics).toMatch(/^marquee_ready 0$/m);

      server.resume();
      await until("ready again", async () => ((await readiness(t.fetch)).code === 200 ? true : undefined), 90_000);
      expect((await readiness(admin(adminPort))).code).toBe(200);
    } finally {
      await holder.end().catch(() => {});
      await target?.close();
    }
  }, 180_000);

  it("under --workers 2, every worker judges the upstream worker 0 follows", async () => {
    const url = upstreamDatabase("workers");
    const redis = await startRedisServer();
    const dir = mkdtempSync(join(tmpdir(), "marquee-ready-workers-"));
    const [port, adminPort] = [await freePort(), await freePort()];
    const child = spawn(
      BUN,
      [
        ...BUN_SERVE_ARGS,
        join(ROOT, "server/main.ts"),
        "serve",
        "--test-mode",
        ...["--port", String(port), "--host", "127.0.0.1", "--db", join(dir, "marquee.db"), "--ledger", redis.url],
        ...["--workers", "2", "--sync-from", url, "--admin-port", String(adminPort), "--log-file", join(dir, "log")],
      ],
      { cwd: ROOT, stdio: ["ignore", "ignore", "ignore"], env: { ...process.env, MARQUEE_SECRET: "", MARQUEE_DB: "" } },
    );
    /** Each worker's /healthz, asked on new connections until both have answered. */
    const fromBoth = async () => {
      const seen = new Map<number, { status: string; upstream: { state: string } | null }>();
      for (let i = 0; seen.size < 2 && i < 400; i++) {
        const body = await new Promise<string>((resolve, reject) => {
          const req = request({ host: "127.0.0.1", port, path: "/healthz", agent: false }, (res) => {
            let text = "";
            res.setEncoding("utf8");
            res.on("data", (d) => (text += d));
            res.on("end", () => resolve(text));
          });
          req.on("error", reject);
          req.end();
        });
        const health = JSON.parse(body) as { worker: number; status: string; upstream: { state: string } | null };
        seen.set(health.worker, health);
      }
      return [...seen.values()];
    };
    try {
      await until("both workers see the upstream streaming", async () => {
        const both = await fromBoth();
        return both.length === 2 && both.every((h) => h.upstream?.state === "streaming") ? true : undefined;
      });
      expect((await readiness(admin(adminPort))).code).toBe(200);

      server.pause();
      // The test clock is the shared ledger's: an hour later for every worker.
      await fetch(`http://127.0.0.1:${port}/_test/clock`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ advanceSeconds: 3600 }),
      });
      await until("both workers' upstream check to fail", async () => {
        const both = await fromBoth();
        return both.length === 2 && both.every((h) => h.status === "degraded") ? true : undefined;
      });
      const merged = await readiness(admin(adminPort));
      expect(merged.code).toBe(503);
      expect(merged.body.failing).toEqual(["upstream"]);
      expect(merged.body.checks.upstream.detail).toMatch(/^worker \d: /);

      server.resume();
      await until(
        "ready again",
        async () => ((await readiness(admin(adminPort))).code === 200 ? true : undefined),
        90_000,
      );
    } finally {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
      await redis.stop();
    }
  }, 180_000);
});
