// Nothing a command does not use is loaded (docs/operations.md, Start-up), read from the module
// registry of a real process (test/loaded-modules.ts): `marquee --help` loads the command table
// alone; an empty test instance has answered its first request without the MCP SDK, the schema
// converter, the demo data, the PostgreSQL or Redis clients; each comes when first used.
import { expect, it } from "bun:test";
import { spawnSync } from "node:child_process";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..");

interface Loaded {
  own: string[];
  packages: string[];
  statuses: number[];
}

/** One line of the probe per stage: after start-up, then after each path. */
function probe(args: string[]): Loaded[] {
  const r = spawnSync(process.execPath, [join(ROOT, "test/loaded-modules.ts"), ...args], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, MARQUEE_DB: "", MARQUEE_LEDGER: "", MARQUEE_SECRET: "" },
    timeout: 90_000,
  });
  if (r.status !== 0) throw new Error(`probe failed (${r.status}): ${r.stderr}`);
  // The server's own JSON log lines share standard output: the probe's lines are those with `statuses`.
  return r.stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l))
    .filter((l) => Array.isArray(l.statuses));
}

const NEVER_AT_START = [
  "@modelcontextprotocol/sdk",
  "zod",
  "ajv",
  "@valibot/to-json-schema",
  "city-timezones",
  "pg",
  "pg-logical-replication",
  "pg-copy-streams",
  "ioredis",
];

it("marquee --help loads the entry and the command table, no package", () => {
  const [help] = probe(["--help"]);
  expect(help.packages).toEqual([]);
  expect(help.own).toEqual(["server/cli/commands.ts", "server/main.ts"]);
});

it("an empty test instance answers without MCP, OpenAPI, demo data, PostgreSQL or Redis; /mcp and /docs load theirs when asked", () => {
  const [start, mcp, docs] = probe(["serve", "--test-mode", "--", "POST /mcp", "GET /docs"]);
  expect(start.statuses).toEqual([200]);
  expect(start.packages.filter((p) => NEVER_AT_START.includes(p))).toEqual([]);
  const ownAtStart = start.own.filter((m) =>
    /^(server\/mcp|server\/openapi|server\/pages\/docs|sync\/demo|sync\/postgres\/(?!schema))/.test(m),
  );
  expect(ownAtStart).toEqual([]);
  expect(mcp.statuses).toEqual([200, 200]);
  expect(mcp.packages).toContain("@modelcontextprotocol/sdk");
  expect(mcp.own).toContain("server/mcp/server.ts");
  expect(docs.statuses).toEqual([200, 200, 200]);
  expect(docs.own).toContain("server/openapi.ts");
  expect(docs.own).toContain("server/pages/docs.ts");
}, 60_000);

it("serve --demo loads the demo data generator, and still no PostgreSQL client", () => {
  const [start] = probe(["serve", "--demo"]);
  expect(start.statuses).toEqual([200]);
  expect(start.own).toContain("sync/demo/generate.ts");
  expect(start.packages).toContain("city-timezones");
  expect(start.packages.filter((p) => p.startsWith("pg"))).toEqual([]);
}, 120_000);
