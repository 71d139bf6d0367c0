/**
 * SIGHUP (docs/operations.md, Signals and exit codes): the server reads its settings again and
 * takes the log's level from them, without stopping; a file it cannot read changes nothing.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startBunServer, type Target } from "./harness.ts";

let server: Target & { child: import("node:child_process").ChildProcess };
let configFile: string;
let logFile: string;

const requestLines = () =>
  readFileSync(logFile, "utf8")
    .split("\n")
    .filter((l) => l.includes('"msg":"request"') && l.includes('"path":"/healthz"')).length;

/** Polls `check` until it holds, with a generous deadline (the log is written in batches). */
async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  const { mkdtempSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const dir = mkdtempSync(join(tmpdir(), "marquee-reload-"));
  configFile = join(dir, "marquee.toml");
  logFile = join(dir, "server.log");
  writeFileSync(configFile, '[serve]\nlog-level = "warn"\n');
  server = await startBunServer(["--config", configFile, "--log-file", logFile, "--log-format", "json"]);
});
afterAll(async () => server?.close());

it("takes the log level from the configuration file again on SIGHUP, and keeps serving", async () => {
  expect((await server.fetch("/healthz")).status).toBe(200);
  // At warn no request line is written; a later line proves the log was flushed meanwhile.
  writeFileSync(configFile, '[serve]\nlog-level = "info"\n');
  server.child.kill("SIGHUP");
  await until("the reload line", () => readFileSync(logFile, "utf8").includes("reloaded on SIGHUP: log level info"));
  expect(requestLines()).toBe(0);

  expect((await server.fetch("/healthz")).status).toBe(200);
  await until("a request line at info", () => requestLines() === 1);

  // A file that cannot be read: the level stays, the server serves on.
  writeFileSync(configFile, '[serve]\nlog-level = "loud"\n');
  server.child.kill("SIGHUP");
  await until("the refusal line", () => readFileSync(logFile, "utf8").includes("nothing changed"));
  expect((await server.fetch("/healthz")).status).toBe(200);
  await until("another request line", () => requestLines() === 2);
  expect(server.child.exitCode).toBeNull();
});
