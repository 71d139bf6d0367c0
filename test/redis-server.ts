/**
 * A throwaway `redis-server` for a test file: started on a free loopback port in a temporary
 * folder with deploy/redis.conf (the README's recommended configuration), stopped and
 * removed afterwards. Uses Debian's `redis-server` (.ci/run installs it).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./net.ts";

const REDIS_CONF = join(import.meta.dirname, "..", "deploy", "redis.conf");

export interface RedisServer {
  port: number;
  url: string;
  dir: string;
  /** SIGSTOP: the server keeps its connections but answers nothing (a hang). */
  pause(): void;
  /** SIGCONT after pause(). */
  resume(): void;
  /** Stops the server (SIGTERM, AOF kept) and starts it again on the same port and folder. */
  restart(): Promise<void>;
  /** Runs one command through redis-cli; returns its output. */
  cli(...args: string[]): string;
  stop(): Promise<void>;
}

async function waitForPing(port: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      if (execFileSync("redis-cli", ["-p", String(port), "ping"], { encoding: "utf8" }).trim() === "PONG") return;
    } catch {}
    if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not start`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startRedisServer(): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), "marquee-redis-"));
  const port = await freePort();
  let child: ChildProcess;
  const start = async () => {
    child = spawn("redis-server", [REDIS_CONF, "--port", String(port), "--bind", "127.0.0.1", "--dir", dir], {
      stdio: "ignore",
    });
    child.once("error", (err) => {
      throw new Error(`redis-server did not start (apt-get install redis-server, see .ci/run): ${err.message}`);
    });
    await waitForPing(port);
  };
  const stopChild = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGCONT");
      child.kill("SIGTERM");
    });
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    pause: () => void child.kill("SIGSTOP"),
    resume: () => void child.kill("SIGCONT"),
    async restart() {
      await stopChild();
      await start();
    },
    cli: (...args) => execFileSync("redis-cli", ["-p", String(port), ...args], { encoding: "utf8" }),
    async stop() {
      await stopChild();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RedisCluster {
  /** The first node's URL (any node's would do). */
  url: string;
  ports: number[];
  /** Runs one command through redis-cli on the node at `port`. */
  cli(port: number, ...args: string[]): string;
  stop(): Promise<void>;
}

/**
 * A Redis Cluster of three primaries, the slots split between them. Each refuses (CROSSSLOT) any
 * command or script whose keys span slots, and sends a client to the owner (MOVED) of a key it
 * does not hold: a ledger passing on it keeps each operation within one slot and follows the
 * cluster's slots. Each node runs in its own folder, with redis-server's defaults.
 */
export async function startRedisCluster(): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), "marquee-redis-cluster-"));
  const ports = [await freePort(), await freePort(), await freePort()];
  // Each node's cluster bus gets a free port of its own: the default, the port + 10,000, is past
  // 65,535 for ports above 55,535, which the kernel hands out too.
  const busPorts = [await freePort(), await freePort(), await freePort()];
  const cli = (port: number, ...args: string[]) =>
    execFileSync("redis-cli", ["-p", String(port), ...args], { encoding: "utf8" });
  const children: ChildProcess[] = ports.map((port, i) => {
    const own = join(dir, String(port));
    mkdirSync(own);
    return spawn(
      "redis-server",
      [
        ...["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--dir", own],
        ...["--cluster-enabled", "yes", "--cluster-port", String(busPorts[i])],
      ],
      { stdio: "ignore" },
    );
  });
  const deadline = Date.now() + 15_000;
  const until = async (what: string, probe: () => boolean) => {
    for (;;) {
      try {
        if (probe()) return;
      } catch {}
      if (Date.now() > deadline) throw new Error(`the cluster ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const stop = async () => {
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once("exit", () => resolve());
            child.kill("SIGTERM");
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await until("did not start", () => ports.every((p) => cli(p, "ping").trim() === "PONG"));
    const ranges = [
      ["0", "5460"],
      ["5461", "10922"],
      ["10923", "16383"],
    ];
    for (const [i, p] of ports.entries()) cli(p, "CLUSTER", "ADDSLOTSRANGE", ...ranges[i]);
    for (const i of [1, 2]) cli(ports[0], "CLUSTER", "MEET", "127.0.0.1", String(ports[i]), String(busPorts[i]));
    await until("did not become ready", () =>
      ports.every((p) => {
        const info = cli(p, "CLUSTER", "INFO");
        return info.includes("cluster_state:ok") && info.includes("cluster_known_nodes:3");
      }),
    );
  } catch (err) {
    // A cluster that did not form leaves no server behind.
    await stop();
    throw err;
  }
  return {
    url: `redis://127.0.0.1:${ports[0]}`,
    ports,
    cli,
    stop,
  };
}
