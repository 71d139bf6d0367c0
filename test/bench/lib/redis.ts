/**
 * The Redis ledger for the bench: a redis-server started with the recommended configuration
 * (deploy/redis.conf: append-only file fsynced every second, no eviction) in the run directory
 * on a free loopback port, stopped when the run ends.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./config.ts";
import { RUN_DIR } from "./fixture.ts";
import { freePort, track } from "./proc.ts";

export const REDIS_CONF = join(ROOT, "deploy", "redis.conf");

export interface BenchRedis {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

export async function startBenchRedis(): Promise<BenchRedis> {
  const dir = join(RUN_DIR, "redis");
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const child = spawn(
    "redis-server",
    [REDIS_CONF, "--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--daemonize", "no"],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], detached: true },
  );
  const stop = track(child);
  let output = "";
  child.stdout!.on("data", (d) => (output = (output + d).slice(-4_000)));
  child.stderr!.on("data", (d) => (output = (output + d).slice(-4_000)));
  const failed = new Promise<never>((_, reject) => {
    child.once("error", (err) =>
      reject(new Error(`redis-server did not start (apt-get install -y redis-server): ${err.message}`)),
    );
    child.once("exit", (code) => reject(new Error(`redis-server exited (${code}): ${output.slice(-1_000)}`)));
  });
  failed.catch(() => {}); // observed below; once running, a later exit is the servers' to report
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      const pong = execFileSync("redis-cli", ["-p", String(port), "ping"], { encoding: "utf8", stdio: "pipe" });
      if (pong.trim() === "PONG") break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`redis-server did not answer PING on port ${port} within 10 s: ${output.slice(-1_000)}`);
    }
    await Promise.race([failed, new Promise((r) => setTimeout(r, 50))]);
  }
  return { url: `redis://127.0.0.1:${port}`, pid: child.pid!, stop };
}

/** "Redis 7.0.15", from `redis-server --version`. */
export function redisVersion(): string {
  try {
    const out = execFileSync("redis-server", ["--version"], { encoding: "utf8" });
    return `Redis ${/v=(\S+)/.exec(out)?.[1] ?? "unknown"}`;
  } catch {
    return "Redis (version unknown)";
  }
}
