/**
 * The serving process from outside (docs/operations.md, The program and Signals), with real
 * processes: `--port 0` and the start-up line, `--ready-file`, `--exit-with-stdin`, SIGTERM
 * finishing a request in flight before the port is freed, SIGHUP, and `npx marquee`
 * (bin/marquee.js) passing signals on, exiting with its server's status and taking its server
 * along when it is killed. The request in flight is slow for a real reason: its body is still
 * being uploaded when the signal comes.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { get } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BUN_SERVE_ARGS } from "../bin/find-bun.js";
import { BUN, isRunning, messagesOf, ROOT } from "./harness.ts";
import { eventRecord, venueRecord } from "./records.ts";
import { type RedisServer, startRedisServer } from "./redis-server.ts";

const BIN = join(ROOT, "bin", "marquee.js");
const ENV: NodeJS.ProcessEnv = { ...process.env, MARQUEE_SECRET: "", MARQUEE_DB: "", MARQUEE_LEDGER: "", PORT: "" };
delete ENV.MARQUEE_PARENT_PID;

interface Run {
  child: ChildProcess;
  dir: string;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code, or the signal that ended the process. */
  exited: Promise<number | NodeJS.Signals | null>;
}

const runs: Run[] = [];
/** Every process a test saw (servers, workers), killed after it if still there. */
const seen = new Set<number>();

/**
 * `marquee serve ARGS --ready-file DIR/ready.json` in a new folder DIR (`DIR` in ARGS is replaced
 * too): through `npx marquee` (bin/marquee.js) or on Bun directly.
 */
function serve(args: string[], options: { via: "npx" | "bun"; stdin?: "pipe" | "ignore" }): Run {
  const dir = mkdtempSync(join(tmpdir(), "marquee-signals-"));
  const full = [
    "serve",
    "--db",
    join(dir, "marquee.db"),
    "--ready-file",
    join(dir, "ready.json"),
    ...args.map((a) => a.replaceAll("DIR", dir)),
  ];
  const [file, argv] =
    options.via === "npx"
      ? [process.execPath, [BIN, ...full]]
      : [BUN, [...BUN_SERVE_ARGS, join(ROOT, "server/main.ts"), ...full]];
  const child = spawn(file, argv, { cwd: ROOT, env: ENV, stdio: [options.stdin ?? "ignore", "pipe", "pipe"] });
  seen.add(child.pid!);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d) => (stdout += d));
  child.stderr!.on("data", (d) => (stderr += d));
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) =>
    child.once("exit", (code, signal) => resolve(signal ?? code)),
  );
  const run = { child, dir, stdout: () => stdout, stderr: () => stderr, exited };
  runs.push(run);
  return run;
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

const readyFile = (run: Run) => join(run.dir, "ready.json");

/** The ready file's content once the server has written it. */
async function ready(run: Run): Promise<{ url: string; pid: number }> {
  const ready = await until("the ready file", run, () =>
    existsSync(readyFile(run)) ? JSON.parse(readFileSync(readyFile(run), "utf8")) : undefined,
  );
  seen.add(ready.pid);
  return ready;
}

/** Whether a new connection to the port is refused (nothing listens there). */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", () => resolve(true));
  });
}

const portOf = (url: string) => Number(new URL(url).port);

/** GET on a connection of its own, so the kernel picks the worker anew each time. */
function getFresh(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve(body));
    }).on("error", reject);
  });
}

/**
 * POST /_test/records whose body is sent in two parts: the request is in flight, its handler
 * waiting for the rest of the body, until `finish` sends it. The head asks for `100 Continue`,
 * and the first part goes only once the server has answered it: by then the server has accepted
 * the connection and read the request's head (a connection still waiting to be accepted when the
 * port closes is refused, not in flight). Resolves with the response's status and body.
 */
async function slowUpload(url: string): Promise<{ finish(): Promise<{ status: number; body: string }> }> {
  const lines = `${JSON.stringify(venueRecord(1))}\n${JSON.stringify(eventRecord(1, 1, "2031-05-01T20:00:00-04:00"))}\n`;
  const cut = Math.floor(lines.length / 2);
  const socket = connect(portOf(url), "127.0.0.1");
  let response = "";
  const closed = new Promise<void>((resolve, reject) => {
    socket.once("close", () => resolve());
    socket.once("error", reject);
  });
  const continued = new Promise<void>((resolve) => {
    socket.on("data", (d) => {
      response += d;
      if (response.startsWith("HTTP/1.1 100 Continue\r\n\r\n")) resolve();
    });
  });
  socket.write(
    `POST /_test/records HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-ndjson\r\nConnection: close\r\nExpect: 100-continue\r\nContent-Length: ${Buffer.byteLength(lines)}\r\n\r\n`,
  );
  await continued;
  socket.write(lines.slice(0, cut));
  return {
    async finish() {
      socket.write(lines.slice(cut));
      await closed;
      const [head, body] = response.slice("HTTP/1.1 100 Continue\r\n\r\n".length).split("\r\n\r\n");
      return { status: Number(head.split(" ")[1]), body };
    },
  };
}

afterEach(() => {
  for (const pid of seen) if (isRunning(pid)) process.kill(pid, "SIGKILL");
  seen.clear();
  for (const run of runs.splice(0)) rmSync(run.dir, { recursive: true, force: true });
});

describe("--port 0, the start-up line and --ready-file", () => {
  it("binds a free port, names it and the base URL apart, and serves there", async () => {
    const run = serve(["--test-mode", "--port", "0", "--host", "127.0.0.1"], { via: "bun" });
    const line = await until(
      "the start-up line",
      run,
      () => /Marquee listening on .*/.exec(messagesOf(run.stdout()))?.[0],
    );
    const [, port] = /^Marquee listening on http:\/\/127\.0\.0\.1:(\d+) \(base URL http:\/\/localhost:(\d+), /.exec(
      line,
    )!;
    expect(Number(port)).toBeGreaterThan(0);
    expect(line).toBe(
      `Marquee listening on http://127.0.0.1:${port} (base URL http://localhost:${port}, replica ${join(run.dir, "marquee.db")}, test mode)`,
    );
    // Standard output is a pipe, so the log is JSON: the start-up line is one of its lines.
    const json = run
      .stdout()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((o) => o.msg === line);
    expect(json).toMatchObject({ level: "info", url: `http://127.0.0.1:${port}`, baseUrl: `http://localhost:${port}` });
    expect(Date.parse(String(json?.time))).not.toBeNaN();
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    // The base URL made from the real port is the one the server publishes.
    const openapi = await (await fetch(`http://127.0.0.1:${port}/v1/openapi.json`)).json();
    expect(openapi.servers[0].url).toBe(`http://localhost:${port}`);
  });

  it("writes the ready file whole once the server answers, with the URL that reaches it and its pid; removes it on stop", async () => {
    // Every address bound: the line names the wildcard, the file the loopback URL that reaches it.
    const run = serve(["--test-mode", "--port", "0"], { via: "bun" });
    const { url, pid } = await ready(run);
    const content = JSON.parse(readFileSync(readyFile(run), "utf8"));
    expect(Object.keys(content).sort()).toEqual(["pid", "url"]);
    expect(pid).toBe(run.child.pid);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(messagesOf(run.stdout())).toContain(
      `Marquee listening on http://0.0.0.0:${portOf(url)} (base URL http://localhost:${portOf(url)},`,
    );
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    // Written beside, then renamed: nothing else is left in the folder.
    expect(readdirSync(run.dir).filter((f) => f.startsWith("ready"))).toEqual(["ready.json"]);
    run.child.kill("SIGTERM");
    expect(await run.exited).toBe(0);
    expect(existsSync(readyFile(run))).toBe(false);
  });

  it("with --exit-with-stdin stops cleanly when its standard input closes", async () => {
    const run = serve(["--test-mode", "--port", "0", "--exit-with-stdin"], { via: "bun", stdin: "pipe" });
    const { url } = await ready(run);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    run.child.stdin!.end();
    expect(await run.exited).toBe(0);
    expect(messagesOf(run.stdout())).toMatch(
      /Marquee stopped \(standard input closed\): requests in flight answered; closed the ledger and the replica\n$/,
    );
    expect(await refused(portOf(url))).toBe(true);
  });

  it("with --exit-with-stdin still exits at once when it cannot start (its port taken)", async () => {
    const first = serve(["--test-mode", "--port", "0", "--host", "127.0.0.1"], { via: "bun" });
    const { url } = await ready(first);
    const second = serve(["--test-mode", "--port", String(portOf(url)), "--host", "127.0.0.1", "--exit-with-stdin"], {
      via: "bun",
      stdin: "pipe",
    });
    expect(await second.exited).toBe(1);
    expect(second.stderr()).toMatch(/^marquee serve: .*(EADDRINUSE|in use)/i);
    expect(existsSync(readyFile(second))).toBe(false);
  });

  it("refuses --exit-with-stdin with --sync-from - (both want standard input)", async () => {
    const run = serve(["--exit-with-stdin", "--sync-from", "-"], { via: "bun" });
    expect(await run.exited).toBe(2);
    expect(run.stderr().trim()).toBe(
      "marquee serve: --exit-with-stdin and --sync-from - both need standard input; use one of them",
    );
  });
});

describe("signals to `npx marquee serve`", () => {
  it("SIGTERM: no new connections, the request in flight answered, then exit 0 with the port free", async () => {
    const run = serve(["--test-mode", "--port", "0", "--host", "127.0.0.1"], { via: "npx" });
    const { url, pid } = await ready(run);
    expect(pid).not.toBe(run.child.pid); // the server is the wrapper's child
    const upload = await slowUpload(url);
    run.child.kill("SIGTERM");
    await until("the port closed to new connections", run, async () =>
      (await refused(portOf(url))) ? true : undefined,
    );
    expect(isRunning(pid)).toBe(true); // still finishing the upload
    const answer = await upload.finish();
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ applied: 2 });
    expect(await run.exited).toBe(0);
    expect(isRunning(pid)).toBe(false);
    expect(messagesOf(run.stdout())).toMatch(
      /\nMarquee stopped \(SIGTERM\): requests in flight answered; closed the ledger and the replica\n$/,
    );
  });

  it("SIGHUP: both keep running and the server keeps answering", async () => {
    const run = serve(["--test-mode", "--port", "0", "--host", "127.0.0.1"], { via: "npx" });
    const { url, pid } = await ready(run);
    for (let i = 0; i < 3; i++) {
      run.child.kill("SIGHUP");
      process.kill(pid, "SIGHUP");
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
    }
    expect([isRunning(run.child.pid!), isRunning(pid)]).toEqual([true, true]);
    run.child.kill("SIGINT");
    expect(await run.exited).toBe(0);
    expect(messagesOf(run.stdout())).toMatch(/Marquee stopped \(SIGINT\)/);
  });

  it("SIGKILL of the wrapper: the server stops by itself and frees the port", async () => {
    const run = serve(["--test-mode", "--port", "0", "--host", "127.0.0.1"], { via: "npx" });
    const { url, pid } = await ready(run);
    run.child.kill("SIGKILL");
    expect(await run.exited).toBe("SIGKILL");
    await until("the orphaned server gone", run, () => (isRunning(pid) ? undefined : true));
    expect(await refused(portOf(url))).toBe(true);
  });

  it("passes on a signal the server does not handle, and ends the way its server ended", async () => {
    const run = serve(["--test-mode", "--port", "0", "--host", "127.0.0.1"], { via: "npx" });
    const { pid } = await ready(run);
    run.child.kill("SIGUSR2");
    expect(await run.exited).toBe("SIGUSR2");
    expect(isRunning(pid)).toBe(false);
  });

  it("exits with its server's status", async () => {
    const run = serve(["--port", "0", "--workers", "0"], { via: "npx" });
    expect(await run.exited).toBe(2);
    expect(run.stderr().trim()).toBe("marquee serve: --workers must be an integer from 1 to 64");
  });
});

describe("signals to `npx marquee serve --workers 2`", () => {
  let redis: RedisServer;

  beforeAll(async () => {
    redis = await startRedisServer();
  });

  afterAll(async () => {
    await redis?.stop();
  });

  /** The supervisor (the wrapper's child) and its workers. */
  function family(wrapper: number): { supervisor: number; workers: number[] } {
    const children = (pid: number) =>
      execFileSync("pgrep", ["-P", String(pid)], { encoding: "utf8" })
        .trim()
        .split("\n")
        .filter(Boolean)
        .map(Number);
    const [supervisor] = children(wrapper);
    const workers = children(supervisor);
    for (const p of [supervisor, ...workers]) seen.add(p);
    return { supervisor, workers };
  }

  const start = () =>
    serve(["--test-mode", "--port", "0", "--host", "127.0.0.1", "--workers", "2", "--ledger", redis.url], {
      via: "npx",
    });

  it("binds one free port for both workers, and on SIGTERM answers the request in flight, stops all, exits 0", async () => {
    const run = start();
    const { url, pid } = await ready(run);
    const { supervisor, workers } = family(run.child.pid!);
    expect(pid).toBe(supervisor);
    expect(workers).toHaveLength(2);
    expect(messagesOf(run.stdout())).toContain(
      `Marquee listening on ${url} (base URL http://localhost:${portOf(url)},`,
    );
    // Both workers answer on that port (each says which it is).
    const answered = new Set<number>();
    await until("both workers answering", run, async () => {
      answered.add(JSON.parse(await getFresh(`${url}/healthz`)).worker);
      return answered.size === 2 ? true : undefined;
    });
    // SIGHUP reaches every worker through the supervisor, and stops none.
    run.child.kill("SIGHUP");
    expect(JSON.parse(await getFresh(`${url}/healthz`)).status).toBe("ok");
    expect([run.child.pid!, supervisor, ...workers].filter(isRunning)).toHaveLength(4);
    const upload = await slowUpload(url);
    run.child.kill("SIGTERM");
    await until("the port closed to new connections", run, async () =>
      (await refused(portOf(url))) ? true : undefined,
    );
    const answer = await upload.finish();
    expect(answer.status).toBe(200);
    expect(await run.exited).toBe(0);
    expect([supervisor, ...workers].filter(isRunning)).toEqual([]);
    expect(messagesOf(run.stdout())).toMatch(/\nMarquee stopped: 2 workers stopped\n$/);
    expect(existsSync(readyFile(run))).toBe(false);
  });

  it("SIGKILL of the wrapper: the supervisor and every worker stop, and the port is free", async () => {
    const run = start();
    const { url } = await ready(run);
    const { supervisor, workers } = family(run.child.pid!);
    run.child.kill("SIGKILL");
    await until("the supervisor and its workers gone", run, () =>
      [supervisor, ...workers].some(isRunning) ? undefined : true,
    );
    expect(await refused(portOf(url))).toBe(true);
  });
});
