#!/usr/bin/env bun
/**
 * Start-up against the runtime's own (docs/operations.md, Start-up), side by side:
 *
 *   - an empty test instance, from spawn to its first answer (GET /healthz): `marquee serve
 *     --test-mode --port 0`, and `startMarquee()` from the call; against a bare `Bun.serve`
 *     script from spawn to its first answer (test/bench/startup/bare-serve.ts); and, between
 *     the two, what any instance must do first: the lock, the replica and the ledger opened with
 *     Marquee's storage modules, then `Bun.serve` (test/bench/startup/storage-floor.ts);
 *   - `marquee --help` from spawn to exit, against a script that prints one line; and the same
 *     through `npx marquee` (bin/marquee.js on Node) against Node printing one line.
 *
 * Each round runs every case once, in an order that turns round by round, so a machine that is
 * busier for a moment weighs on every side; the figure is the median of the rounds. Also, not
 * against a target: `startMarquee()` to its first key and page (what a test does first).
 *
 * Then what each import costs: the module imported alone in a fresh Bun, timed around its
 * `import()` (its own dependencies included), median of five.
 *
 *   bun test/bench/startup.ts [--runs N]    prints the tables; exits 1 when a target is missed
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startMarquee } from "../../testing/index.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const BUN = process.execPath;
const HERE = join(import.meta.dirname, "startup");

export const STARTUP_TARGETS = { instanceVsBare: 2.5, helpVsOneLine: 2 } as const;

/** Imports whose cost is reported: the packages Marquee uses, then its own modules (with what they import). */
const IMPORTS: Array<{ spec: string; what: string }> = [
  { spec: "h3", what: "h3 (with srvx and rou3)" },
  { spec: "valibot", what: "valibot" },
  { spec: "@turf/boolean-point-in-polygon", what: "@turf/boolean-point-in-polygon" },
  { spec: "node:crypto", what: "node:crypto (Bun's)" },
  { spec: "node:http", what: "node:http (Bun's; the Redis ledger's listener)" },
  { spec: "@valibot/to-json-schema", what: "@valibot/to-json-schema (OpenAPI, MCP)" },
  { spec: "@modelcontextprotocol/sdk/server/index.js", what: "MCP SDK server (zod, ajv)" },
  { spec: "pg", what: "pg" },
  { spec: "pg-logical-replication", what: "pg-logical-replication" },
  { spec: "ioredis", what: "ioredis" },
  { spec: "city-timezones", what: "city-timezones (demo data's places)" },
  { spec: "./server/cli/commands.ts", what: "server/cli/commands.ts (the command table)" },
  { spec: "./server/serving.ts", what: "server/serving.ts (everything a server loads at start)" },
  { spec: "./server/app.ts", what: "server/app.ts (routes and h3)" },
  { spec: "./server/context.ts", what: "server/context.ts (replica, ledger, list service)" },
  { spec: "./server/list/service.ts", what: "server/list/service.ts" },
  { spec: "./server/mcp/server.ts", what: "server/mcp/server.ts" },
  { spec: "./server/openapi.ts", what: "server/openapi.ts" },
  { spec: "./sync/demo/generate.ts", what: "sync/demo/generate.ts" },
  { spec: "./sync/postgres/follower.ts", what: "sync/postgres/follower.ts" },
  { spec: "./server/ledger/redis.ts", what: "server/ledger/redis.ts" },
];

export interface StartupReport {
  runs: number;
  /** Milliseconds per round, by case. */
  ms: {
    bare: number[];
    floor: number[];
    serve: number[];
    startMarquee: number[];
    firstPage: number[];
    oneLine: number[];
    help: number[];
    nodeOneLine: number[];
    npxHelp: number[];
  };
  imports: Array<{ what: string; ms: number }>;
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
}

/** Spawn to the first answer of `path` at the URL the process prints; then SIGTERM. */
async function spawnToAnswer(args: string[], path: string): Promise<number> {
  const started = performance.now();
  const child = spawn(BUN, args, { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"], env: CHILD_ENV });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout!.on("data", (d) => {
        out += d;
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]);
      });
      child.once("exit", (code) => reject(new Error(`${args.join(" ")} exited (${code}) before listening`)));
    });
    const res = await fetch(url + path);
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`${path} answered ${res.status}`);
    return performance.now() - started;
  } finally {
    child.kill("SIGTERM");
    await exited(child);
  }
}

/** Spawn to exit. */
async function spawnToExit(file: string, args: string[]): Promise<number> {
  const started = performance.now();
  const child = spawn(file, args, { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"], env: CHILD_ENV });
  await exited(child);
  if (child.exitCode !== 0) throw new Error(`${file} ${args.join(" ")} exited ${child.exitCode}`);
  return performance.now() - started;
}

const CHILD_ENV = { ...process.env, MARQUEE_DB: "", MARQUEE_LEDGER: "", MARQUEE_SECRET: "", PORT: "" };

/** `startMarquee()` to its first answer; with `page`, to its first key and first page of events. */
async function library(page: boolean): Promise<number> {
  const started = performance.now();
  const m = await startMarquee();
  try {
    if (page) {
      const key = await m.createKey();
      const res = await fetch(`${m.url}/v1/events`, { headers: { authorization: `Bearer ${key}` } });
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`/v1/events answered ${res.status}`);
    } else {
      const res = await fetch(`${m.url}/healthz`);
      await res.arrayBuffer();
    }
    return performance.now() - started;
  } finally {
    await m.stop();
  }
}

/** One import alone in a fresh Bun, timed around its `import()`. */
async function importMs(spec: string): Promise<number> {
  const script = `const t = performance.now(); await import(${JSON.stringify(spec)}); console.log(performance.now() - t);`;
  const child = spawn(BUN, ["-e", script], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"], env: CHILD_ENV });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  await exited(child);
  const ms = Number(out.trim());
  if (child.exitCode !== 0 || Number.isNaN(ms)) throw new Error(`import(${spec}) failed`);
  return ms;
}

export async function measureStartup(
  options: { runs?: number; log?: (line: string) => void } = {},
): Promise<StartupReport> {
  const runs = options.runs ?? 5;
  const dir = mkdtempSync(join(tmpdir(), "marquee-startup-"));
  const ms: StartupReport["ms"] = {
    bare: [],
    floor: [],
    serve: [],
    startMarquee: [],
    firstPage: [],
    oneLine: [],
    help: [],
    nodeOneLine: [],
    npxHelp: [],
  };
  const main = join(ROOT, "server", "main.ts");
  const cases: Array<[keyof StartupReport["ms"], (round: number) => Promise<number>]> = [
    ["bare", () => spawnToAnswer([join(HERE, "bare-serve.ts")], "/")],
    [
      "floor",
      (round) => spawnToAnswer([join(HERE, "storage-floor.ts"), mkdtempSync(join(dir, `floor-${round}-`))], "/"),
    ],
    [
      "serve",
      (round) =>
        spawnToAnswer(
          [main, "serve", "--test-mode", "--port", "0", "--host", "127.0.0.1", "--db", join(dir, `${round}.db`)],
          "/healthz",
        ),
    ],
    ["startMarquee", () => library(false)],
    ["firstPage", () => library(true)],
    ["oneLine", () => spawnToExit(BUN, [join(HERE, "one-line.ts")])],
    ["help", () => spawnToExit(BUN, [main, "--help"])],
    ["nodeOneLine", () => spawnToExit("node", [join(HERE, "one-line.mjs")])],
    ["npxHelp", () => spawnToExit("node", [join(ROOT, "bin", "marquee.js"), "--help"])],
  ];
  try {
    // One unmeasured round: the first spawn of each file pays for reading it from disk.
    for (const [, run] of cases) await run(-1);
    for (let round = 0; round < runs; round++) {
      const order = round % 2 === 0 ? cases : [...cases].reverse();
      for (const [name, run] of order) ms[name].push(await run(round));
      options.log?.(`start-up round ${round + 1}/${runs}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const imports: StartupReport["imports"] = [];
  for (const { spec, what } of IMPORTS) {
    const times: number[] = [];
    for (let i = 0; i < 5; i++) times.push(await importMs(spec));
    imports.push({ what, ms: median(times) });
  }
  return { runs, ms, imports };
}

const fmt = (n: number) => (n < 10 ? n.toFixed(1) : n.toFixed(0));
const list = (xs: number[]) => xs.map(fmt).join(", ");

/** The verdicts: each target, what was measured, met or not. */
export function startupVerdicts(r: StartupReport): Array<{ target: string; measured: string; met: boolean }> {
  const bare = median(r.ms.bare);
  const oneLine = median(r.ms.oneLine);
  const against = (name: string, xs: number[], base: number, factor: number, baseName: string) => {
    const m = median(xs);
    return {
      target: `${name} within ${factor}x ${baseName}`,
      measured: `${fmt(m)} ms against ${fmt(base)} ms (${(m / base).toFixed(1)}x)`,
      met: m <= factor * base,
    };
  };
  return [
    against(
      "empty `marquee serve --test-mode --port 0`, spawn to first answer,",
      r.ms.serve,
      bare,
      STARTUP_TARGETS.instanceVsBare,
      "a bare Bun.serve script",
    ),
    against(
      "empty `startMarquee()`, call to first answer,",
      r.ms.startMarquee,
      bare,
      STARTUP_TARGETS.instanceVsBare,
      "a bare Bun.serve script",
    ),
    against("`marquee --help`", r.ms.help, oneLine, STARTUP_TARGETS.helpVsOneLine, "a script that prints one line"),
  ];
}

/** The figures as Markdown: one table of the cases (medians, each run, ratios), one of the imports. */
export function startupTables(r: StartupReport): string[] {
  const row = (what: string, xs: number[], base?: number) =>
    `| ${what} | ${fmt(median(xs))} | ${base === undefined ? "" : `${(median(xs) / base).toFixed(1)}x`} | ${list(xs)} |`;
  const bare = median(r.ms.bare);
  const oneLine = median(r.ms.oneLine);
  const nodeOneLine = median(r.ms.nodeOneLine);
  return [
    `Medians of ${r.runs} rounds, side by side (ms):`,
    "",
    "| case | median | against its runtime | each round |",
    "|---|--:|--:|---|",
    row("bare `Bun.serve` script, spawn to first answer", r.ms.bare),
    row("the lock, a new replica and ledger, then `Bun.serve` (storage-floor.ts)", r.ms.floor, bare),
    row("`marquee serve --test-mode --port 0`, spawn to first answer (/healthz)", r.ms.serve, bare),
    row("`startMarquee()`, call to first answer (/healthz)", r.ms.startMarquee, bare),
    row("`startMarquee()`, call to its first key and page of /v1/events", r.ms.firstPage, bare),
    row("Bun script printing one line, spawn to exit", r.ms.oneLine),
    row("`marquee --help` (bun server/main.ts)", r.ms.help, oneLine),
    row("Node script printing one line", r.ms.nodeOneLine),
    row("`npx marquee --help` (node bin/marquee.js, then Bun)", r.ms.npxHelp, nodeOneLine),
    "",
    "What each import costs alone in a fresh Bun, its own dependencies included (median of 5, ms):",
    "",
    "| module | ms |",
    "|---|--:|",
    ...r.imports.map((i) => `| ${i.what} | ${fmt(i.ms)} |`),
  ];
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { runs: { type: "string" } } });
  const report = await measureStartup({
    runs: values.runs ? Number(values.runs) : undefined,
    log: (line) => console.error(line),
  });
  console.log(startupTables(report).join("\n"));
  console.log("");
  const verdicts = startupVerdicts(report);
  for (const v of verdicts) console.log(`${v.met ? "met" : "MISSED"}: ${v.target}: ${v.measured}`);
  process.exit(verdicts.every((v) => v.met) ? 0 : 1);
}
