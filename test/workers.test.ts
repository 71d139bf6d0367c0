/**
 * `marquee serve --workers N` (docs/operations.md, Configuration): N serving processes on one
 * port under a supervisor, sharing the replica and a Redis ledger. The flags' usage errors, then
 * the supervisor against a real redis-server: both workers answer on one port, worker 0's sync
 * and snapshot are served by every worker, limits hold across workers, a killed worker comes
 * back, one that keeps crashing stops the supervisor, and SIGTERM stops everything with exit 0.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUN_SERVE_ARGS } from "../bin/find-bun.js";
import { BUN, fetchFresh, freePort, isRunning, messagesOf, ROOT } from "./harness.ts";
import { eventRecord, venueRecord } from "./records.ts";
import { type RedisServer, startRedisServer } from "./redis-server.ts";

const ENV: NodeJS.ProcessEnv = { ...process.env, MARQUEE_SECRET: "", MARQUEE_DB: "", MARQUEE_LEDGER: "" };
// The allocator setting serve chooses on a Redis ledger is checked below; the runner's own is not passed on.
delete ENV.MIMALLOC_PURGE_DELAY;

interface Run {
  child: ChildProcess;
  port: number;
  dir: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** `marquee serve ARGS` in a new folder; the port, host and replica are filled in. */
async function serve(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), "marquee-workers-"));
  const port = await freePort();
  const child = spawn(
    BUN,
    [
      ...BUN_SERVE_ARGS,
      join(ROOT, "server/main.ts"),
      "serve",
      "--port",
      String(port),
      "--host",
      "127.0.0.1",
      "--db",
      join(dir, "marquee.db"),
      ...args,
    ],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...ENV, ...env } },
  );
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d) => (stdout += d));
  child.stderr!.on("data", (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, port, dir, stdout: () => stdout, stderr: () => stderr, exited };
}

async function until<T>(what: string, run: Run, probe: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: timed out\n${run.stdout()}\n${run.stderr()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Health {
  watermark: number;
  snapshotEvents: number;
  worker?: number;
  pid?: number;
}

const health = async (port: number) => JSON.parse((await fetchFresh(port, "/healthz")).body) as Health;

/** The worker processes of a supervisor, by index (read from their environment). */
function workerPids(supervisor: number): Map<number, number> {
  const out = new Map<number, number>();
  let children: string[] = [];
  try {
    children = execFileSync("pgrep", ["-P", String(supervisor)], { encoding: "utf8" })
      .trim()
      .split("\n");
  } catch {
    return out; // none
  }
  for (const pid of children.filter(Boolean).map(Number)) {
    try {
      const env = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
      const index = env.find((e) => e.startsWith("MARQUEE_WORKER_INDEX="))?.split("=")[1];
      if (index !== undefined) out.set(Number(index), pid);
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** /healthz over fresh connections until every worker answered; the first answer of each. */
async function fromEveryWorker(run: Run, count: number): Promise<Map<number, Health>> {
  const seen = new Map<number, Health>();
  await until("an answer from every worker", run, async () => {
    const h = await health(run.port);
    if (!seen.has(h.worker!)) seen.set(h.worker!, h);
    return seen.size === count ? true : undefined;
  });
  return seen;
}

/**
 * `path` asked `times` times, each on a connection of its own: the kernel spreads them over
 * the workers (with 2 workers, 20 requests all land on one of them once in half a million runs).
 */
async function askSpread(port: number, path: string, key: string, times = 20) {
  const out: Array<{ status: number; body: string }> = [];
  for (let i = 0; i < times; i++) out.push(await fetchFresh(port, path, { authorization: `Bearer ${key}` }));
  return out;
}

describe("serve --workers and --ledger: usage", () => {
  const usage = async (args: string[], env: Record<string, string> = {}) => {
    const run = await serve(args, env);
    const code = await run.exited;
    return { code, stdout: run.stdout(), stderr: run.stderr(), dir: run.dir };
  };

  it("refuses --workers above 1 without a shared ledger, in one line, exit 2", async () => {
    const r = await usage(["--workers", "2"]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      "marquee serve: --workers needs a shared ledger (--ledger redis://…): the SQLite ledger is owned by one process\n",
    );
    rmSync(r.dir, { recursive: true, force: true });
  });

  it.each([["0"], ["abc"], ["65"], ["1.5"], ["-2"]])("refuses --workers %s as a usage error", async (n) => {
    const r = await usage([`--workers=${n}`, "--ledger", "redis://127.0.0.1:1"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("marquee serve: --workers must be an integer from 1 to 64\n");
    rmSync(r.dir, { recursive: true, force: true });
  });

  it("refuses a --ledger or MARQUEE_LEDGER that is not a redis:// URL, never printing its password", async () => {
    const flag = await usage(["--ledger", "http://admin:hunter2@127.0.0.1:6379"]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toBe(
      "marquee serve: --ledger: http:// is not supported; expected redis://[user:password@]host:port[/db]\n",
    );
    const env = await usage([], { MARQUEE_LEDGER: "redis://admin:hunter2@127.0.0.1:6379/zero" });
    expect(env.code).toBe(2);
    expect(env.stderr).toBe('marquee serve: MARQUEE_LEDGER: database "zero" is not a number\n');
    const garbage = await usage(["--ledger", "hunter2"]);
    expect(garbage.code).toBe(2);
    expect(garbage.stderr).toBe(
      "marquee serve: --ledger: not a URL; expected redis://[user:password@]host:port[/db]\n",
    );
    for (const r of [flag, env, garbage]) {
      expect(r.stdout + r.stderr).not.toContain("hunter2");
      rmSync(r.dir, { recursive: true, force: true });
    }
  });

  it("documents both flags in serve --help", async () => {
    const out = execFileSync(BUN, [join(ROOT, "server/main.ts"), "serve", "--help"], { encoding: "utf8" });
    expect(out).toMatch(/--ledger redis:\/\/\[user:password@\]host:port\[\/db\]/);
    expect(out).toMatch(/--workers N\s+run N serving processes on one port/);
  });
});

describe("serve --workers 2 on a Redis ledger", () => {
  let redis: RedisServer;
  let run: Run;
  let source: string;
  const inTenDays = new Date(Date.now() + 10 * 86_400_000).toISOString().slice(0, 10);

  beforeAll(async () => {
    redis = await startRedisServer();
    const dir = mkdtempSync(join(tmpdir(), "marquee-workers-src-"));
    source = join(dir, "records.ndjson");
    writeFileSync(source, `${JSON.stringify({ ...venueRecord(10), seq: 1 })}\n`);
    run = await serve([
      "--workers",
      "2",
      "--ledger",
      redis.url,
      "--test-mode",
      "--sync-from",
      source,
      "--sync-interval",
      "1",
      "--snapshot-interval",
      "1",
    ]);
    await until("the listening line", run, () => (/listening/.test(run.stdout()) ? true : undefined));
  });

  afterAll(async () => {
    if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill("SIGKILL");
    for (const pid of workerPids(run.child.pid!).values()) process.kill(pid, "SIGKILL");
    rmSync(run.dir, { recursive: true, force: true });
    await redis.stop();
  });

  it("prints one listening line once both workers listen, and both answer on the one port", async () => {
    const lines = messagesOf(run.stdout())
      .split("\n")
      .filter((l) => l.includes("listening"));
    expect(lines).toEqual([
      `Marquee listening on http://127.0.0.1:${run.port} (base URL http://localhost:${run.port}, replica ${join(run.dir, "marquee.db")}, test mode, 2 workers)`,
    ]);
    const seen = await fromEveryWorker(run, 2);
    const pids = new Map([...seen].map(([worker, h]) => [worker, h.pid!]));
    expect(pids).toEqual(workerPids(run.child.pid!));
    expect(new Set(pids.values()).size).toBe(2);
    expect([...pids.values()]).not.toContain(run.child.pid);
    // A test instance starts as it is: no restart for the allocator's setting (server/cli/allocator.ts).
    for (const pid of [run.child.pid!, ...pids.values()]) {
      const env = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
      expect(env.filter((e) => e.startsWith("MIMALLOC_PURGE_DELAY="))).toEqual([]);
    }
  });

  it("serves from every worker what worker 0 synced, after its snapshot refresh", async () => {
    // Both workers have the empty page in their caches before the sync.
    const key = await createKey(run.port);
    const path = "/v1/events?state=CA&limit=5";
    for (const page of await askSpread(run.port, path, key)) {
      expect(page.status).toBe(200);
      expect(JSON.parse(page.body).data).toEqual([]);
    }
    const events = [eventRecord(1001, 10, `${inTenDays}T20:00:00Z`), eventRecord(1002, 10, `${inTenDays}T21:00:00Z`)];
    appendFileSync(source, events.map((e, i) => `${JSON.stringify({ ...e, seq: 2 + i })}\n`).join(""));
    // Each worker, asked again until it shows the new watermark and snapshot: none is left behind.
    const caughtUp = new Set<number>();
    await until("every worker seeing the sync and the snapshot", run, async () => {
      const h = await health(run.port);
      if (h.watermark === 3 && h.snapshotEvents === 2) caughtUp.add(h.worker!);
      return caughtUp.size === 2 ? true : undefined;
    });
    for (const page of await askSpread(run.port, path, key)) {
      expect(page.status).toBe(200);
      expect((JSON.parse(page.body) as { data: Array<{ id: number }> }).data.map((e) => e.id)).toEqual([1001, 1002]);
    }
  });

  it("takes a cursor made by one worker on every worker", async () => {
    const key = await createKey(run.port);
    const first = await fetchFresh(run.port, "/v1/events?state=CA&limit=1", { authorization: `Bearer ${key}` });
    const { nextCursor } = (JSON.parse(first.body) as { page: { nextCursor: string } }).page;
    expect(nextCursor).toEqual(expect.any(String));
    const path = `/v1/events?state=CA&limit=1&cursor=${encodeURIComponent(nextCursor)}`;
    for (const page of await askSpread(run.port, path, key)) {
      expect(page.status).toBe(200);
      expect((JSON.parse(page.body) as { data: Array<{ id: number }> }).data.map((e) => e.id)).toEqual([1002]);
    }
  });

  it("keeps a key's request rate exact across the workers", async () => {
    // A frozen test clock (shared through the ledger): no refill while the requests run.
    await postJson(run.port, "/_test/clock", { set: `${inTenDays}T00:00:00Z` });
    const key = await createKey(run.port);
    const statuses: number[] = [];
    for (let i = 0; i < 70; i++) {
      statuses.push((await fetchFresh(run.port, "/v1/events?limit=1", { authorization: `Bearer ${key}` })).status);
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(60);
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);
  });

  it("restarts a worker killed with SIGKILL, and the port keeps answering", async () => {
    const before = workerPids(run.child.pid!);
    const victim = before.get(1)!;
    process.kill(victim, "SIGKILL");
    await until("the killed worker gone", run, () => (isRunning(victim) ? undefined : true));
    const statuses: number[] = [];
    const restarted = await until("worker 1 back", run, async () => {
      const h = await health(run.port).catch(() => ({ worker: -1, pid: -1 }) as Health);
      statuses.push(h.pid === -1 ? 0 : 200);
      return h.worker === 1 && h.pid !== victim ? h.pid : undefined;
    });
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(workerPids(run.child.pid!)).toEqual(new Map([...before, [1, restarted]]));
    const notices = run
      .stderr()
      .split("\n")
      .filter((l) => l.includes("restarted"));
    expect(notices).toEqual([
      `marquee serve: worker 1 (pid ${victim}) was killed by SIGKILL; restarted it after 100 ms (pid ${restarted})`,
    ]);
  });

  it("on SIGTERM stops every worker and exits 0", async () => {
    const pids = [...workerPids(run.child.pid!).values()];
    expect(pids).toHaveLength(2);
    run.child.kill("SIGTERM");
    expect(await run.exited).toBe(0);
    expect(pids.filter(isRunning)).toEqual([]);
    await expect(fetchFresh(run.port, "/healthz")).rejects.toThrow(/ECONNREFUSED/);
  });
});

describe("a supervisor whose workers cannot run", () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await redis.stop();
  });

  it("exits 1 when worker 0 cannot listen, starting no other", async () => {
    // A listener that does not share its port (no SO_REUSEPORT): worker 0 cannot bind.
    const port = await freePort();
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen({ port, host: "127.0.0.1", exclusive: true }, r));
    const run = await serve(["--workers", "2", "--ledger", redis.url, "--port", String(port)]);
    try {
      expect(await run.exited).toBe(1);
      expect(run.stdout()).not.toMatch(/listening/);
      expect(run.stderr()).toMatch(/marquee serve: worker 0 \(pid \d+\) exited with code 1 before listening; stopping/);
      expect(run.stderr()).not.toMatch(/worker 1/);
    } finally {
      blocker.close();
      rmSync(run.dir, { recursive: true, force: true });
    }
  });

  it("gives up with exit 1 when a worker keeps crashing as soon as it starts", async () => {
    const run = await serve(["--workers", "2", "--ledger", redis.url]);
    try {
      await until("the listening line", run, () => (/listening/.test(run.stdout()) ? true : undefined));
      const first = workerPids(run.child.pid!).get(0)!;
      const killed = new Set<number>();
      // Kill worker 1 each time it is back, six times in a row: within seconds of each start.
      while (run.child.exitCode === null && killed.size < 6) {
        const pid = workerPids(run.child.pid!).get(1);
        if (pid !== undefined && !killed.has(pid)) {
          process.kill(pid, "SIGKILL");
          killed.add(pid);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(await run.exited).toBe(1);
      const lines = run.stderr().trim().split("\n");
      expect(lines.filter((l) => l.includes("restarted it after"))).toHaveLength(5);
      expect(lines.at(-1)).toMatch(
        /^marquee serve: worker 1 \(pid \d+\) was killed by SIGKILL, its 6th exit within 5 s of starting; stopping$/,
      );
      // Worker 0 was stopped with the supervisor.
      expect(isRunning(first)).toBe(false);
    } finally {
      if (run.child.exitCode === null) run.child.kill("SIGKILL");
      rmSync(run.dir, { recursive: true, force: true });
    }
  });
});

async function postJson(port: number, path: string, body: unknown): Promise<unknown> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** An account on the Business plan and a live key, made through whichever worker answers. */
async function createKey(port: number): Promise<string> {
  const { id } = (await postJson(port, "/_test/accounts", {
    email: `dev-${Math.random().toString(36).slice(2)}@example.com`,
    plan: "business",
    verified: true,
  })) as { id: number };
  return ((await postJson(port, `/_test/accounts/${id}/keys`, { kind: "live" })) as { key: string }).key;
}

describe("serve on a Redis that cannot hold the ledger", () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await redis.stop();
  });

  /** The command's exit code, or "still running" after 10 s (it is then killed). */
  const exitOf = async (args: string[]) => {
    const run = await serve(args);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const code = await Promise.race([
      run.exited,
      new Promise<string>((r) => {
        timer = setTimeout(() => {
          run.child.kill("SIGKILL");
          r("still running");
        }, 10_000);
      }),
    ]);
    clearTimeout(timer);
    rmSync(run.dir, { recursive: true, force: true });
    return { code, stderr: run.stderr(), stdout: run.stdout() };
  };

  it("exits 1 with Redis's words when a full Redis refuses the first write, closing what it opened", async () => {
    redis.cli("CONFIG", "SET", "maxmemory", "1");
    try {
      const r = await exitOf(["--ledger", redis.url]);
      expect(r.code).toBe(1);
      expect(r.stdout).not.toMatch(/listening/);
      expect(r.stderr).toBe("marquee serve: OOM command not allowed when used memory > 'maxmemory'.\n");
    } finally {
      redis.cli("CONFIG", "SET", "maxmemory", "0");
    }
  });

  it("refuses a read-only replica, naming its primary", async () => {
    const primary = await freePort();
    redis.cli("REPLICAOF", "127.0.0.1", String(primary));
    try {
      const r = await exitOf(["--ledger", redis.url]);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(
        `marquee serve: the Redis ledger at ${redis.url} is a read-only replica of 127.0.0.1:${primary}: name its primary\n`,
      );
    } finally {
      redis.cli("REPLICAOF", "NO", "ONE");
    }
  });
});
