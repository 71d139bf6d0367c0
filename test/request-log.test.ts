/**
 * The request log and the request id (docs/operations.md, Logs and metrics; Request id): one JSON
 * line per answered request with its fields, for a 200, a 401, a 402, a 429 and a created
 * handoff; an incoming X-Request-Id used, a malformed one replaced. In-process (h3 on Node), on
 * a spawned Bun server (`Bun.serve`'s router) and on a spawned Bun server on a Redis ledger
 * (the `node:http` listener). Every line those runs write is then searched for every key, token
 * and password they used: none may appear.
 */

import { spawn } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BUN_SERVE_ARGS } from "../bin/find-bun.js";
import { createLogger } from "../server/log.ts";
import { BUN, Client, freePort, ROOT, startBunServer, startInProcess, type Target } from "./harness.ts";
import { PortalSession } from "./portal-client.ts";
import { eventRecord, venueRecord } from "./records.ts";
import { type RedisServer, startRedisServer } from "./redis-server.ts";

const NOW = "2030-03-01T12:00:00.000Z";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface LogLine {
  time: string;
  level: string;
  msg: string;
  requestId: string;
  method: string;
  path: string;
  status: number;
  code: string | null;
  accountId: number | null;
  keyId: number | null;
  rows: number;
  durationMs: number;
  [field: string]: unknown;
}

/** Every secret a run handled, to be found in no log line. */
const secrets = new Set<string>();

async function issued(c: Client, fields: Record<string, unknown>, kind = "live") {
  const accountId = await c.account(fields);
  const res = await c.postJson(`/_test/accounts/${accountId}/keys`, { kind });
  const { id: keyId, key } = (await res.json()) as { id: number; key: string };
  secrets.add(key);
  return { accountId, keyId, key };
}

/** What each request of the scenario sent and got back, to find its line by. */
interface Sent {
  requestId: string;
  expect: Partial<LogLine>;
}

/**
 * The scenario every target runs: the five answers whose lines are checked, then requests that
 * carry every kind of secret (keys in headers and in query strings, a sign-in token, a session,
 * a CSRF token, a new key shown once, an MCP call).
 */
async function scenario(c: Client): Promise<Sent[]> {
  await c.setClock(NOW);
  await c.records([venueRecord(1), eventRecord(1001, 1, "2030-03-10T20:00:00Z")]);
  const sent: Sent[] = [];
  const note = (res: Response, expected: Partial<LogLine>) => {
    sent.push({ requestId: res.headers.get("x-request-id")!, expect: expected });
  };

  const paid = await issued(c, { plan: "business" });
  const ok = await c.get("/v1/events?state=CA&limit=5", paid.key, { "x-request-id": "client-req.1:a" });
  expect(ok.status).toBe(200);
  expect(ok.headers.get("x-request-id")).toBe("client-req.1:a");
  expect(((await ok.json()) as { data: unknown[] }).data).toHaveLength(1);
  note(ok, { status: 200, code: null, accountId: paid.accountId, keyId: paid.keyId, rows: 1, path: "/v1/events" });

  const forged = `mq_live_${"Z".repeat(40)}`;
  secrets.add(forged);
  const denied = await c.get("/v1/events", forged, { "x-request-id": "has space" });
  expect(denied.status).toBe(401);
  const deniedId = denied.headers.get("x-request-id")!;
  expect(deniedId).toMatch(UUID);
  expect(((await denied.json()) as { error: { requestId: string } }).error.requestId).toBe(deniedId);
  note(denied, { status: 401, code: "invalid_api_key", accountId: null, keyId: null, rows: 0 });

  const unpaid = await issued(c, { plan: "none", hadSubscription: true });
  const payment = await c.get("/v1/events", unpaid.key, { "x-request-id": "x".repeat(129) });
  expect(payment.status).toBe(402);
  expect(payment.headers.get("x-request-id")).toMatch(UUID);
  note(payment, {
    status: 402,
    code: "subscription_required",
    accountId: unpaid.accountId,
    keyId: unpaid.keyId,
    rows: 0,
  });

  const limited = await issued(c, { plan: "enterprise", rateSustained: 1, rateBurst: 1 });
  expect((await c.get("/v1/events", limited.key)).status).toBe(200);
  const tooMany = await c.get("/v1/events", limited.key, { "x-request-id": "A".repeat(128) });
  expect(tooMany.status).toBe(429);
  expect(tooMany.headers.get("x-request-id")).toBe("A".repeat(128));
  note(tooMany, {
    status: 429,
    code: "rate_limited",
    accountId: limited.accountId,
    keyId: limited.keyId,
    rows: 0,
  });

  const builder = await issued(c, { plan: "business" }, "builder");
  const handoff = await c.fetch("/v1/ticket-handoffs", {
    method: "POST",
    headers: { authorization: `Bearer ${builder.key}`, "content-type": "application/json" },
    body: JSON.stringify({ event_id: 1001 }),
  });
  expect(handoff.status).toBe(201);
  note(handoff, {
    status: 201,
    code: null,
    accountId: builder.accountId,
    keyId: builder.keyId,
    rows: 0,
    method: "POST",
    path: "/v1/ticket-handoffs",
  });

  // Secrets where a careless log would catch them: query strings, a request id, the portal.
  await c.target.fetch(`/v1/events?api_key=${paid.key}&token=${forged}&state=CA`);
  await c.target.fetch(`/no/such/${paid.key}`);
  await c.target.fetch("/v1/events", { headers: { "x-request-id": paid.key } });
  const portal = await PortalSession.open(c, paid.accountId);
  secrets.add(portal.cookie.split("=")[1]);
  secrets.add(portal.csrf);
  const created = await portal.create("ci");
  secrets.add(created.key);
  const link = (await (await c.postJson(`/_test/accounts/${paid.accountId}/sign-in-link`, {})).json()) as {
    url: string;
  };
  secrets.add(new URL(link.url).searchParams.get("token")!);
  const u = new URL(link.url);
  await c.target.fetch(u.pathname + u.search);
  const mcp = await c.fetch("/mcp", {
    method: "POST",
    headers: {
      authorization: `Bearer ${created.key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "search_events", arguments: { state: "CA" } },
    }),
  });
  expect(mcp.status).toBe(200);
  return sent;
}

/** The log's lines, parsed (each must be one JSON object). */
function parse(text: string): LogLine[] {
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as LogLine);
}

function checkLines(lines: LogLine[], sent: Sent[]): void {
  for (const s of sent) {
    const mine = lines.filter((l) => l.msg === "request" && l.requestId === s.requestId);
    expect(mine, `one line for ${s.requestId}`).toHaveLength(1);
    const [line] = mine;
    expect(line).toMatchObject({ level: "info", msg: "request", method: "GET", path: "/v1/events", ...s.expect });
    expect(Date.parse(line.time)).not.toBeNaN();
    expect(line.durationMs).toBeGreaterThanOrEqual(0);
    for (const field of ["code", "accountId", "keyId"]) expect(line).toHaveProperty(field);
  }
  // Path only: no line has a query string.
  for (const l of lines.filter((x) => x.msg === "request")) expect(l.path).not.toContain("?");
}

/** Polls until `probe` returns something. */
async function until<T>(what: string, probe: () => T | undefined): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: timed out`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const read = (target: Target) => readFileSync(join(target.dir, "marquee.log"), "utf8");

/** Every log written by the runs below, searched for secrets at the end. */
const logs: string[] = [];

describe("the request log", () => {
  let redis: RedisServer | undefined;
  afterAll(async () => {
    await redis?.stop();
  });

  it("in-process: a JSON line per answered request with its fields, and the request id", async () => {
    const dir = mkdtempSync(join(tmpdir(), "marquee-log-"));
    const file = join(dir, "requests.log");
    const log = createLogger({ format: "json", level: "info", file });
    const target = await startInProcess({ log });
    try {
      const sent = await scenario(new Client(target));
      log.flush();
      const text = readFileSync(file, "utf8");
      logs.push(text);
      checkLines(parse(text), sent);
    } finally {
      await target.close();
      log.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  const spawned = (name: string, args: () => Promise<string[]>) =>
    it(name, async () => {
      const dir = mkdtempSync(join(tmpdir(), "marquee-log-"));
      const file = join(dir, "requests.log");
      let target: Target | undefined;
      try {
        target = await startBunServer(["--log-file", file, ...(await args())], dir);
        const sent = await scenario(new Client(target));
        const last = sent.at(-1)!.requestId;
        // Written behind the requests: wait for the scenario's last checked line and what follows it.
        const text = await until("the log lines", () => {
          const t = readFileSync(file, "utf8");
          return t.includes(last) && t.includes('"path":"/mcp"') ? t : undefined;
        });
        logs.push(text);
        checkLines(parse(text), sent);
        expect(text).toContain('"msg":"admin listener on http://127.0.0.1:');
      } finally {
        await target?.close();
      }
    }, 60_000);

  spawned("on Bun (Bun.serve's router): the same lines", async () => ["--admin-port", "0"]);

  spawned("on Bun on a Redis ledger with a password (the node:http listener): the same lines", async () => {
    redis = await startRedisServer();
    const password = "pw-Hx81-redis-secret";
    redis.cli("CONFIG", "SET", "requirepass", password);
    secrets.add(password);
    return ["--ledger", `redis://:${password}@127.0.0.1:${redis.port}`, "--admin-port", "0"];
  });

  it("every suite's spawned server is searched for keys as it closes (test/harness.ts)", async () => {
    const target = await startBunServer();
    await target.fetch(`/no/such/mq_live_${"Q".repeat(40)}`);
    expect(await until("the line", () => (/mq_live_\[redacted\]/.test(read(target)) ? true : undefined))).toBe(true);
    // A key written there by anything makes the suite fail when the server closes.
    appendFileSync(join(target.dir, "marquee.log"), `{"msg":"leak","key":"mq_builder_${"k".repeat(40)}"}\n`);
    await expect(target.close()).rejects.toThrow(/the server's log holds an API key: mq_builder_kkkkk/);
  });

  it("holds no key, session, sign-in token, CSRF token or password in any line of the runs above", () => {
    expect(logs).toHaveLength(3);
    expect(secrets.size).toBeGreaterThan(10);
    const all = logs.join("");
    for (const secret of secrets) {
      const at = all.indexOf(secret);
      expect(at, `a log holds ${secret.slice(0, 12)}…: ${all.slice(Math.max(0, at - 300), at + 100)}`).toBe(-1);
    }
    // The requests that carried them were logged, by path only.
    expect(all).toContain('"path":"/developers/sign-in"');
    expect(all).toContain('"path":"/no/such/mq_live_[redacted]"');
  });
});

describe("without --log-file", () => {
  /** `serve` with `args`; its standard output once `/healthz` has been asked for twice. */
  async function stdoutOf(args: string[]): Promise<string> {
    const dir = mkdtempSync(join(tmpdir(), "marquee-log-stdout-"));
    const port = await freePort();
    const child = spawn(
      BUN,
      [...BUN_SERVE_ARGS, join(ROOT, "server/main.ts"), "serve", "--port", String(port), "--host", "127.0.0.1"].concat([
        "--db",
        join(dir, "m.db"),
        ...args,
      ]),
      { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, MARQUEE_DB: "", MARQUEE_LOG_FORMAT: "" } },
    );
    let out = "";
    child.stdout!.on("data", (d) => (out += d));
    child.stderr!.resume();
    try {
      await until("listening", () => (out.includes("Marquee listening on") ? true : undefined));
      for (const id of ["first-healthz", "second-healthz"])
        await fetch(`http://127.0.0.1:${port}/healthz`, { headers: { "x-request-id": id } });
      // Lines are written behind the requests; a marker request after them is polled for.
      await fetch(`http://127.0.0.1:${port}/livez`, { headers: { "x-request-id": "marker" } });
      if (!args.includes("warn")) await until("the lines", () => (out.includes("marker") ? true : undefined));
    } finally {
      // Its output is read to the end: a line still buffered is written as it exits.
      const closed = new Promise((r) => child.once("close", r));
      child.kill("SIGTERM");
      await closed;
      rmSync(dir, { recursive: true, force: true });
    }
    return out;
  }

  it("writes JSON request lines to standard output when it is not a terminal", async () => {
    const lines = (await stdoutOf([])).split("\n").filter((l) => l.startsWith("{"));
    const requests = lines.map((l) => JSON.parse(l) as LogLine).filter((l) => l.msg === "request");
    expect(requests.map((l) => l.requestId)).toEqual(["first-healthz", "second-healthz", "marker"]);
  }, 30_000);

  it("writes text lines with --log-format text, and none for requests with --log-level warn", async () => {
    expect(await stdoutOf(["--log-format", "text"])).toMatch(
      /^\S+Z INFO request GET \/healthz 200 [\d.]+ms rows=0 code=- accountId=- keyId=- requestId=first-healthz$/m,
    );
    expect(await stdoutOf(["--log-level", "warn"])).not.toContain("healthz");
  }, 30_000);
});
