/**
 * One `marquee serve` per ledger (db/serve-lock.ts): a second server on the same files is refused
 * at start with one line and a non-zero exit, and leaves the first one serving; the lock goes with
 * its process, however that process ends.
 */
import { type ChildProcess, spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BUN, freePort, ROOT, startBunServer, type Target } from "./harness.ts";

const started: Array<Target & { child: ChildProcess }> = [];
afterEach(async () => {
  // Latest first: a server restarted on another's files stops before those files are removed.
  for (const s of started.splice(0).reverse()) await s.close();
});

async function serveSecond(db: string) {
  const port = await freePort();
  const r = spawnSync(BUN, ["server/main.ts", "serve", "--port", String(port), "--host", "127.0.0.1", "--db", db], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, MARQUEE_DB: "", MARQUEE_SECRET: "" },
    timeout: 20_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("marquee serve", () => {
  it("refuses a second server on the same ledger, and the first keeps serving", async () => {
    const first = await startBunServer();
    started.push(first);
    const db = join(first.dir, "marquee.db");

    const second = await serveSecond(db);
    expect(second.code).toBe(1);
    expect(second.stdout).not.toMatch(/listening/);
    const lines = second.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(
      `marquee serve: another marquee serve is using the ledger ${join(first.dir, "marquee.ledger.db")} ` +
        `(one server per ledger; its lock is ${join(first.dir, "marquee.ledger.db-serve.lock")})`,
    );

    const health = await first.fetch("/healthz");
    expect(health.status).toBe(200);
  });

  it("can start again on a ledger whose server was killed with SIGKILL", async () => {
    const first = await startBunServer();
    started.push(first);
    const exited = new Promise((r) => first.child.once("exit", r));
    first.child.kill("SIGKILL");
    await exited;

    // The same files, served again: the killed process's lock is gone with it.
    const again = await startBunServer([], first.dir);
    started.push(again);
    expect((await again.fetch("/healthz")).status).toBe(200);
  });
});
