/**
 * The operator's CLI as a real process on Bun, for the operations suites (docs/operations.md):
 * one run to its end, or one in the background while something else happens.
 */
import { execFile, spawnSync } from "node:child_process";
import { join } from "node:path";
import { expect } from "vitest";
import { BUN, ROOT } from "./harness.ts";

export interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of a run: the caller's, without settings of the machine it runs on. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^MARQUEE_|^PORT$/.test(k)));
  return { ...env, ...extra };
}

export function marquee(args: string[], options: { env?: Record<string, string>; input?: string } = {}): Run {
  const r = spawnSync(BUN, [join(ROOT, "server/main.ts"), ...args], {
    cwd: ROOT,
    encoding: "utf8",
    input: options.input,
    timeout: 60_000,
    env: cleanEnv(options.env),
  });
  return { status: r.status, stdout: r.stdout.trim(), stderr: r.stderr.trim() };
}

export function marqueeAsync(args: string[], options: { env?: Record<string, string> } = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      BUN,
      [join(ROOT, "server/main.ts"), ...args],
      { cwd: ROOT, env: cleanEnv(options.env), timeout: 60_000 },
      (_err, stdout, stderr) =>
        resolve({ status: child.exitCode, stdout: String(stdout).trim(), stderr: String(stderr).trim() }),
    );
  });
}

/** The run's stdout, after checking it exited 0. */
export function ok(r: Run): string {
  expect(r, r.stderr).toMatchObject({ status: 0 });
  return r.stdout;
}

export async function waitFor(what: string, check: () => Promise<boolean> | boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Stops a spawned server and keeps its files (a test server's `close` removes its folder). */
export async function stopKeepingFiles(server: { child: import("node:child_process").ChildProcess }): Promise<void> {
  const { child } = server;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}
