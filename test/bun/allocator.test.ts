// A command restarts itself in place with the allocator purge delay it asks for
// (server/cli/allocator.ts): the same process id and arguments byte for byte, the environment
// kept, and nothing done when the variable is set already (the user's choice).
import { afterAll, expect, it } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { purgeDelayFor } from "../../server/cli/allocator.ts";

const dir = mkdtempSync(join(tmpdir(), "marquee-allocator-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const probe = join(dir, "probe.ts");
writeFileSync(
  probe,
  `import { restartWithPurgeDelay } from ${JSON.stringify(join(import.meta.dir, "../../server/cli/allocator.ts"))};
await restartWithPurgeDelay(process.env.PROBE_DELAY ?? "-1");
console.log(JSON.stringify({ pid: process.pid, value: process.env.MIMALLOC_PURGE_DELAY ?? null, args: process.argv.slice(2), other: process.env.PROBE_OTHER ?? null }));
`,
);

async function run(env: Record<string, string | undefined>, args: string[]) {
  const clean = { ...process.env, ...env };
  for (const [name, value] of Object.entries(clean)) if (value === undefined) delete clean[name];
  const child = Bun.spawn([process.execPath, probe, ...args], { env: clean as Record<string, string>, stdout: "pipe" });
  const out = await new Response(child.stdout).text();
  expect(await child.exited).toBe(0);
  return {
    spawnedPid: child.pid,
    ...(JSON.parse(out) as { pid: number; value: string | null; args: string[]; other: string | null }),
  };
}

it("restarts in place with MIMALLOC_PURGE_DELAY=-1, the same pid, arguments and environment", async () => {
  const args = ["a b", "é ✓", "", "--json"];
  const r = await run({ MIMALLOC_PURGE_DELAY: undefined, PROBE_OTHER: "kept" }, args);
  expect(r.value).toBe("-1");
  expect(r.pid).toBe(r.spawnedPid);
  expect(r.args).toEqual(args);
  expect(r.other).toBe("kept");
});

it("leaves a value the user set alone", async () => {
  const r = await run({ MIMALLOC_PURGE_DELAY: "50" }, ["x"]);
  expect(r.value).toBe("50");
  expect(r.args).toEqual(["x"]);
});

it("keeps freed memory for a whole sync, 100 ms for a server on a Redis ledger, and a second on the SQLite ledger", () => {
  expect(purgeDelayFor("sync", ["--from", "x.ndjson"], {})).toBe("-1");
  expect(purgeDelayFor("serve", ["--ledger", "redis://127.0.0.1:6379"], {})).toBe("100");
  expect(purgeDelayFor("serve", ["--port", "1", "--ledger=redis://127.0.0.1:6379"], {})).toBe("100");
  expect(purgeDelayFor("serve", [], { MARQUEE_LEDGER: "redis://127.0.0.1:6379" })).toBe("100");
  expect(purgeDelayFor("serve", ["--port", "8080"], {})).toBe("1000");
  expect(purgeDelayFor("serve", [], { MARQUEE_LEDGER: "" })).toBe("1000");
  expect(purgeDelayFor("accounts", ["list"], {})).toBeUndefined();
});

it("starts a test instance as it is, whatever its ledger", () => {
  expect(purgeDelayFor("serve", ["--test-mode"], {})).toBeUndefined();
  expect(purgeDelayFor("serve", ["--test-mode", "--ledger", "redis://127.0.0.1:6379"], {})).toBeUndefined();
});
