/**
 * The servers compared side by side: the ceiling (bare Bun.serve replaying captured
 * bytes), Marquee on Bun (bun:sqlite), Marquee on Node (better-sqlite3, from a bundle) and
 * Prism mocking Marquee's own OpenAPI document, and Marquee on Bun on a shared Redis ledger
 * (`--ledger redis://…`), alone and as `--workers 2`. Each is loaded alone (side by side ones take
 * turns: measureSides in measure.ts), so none steals CPU from another.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { BUN, CACHE, ROOT } from "./config.ts";
import { REPLICA_DB } from "./fixture.ts";
import { runOk, type Server, startServer } from "./proc.ts";

export type TargetId = "ceiling" | "bun" | "redis" | "redis-w2" | "node" | "prism";

export const TARGET_TITLES: Record<TargetId, string> = {
  ceiling: "Ceiling (Bun.serve, captured bytes)",
  bun: "Marquee on Bun",
  redis: "Marquee on Bun, Redis ledger",
  "redis-w2": "Marquee on Bun, Redis ledger, 2 workers",
  node: "Marquee on Node",
  prism: "Prism 5 mock",
};

const NODE_BUNDLE_DIR = join(CACHE, "node");
export const NODE_ENTRY = join(NODE_BUNDLE_DIR, "entry-node.js");
export const DIST_BINARY = join(ROOT, "dist", "marquee");

/**
 * Marquee's own flags for every bench server: loopback, the cached replica, no periodic
 * snapshot refresh during a run (a refresh rebuilds the 1M-row snapshot; the bench measures
 * steady serving, and the sync-under-load figure measures a refresh separately), and no request
 * lines (`--log-level warn`): what the request log and the metrics cost is measured on its own
 * (test/bench/observability.ts), and the figures stay comparable with earlier runs.
 */
export function serveArgs(port: number): string[] {
  return [
    "serve",
    "--db",
    REPLICA_DB,
    "--port",
    String(port),
    "--host",
    "127.0.0.1",
    "--base-url",
    `http://127.0.0.1:${port}`,
    "--snapshot-interval",
    "3600",
    "--log-level",
    "warn",
  ];
}

const ENV = {
  MARQUEE_SECRET: "",
  MARQUEE_DB: "",
  MARQUEE_BASE_URL: "",
  MARQUEE_LEDGER: "",
  PORT: "",
  MARQUEE_LOG_FORMAT: "",
  MARQUEE_LOG_LEVEL: "",
  MARQUEE_LOG_FILE: "",
  MARQUEE_ADMIN_PORT: "",
};

/** `extra`: flags after the bench's own (a later `--log-level` wins). */
export function startMarqueeBun(port: number, extra: string[] = []): Promise<Server> {
  return startServer("marquee-bun", BUN, ["server/main.ts", ...serveArgs(port), ...extra], {
    port,
    probe: "/healthz",
    env: ENV,
  });
}

/**
 * Marquee on Bun on the Redis ledger at `ledgerUrl`, one process or a `--workers` supervisor
 * with its workers (all in one process group). Ready once the supervisor says every worker
 * listens: the probe alone may answer from worker 0 while the others start.
 */
export function startMarqueeRedis(port: number, ledgerUrl: string, workers = 1): Promise<Server> {
  const args = [...serveArgs(port), "--ledger", ledgerUrl, ...(workers > 1 ? ["--workers", String(workers)] : [])];
  return startServer(workers > 1 ? `marquee-redis-w${workers}` : "marquee-redis", BUN, ["server/main.ts", ...args], {
    port,
    probe: "/healthz",
    env: ENV,
    readyOutput: "Marquee listening on",
  });
}

/**
 * Node 20 cannot run .ts, so the server is bundled for Node. `--splitting` keeps db/driver.ts's
 * dynamic import of the bun:sqlite adapter in its own chunk; without it the bundler hoists
 * `import "bun:sqlite"` into the entry and Node refuses to load it.
 */
export async function buildNodeBundle(): Promise<void> {
  await runOk(BUN, [
    "build",
    "server/entry-node.ts",
    "--target=node",
    "--splitting",
    "--outdir",
    NODE_BUNDLE_DIR,
    "--external",
    "better-sqlite3",
    "--external",
    "bun:sqlite",
  ]);
}

export function startMarqueeNode(port: number): Promise<Server> {
  return startServer("marquee-node", "node", [NODE_ENTRY, ...serveArgs(port)], { port, probe: "/healthz", env: ENV });
}

/** `npm run build`: the single binary whose cold start is measured. */
export async function buildBinary(): Promise<number> {
  const r = await runOk("npm", ["run", "--silent", "build"]);
  if (!existsSync(DIST_BINARY)) throw new Error("npm run build did not produce dist/marquee");
  return r.ms;
}

export function startBinary(port: number): Promise<Server> {
  return startServer("marquee-binary", DIST_BINARY, serveArgs(port), { port, probe: "/healthz", env: ENV, pollMs: 2 });
}

export function startCeiling(port: number, bodiesFile: string): Promise<Server> {
  return startServer("ceiling", BUN, ["test/bench/ceiling.ts", "--port", String(port), "--bodies", bodiesFile], {
    port,
    probe: "/healthz",
  });
}

/**
 * Prism is not a dependency (package.json is not the bench's to change), so npx fetches it from
 * the npm registry; the first run downloads it. Any HTTP answer to the probe means it listens.
 */
export function startPrism(port: number, openapiFile: string): Promise<Server> {
  return startServer(
    "prism",
    "npx",
    ["--yes", "@stoplight/prism-cli@5", "mock", "-h", "127.0.0.1", "-p", String(port), openapiFile],
    {
      port,
      probe: "/v1/events",
      timeoutMs: 240_000,
      pollMs: 250,
      ready: () => true,
    },
  );
}

/** The straightforward peer (test/bench/peer.ts) over the bench replica. */
export function startPeer(port: number): Promise<Server> {
  return startServer("peer", BUN, ["test/bench/peer.ts", "--port", String(port), "--db", REPLICA_DB], {
    port,
    probe: "/healthz",
    env: ENV,
  });
}
