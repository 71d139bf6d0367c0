/**
 * One HTTP suite, two targets (docs/architecture.md, Tests): in-process on Node (h3 `app.request`, better-sqlite3)
 * and a spawned Bun server (bun:sqlite) in test mode. Suites drive both through the same
 * `/_test/*` API, so nothing here reaches around the HTTP interface.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe } from "vitest";
import { BUN_SERVE_ARGS } from "../bin/find-bun.js";
import type { AppContext } from "../server/context.ts";
import type { Logger } from "../server/log.ts";
import type { OpenApiDocument } from "../server/openapi.ts";
import { freePort } from "./net.ts";
import { RequestValidator } from "./openapi-requests.ts";
import { ContractValidator } from "./openapi-validator.ts";
import { type RedisServer, startRedisServer } from "./redis-server.ts";

export { freePort };

export const ROOT = join(import.meta.dirname, "..");
export const BUN = join(ROOT, "node_modules", ".bin", "bun");

export interface Target {
  readonly kind: "in-process" | "bun" | "redis-pair";
  readonly baseUrl: string;
  readonly dir: string;
  /** The shared ledger's URL when the target runs on one (redis-pair). */
  readonly ledgerUrl?: string;
  fetch(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

/**
 * In-process, the app context is at hand: a suite may break the server's own connections at the
 * driver seam (a storage failure), which no HTTP request can do.
 */
export async function startInProcess(
  options: { baseUrl?: string; log?: Logger } = {},
): Promise<Target & { ctx: AppContext }> {
  const { createApp } = await import("../server/app.ts");
  const { createContext } = await import("../server/context.ts");
  const { resolveConfig } = await import("../server/config.ts");
  const dir = mkdtempSync(join(tmpdir(), "marquee-test-"));
  const baseUrl = options.baseUrl ?? "http://marquee.test";
  const ctx = await createContext(
    resolveConfig({ dbPath: join(dir, "marquee.db"), testMode: true, baseUrl }, {}),
    undefined,
    { log: options.log },
  );
  const app = createApp(ctx);
  return {
    kind: "in-process",
    baseUrl,
    dir,
    ctx,
    fetch: async (path, init) => app.request(new URL(path, baseUrl).href, init),
    async close() {
      ctx.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An API key's shape with enough of its secret to be one (a masked one reads `mq_live_[redacted]`). */
const KEY_IN_LOG = /mq_(?:live|builder|legacy)_[A-Za-z0-9]{16,}/;

/**
 * Throws when the server's log holds an API key: every suite that runs against a spawned server
 * also checks that its log never does (docs/operations.md, Logs and metrics).
 */
function assertNoKeyInLog(file: string): void {
  if (!existsSync(file)) return;
  const found = KEY_IN_LOG.exec(readFileSync(file, "utf8"));
  if (found) throw new Error(`the server's log holds an API key: ${found[0].slice(0, 16)}…`);
}

/**
 * A spawned server in test mode; `dir` serves existing files (another server's, say) instead of
 * new ones. Its log goes to `dir/marquee.log` (unless `extraArgs` name a file), searched for keys
 * when it closes.
 */
export async function startBunServer(
  extraArgs: string[] = [],
  dir: string = mkdtempSync(join(tmpdir(), "marquee-e2e-")),
  options: { fileSizeLimitable?: boolean; baseUrl?: string; env?: Record<string, string> } = {},
): Promise<Target & { child: ChildProcess; output: () => string }> {
  const port = await freePort();
  const listening = `http://127.0.0.1:${port}`;
  const baseUrl = options.baseUrl ?? listening;
  // fileSizeLimitable: SIGXFSZ ignored (an ignored signal stays ignored across exec), so a file
  // size limit set on the running server (prlimit) fails its writes with an I/O error instead of
  // killing it: a disk that refuses writes, for a real process without root.
  const [command, prefix] = options.fileSizeLimitable
    ? ["bash", ["-c", `trap '' XFSZ; exec "$0" "$@"`, BUN]]
    : [BUN, []];
  const child = spawn(
    command,
    [
      ...prefix,
      ...BUN_SERVE_ARGS,
      join(ROOT, "server/main.ts"),
      "serve",
      "--test-mode",
      "--port",
      String(port),
      "--host",
      "127.0.0.1",
      "--base-url",
      baseUrl,
      "--db",
      join(dir, "marquee.db"),
      ...(extraArgs.includes("--log-file") ? [] : ["--log-file", join(dir, "marquee.log")]),
      ...extraArgs,
    ],
    {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, MARQUEE_SECRET: "", MARQUEE_DB: "", ...options.env },
    },
  );
  const logFile = extraArgs.includes("--log-file")
    ? extraArgs[extraArgs.indexOf("--log-file") + 1]
    : join(dir, "marquee.log");
  let stderr = "";
  let stdout = "";
  child.stderr!.on("data", (d) => (stderr += d));
  child.stdout!.on("data", (d) => (stdout += d));
  await waitForHealth(listening, child, () => stderr);
  return {
    kind: "bun",
    baseUrl,
    dir,
    child,
    /** Everything the server printed so far, stdout then stderr. */
    output: () => stdout + stderr,
    fetch: (path, init) => {
      const url = new URL(path, baseUrl);
      return fetch(new URL(url.pathname + url.search, listening).href, { ...init, redirect: "manual" });
    },
    async close() {
      // A child killed by a signal has a signalCode and no exitCode; its exit event has fired.
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
      try {
        assertNoKeyInLog(logFile);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

export async function waitForHealth(baseUrl: string, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode}): ${stderr()}`);
    try {
      const res = await fetch(`${baseUrl}/healthz`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`server did not become healthy: ${stderr()}`);
}

/**
 * A client over a target with the test-mode helpers suites need. Every response of a documented
 * operation is checked against the `/v1/openapi.json` that target publishes, so each
 * HTTP suite is also a conformance suite; a nonconforming response throws.
 */
export class Client {
  private contract: Promise<{ responses: ContractValidator; requests: RequestValidator }> | undefined;

  constructor(readonly target: Target) {}

  async fetch(path: string, init?: RequestInit): Promise<Response> {
    const res = await this.target.fetch(path, init);
    const method = (init?.method ?? "GET").toUpperCase();
    const url = new URL(path, this.target.baseUrl);
    const { responses, requests } = await this.validators();
    if (responses.doc.paths[url.pathname]?.[method.toLowerCase()]) {
      const { problems } = await responses.check(method, url.pathname, res.clone());
      if (problems.length > 0) {
        throw new Error(
          `${method} ${url.pathname} → ${res.status} does not conform to /v1/openapi.json:\n  ${problems.join("\n  ")}`,
        );
      }
    }
    // A request the server accepted must be one the document accepts (test/openapi-requests.ts).
    if (res.status >= 200 && res.status < 300 && requests.documents(method, url.pathname)) {
      const problems = requests.check({
        method,
        url: url.pathname + url.search,
        headers: Object.fromEntries(new Headers(init?.headers).entries()),
        body: typeof init?.body === "string" ? init.body : undefined,
      });
      if (problems.length > 0) {
        throw new Error(
          `${method} ${url.pathname}${url.search} was accepted (${res.status}) but /v1/openapi.json refuses it:\n  ${problems.join("\n  ")}`,
        );
      }
    }
    return res;
  }

  private validators(): Promise<{ responses: ContractValidator; requests: RequestValidator }> {
    this.contract ??= this.target
      .fetch("/v1/openapi.json")
      .then((r) => r.json())
      .then(async (doc: OpenApiDocument) => ({
        responses: new ContractValidator(doc),
        requests: await RequestValidator.create(doc),
      }));
    return this.contract;
  }

  get(path: string, key?: string, headers: Record<string, string> = {}) {
    return this.fetch(path, { headers: key ? { authorization: `Bearer ${key}`, ...headers } : headers });
  }

  async postJson(path: string, body: unknown, headers: Record<string, string> = {}) {
    return this.fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
  }

  async records(lines: readonly object[]): Promise<void> {
    const res = await this.fetch("/_test/records", {
      method: "POST",
      headers: { "content-type": "application/x-ndjson" },
      body: lines.map((l) => JSON.stringify(l)).join("\n"),
    });
    if (!res.ok) throw new Error(`records failed: ${res.status} ${await res.text()}`);
  }

  async snapshot(): Promise<void> {
    const res = await this.fetch("/_test/snapshot", { method: "POST" });
    if (!res.ok) throw new Error(`snapshot failed: ${res.status}`);
  }

  async setClock(iso: string): Promise<void> {
    const res = await this.postJson("/_test/clock", { set: iso });
    if (!res.ok) throw new Error(`clock failed: ${res.status}`);
  }

  async advance(seconds: number): Promise<void> {
    const res = await this.postJson("/_test/clock", { advanceSeconds: seconds });
    if (!res.ok) throw new Error(`clock failed: ${res.status}`);
  }

  async reset(): Promise<void> {
    const res = await this.fetch("/_test/reset", { method: "POST" });
    if (!res.ok) throw new Error(`reset failed: ${res.status}`);
  }

  async fault(code: string, times = 1): Promise<void> {
    const res = await this.postJson("/_test/faults", { code, times });
    if (!res.ok) throw new Error(`fault failed: ${res.status}`);
  }

  /** Creates an account (docs/api.md, Test mode fields) and returns its id. */
  async account(fields: Record<string, unknown> = {}): Promise<number> {
    const res = await this.postJson("/_test/accounts", {
      email: "dev@example.com",
      plan: "business",
      verified: true,
      ...fields,
    });
    if (res.status !== 200 && res.status !== 201) throw new Error(`account failed: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { id: number }).id;
  }

  async patchAccount(id: number, fields: Record<string, unknown>): Promise<void> {
    const res = await this.fetch(`/_test/accounts/${id}`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(fields),
    });
    if (!res.ok) throw new Error(`patch failed: ${res.status} ${await res.text()}`);
  }

  async key(accountId: number, kind = "live"): Promise<string> {
    const res = await this.postJson(`/_test/accounts/${accountId}/keys`, { kind });
    if (res.status !== 200 && res.status !== 201) throw new Error(`key failed: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { key: string }).key;
  }

  /** An account on `plan` with one live key. */
  async keyFor(fields: Record<string, unknown> = {}, kind = "live"): Promise<string> {
    return this.key(await this.account(fields), kind);
  }
}

/**
 * Two spawned Bun servers on one Redis ledger (a throwaway redis-server) and one replica file,
 * requests alternating between them: every limit, the test clock, faults and reset must hold
 * across servers exactly as on one (docs/several-servers.md, "Run several servers").
 */
export async function startRedisPair(): Promise<Target & { servers: Target[]; redis: RedisServer }> {
  const redis = await startRedisServer();
  const dir = mkdtempSync(join(tmpdir(), "marquee-pair-"));
  const args = ["--ledger", redis.url];
  // One public base URL, as behind a load balancer: links either server renders are the same.
  const baseUrl = "http://marquee-pair.test";
  const first = await startBunServer(args, dir, { baseUrl });
  const second = await startBunServer(args, dir, { baseUrl });
  const servers = [first, second];
  let turn = 0;
  return {
    kind: "redis-pair",
    baseUrl,
    dir,
    ledgerUrl: redis.url,
    servers,
    redis,
    fetch: (path, init) => servers[turn++ % 2].fetch(path, init),
    async close() {
      await second.close();
      await first.close();
      await redis.stop();
    },
  };
}

export const TARGETS: readonly Target["kind"][] = ["in-process", "bun", "redis-pair"];

export function startTarget(kind: Target["kind"]): Promise<Target> {
  return kind === "bun" ? startBunServer() : kind === "redis-pair" ? startRedisPair() : startInProcess();
}

/**
 * Runs `suite` once per target: in-process (Node, better-sqlite3), against a spawned Bun
 * server (bun:sqlite), and against two Bun servers sharing a Redis ledger, requests alternating
 * between them. `use()` returns the suite's client after `beforeAll`.
 */
export function describeMatrix(name: string, suite: (use: () => Client, kind: Target["kind"]) => void): void {
  for (const kind of TARGETS) {
    describe(`${name} [${kind}]`, () => {
      let target: Target | undefined;
      let client: Client | undefined;
      beforeAll(async () => {
        target = await startTarget(kind);
        client = new Client(target);
      });
      afterAll(async () => {
        await target?.close();
      });
      suite(() => client!, kind);
    });
  }
}

/** Standard output as a person reads it: each JSON log line replaced by its `msg`. */
export function messagesOf(stdout: string): string {
  return stdout
    .split("\n")
    .map((line) => {
      if (!line.startsWith("{")) return line;
      try {
        const msg = (JSON.parse(line) as { msg?: unknown }).msg;
        return typeof msg === "string" ? msg : line;
      } catch {
        return line;
      }
    })
    .join("\n");
}

/** One request on a connection of its own, so the kernel picks the worker anew each time. */
export function fetchFresh(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode!, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** Whether a process with this id exists (signal 0 tests without sending anything). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
