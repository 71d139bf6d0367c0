/**
 * The small rules under the request log (docs/operations.md, Logs and metrics; Request id): which
 * incoming ids are kept, what a path and a journal query keep of a target, the text format, and
 * the sink's order and clean close.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { UsageError } from "../server/cli/args.ts";
import { resolveConfig } from "../server/config.ts";
import { requestIdFrom } from "../server/handle.ts";
import { createLogger } from "../server/log.ts";
import { pathOf, type RequestRecord, redactPath, redactQuery } from "../server/request-record.ts";
import { BUN, ROOT } from "./harness.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe("request ids", () => {
  it.each(["a", "req-1", "A.b_c:d-e", "x".repeat(128), "0f8fad5b-d9cb-469f-a165-70867728950e"])("keeps %s", (id) => {
    expect(requestIdFrom(id)).toBe(id);
  });
  it.each([
    ["absent", null],
    ["empty", ""],
    ["too long", "x".repeat(129)],
    ["a space", "a b"],
    ["a slash", "a/b"],
    ["non-ASCII", "réq"],
    ["a key's shape", `mq_live_${"a".repeat(40)}`],
    ["a key's shape inside", `x-mq_builder_${"a".repeat(40)}`],
  ])("replaces one with %s by a new UUID", (_, id) => {
    const made = requestIdFrom(id);
    expect(made).toMatch(UUID);
    expect(requestIdFrom(id)).not.toBe(made);
  });
});

describe("what a line keeps of a request target", () => {
  it.each([
    ["/v1/events?state=NY", "/v1/events"],
    ["/v1/events", "/v1/events"],
    ["http://host:8080/a/b?c=d", "/a/b"],
    ["http://host", "/"],
    ["/?x", "/"],
  ])("the path of %s is %s", (target, path) => {
    expect(pathOf(target)).toBe(path);
  });

  it("masks a key wherever it is in a path", () => {
    expect(redactPath(`/x/mq_legacy_${"A1".repeat(20)}/y`)).toBe("/x/mq_legacy_[redacted]/y");
    expect(redactPath("/v1/events")).toBe("/v1/events");
  });

  it("replaces the values of credential-like parameters in a query, and key-shaped values anywhere", () => {
    expect(redactQuery("state=NY&api_key=abc&token=t&Password=p&limit=5")).toBe(
      "state=NY&api_key=[redacted]&token=[redacted]&Password=[redacted]&limit=5",
    );
    expect(redactQuery(`q=mq_live_${"a".repeat(40)}&x`)).toBe("q=mq_live_[redacted]&x");
    expect(redactQuery("csrf%5Ftoken=abc")).toBe("csrf%5Ftoken=[redacted]");
    expect(redactQuery("")).toBe("");
  });
});

const record: RequestRecord = {
  time: Date.parse("2026-11-28T12:00:00.000Z"),
  requestId: "r-1",
  method: "GET",
  path: '/v1/"odd" path',
  query: "state=NY",
  status: 402,
  code: "subscription_required",
  accountId: 7,
  keyId: 9,
  rows: 0,
  durationMs: 1.23456,
  route: "/v1/events",
};

describe("the log's formats and sink", () => {
  const withLog = (
    format: "json" | "text",
    level: "info" | "warn",
    write: (log: ReturnType<typeof createLogger>) => void,
  ) => {
    const dir = mkdtempSync(join(tmpdir(), "marquee-log-unit-"));
    try {
      const log = createLogger({ format, level, file: join(dir, "log"), worker: 1 });
      write(log);
      log.close();
      return readFileSync(join(dir, "log"), "utf8");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it("writes a JSON request line with escaping where needed, and the worker", () => {
    const text = withLog("json", "info", (log) => log.request(record));
    expect(JSON.parse(text)).toEqual({
      time: "2026-11-28T12:00:00.000Z",
      level: "info",
      msg: "request",
      requestId: "r-1",
      method: "GET",
      path: '/v1/"odd" path',
      status: 402,
      code: "subscription_required",
      accountId: 7,
      keyId: 9,
      rows: 0,
      durationMs: 1.235,
      worker: 1,
    });
  });

  it("writes text lines for a terminal", () => {
    const text = withLog("text", "info", (log) => {
      log.request(record);
      log.warn("sync from x failed", { attempt: 2, why: "no route" });
    });
    expect(text.split("\n")).toEqual([
      '2026-11-28T12:00:00.000Z INFO request GET "/v1/\\"odd\\" path" 402 1.235ms rows=0 code=subscription_required accountId=7 keyId=9 requestId=r-1 worker=1',
      expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z WARN sync from x failed attempt=2 why="no route" worker=1$/),
      "",
    ]);
  });

  it("drops lines below the level, and keeps the order of many lines", () => {
    const text = withLog("json", "warn", (log) => {
      for (let i = 0; i < 5000; i++) {
        log.request(record);
        log.error("line", { i });
      }
    });
    const lines = text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { msg: string; i: number });
    expect(lines).toHaveLength(5000);
    expect(lines.map((l) => l.i)).toEqual(Array.from({ length: 5000 }, (_, i) => i));
  });
});

describe("configuration of the log, the admin port and readiness", () => {
  it("takes flags over the environment over the defaults", () => {
    const base = resolveConfig({ logFile: "/tmp/x.log" }, {});
    expect(base).toMatchObject({
      logFormat: "json",
      logLevel: "info",
      adminPort: undefined,
      adminHost: "127.0.0.1",
      maxUpstreamLagS: 120,
    });
    const env = {
      MARQUEE_LOG_FORMAT: "text",
      MARQUEE_LOG_LEVEL: "warn",
      MARQUEE_LOG_FILE: "/var/log/m.log",
      MARQUEE_ADMIN_PORT: "9464",
      MARQUEE_ADMIN_HOST: "0.0.0.0",
      MARQUEE_MAX_UPSTREAM_LAG: "30",
    };
    expect(resolveConfig({}, env)).toMatchObject({
      logFormat: "text",
      logLevel: "warn",
      logFile: "/var/log/m.log",
      adminPort: 9464,
      adminHost: "0.0.0.0",
      maxUpstreamLagS: 30,
    });
    expect(resolveConfig({ logLevel: "error", adminPort: 9100 }, env)).toMatchObject({
      logLevel: "error",
      adminPort: 9100,
    });
  });

  it.each([
    ["MARQUEE_LOG_FORMAT", "yaml", "MARQUEE_LOG_FORMAT must be one of text, json"],
    ["MARQUEE_LOG_LEVEL", "loud", "MARQUEE_LOG_LEVEL must be one of debug, info, warn, error"],
    ["MARQUEE_ADMIN_PORT", "70000", "MARQUEE_ADMIN_PORT must be a port number (0 to 65535)"],
    ["MARQUEE_ADMIN_PORT", "x", "MARQUEE_ADMIN_PORT must be an integer >= 0"],
    ["MARQUEE_MAX_UPSTREAM_LAG", "0", "MARQUEE_MAX_UPSTREAM_LAG must be an integer >= 1"],
  ])("refuses %s=%s in one line", (name, value, message) => {
    expect(() => resolveConfig({}, { [name]: value })).toThrow(new UsageError(message));
  });

  it.each([
    [["--log-level", "loud"], "marquee serve: --log-level must be one of debug, info, warn, error\n"],
    [["--log-format", "xml"], "marquee serve: --log-format must be one of text, json\n"],
    [["--admin-port", "99999"], "marquee serve: --admin-port must be a port number (0 to 65535)\n"],
    [["--max-upstream-lag", "0"], "marquee serve: --max-upstream-lag must be an integer >= 1\n"],
  ])("serve %j is a usage error", (args, stderr) => {
    const r = spawnSync(BUN, [join(ROOT, "server/main.ts"), "serve", "--port", "0", ...args], {
      encoding: "utf8",
      env: { ...process.env, MARQUEE_DB: "" },
    });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 2, stderr });
  });
});
