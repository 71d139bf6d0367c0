/**
 * The published document as any pipeline that lints vendor documents sees it: Spectral's default
 * OpenAPI ruleset (`spectral:oas`, .spectral.yaml) over `/v1/openapi.json` as a Bun server serves
 * it, and over the test-mode API's `/_test/openapi.json`. No errors; the warnings are exactly
 * those docs/api.md, "The published contract" explains.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ROOT, startBunServer, type Target } from "./harness.ts";

/** Spectral's severities in its JSON report. */
const SEVERITY = ["error", "warning", "information", "hint"] as const;

/** Warnings kept on purpose, with the reason docs/api.md gives. */
const KEPT_WARNINGS = ["info-contact"];

let target: Target;
beforeAll(async () => {
  target = await startBunServer();
});
afterAll(async () => {
  await target?.close();
});

interface Finding {
  code: string;
  message: string;
  path: string[];
  severity: number;
}

function spectral(file: string): Finding[] {
  const bin = join(ROOT, "node_modules", ".bin", "spectral");
  const args = ["lint", file, "--ruleset", join(ROOT, ".spectral.yaml"), "--format", "json", "--quiet"];
  // Spectral reports usage to its vendor unless told not to; this suite runs offline anyway.
  const env = { ...process.env, SCARF_ANALYTICS: "false", DO_NOT_TRACK: "1" };
  let stdout: string;
  try {
    stdout = execFileSync(bin, args, { cwd: ROOT, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (err) {
    // Exit code 1 means findings at error severity; the JSON report is still on stdout.
    stdout = (err as { stdout?: string }).stdout ?? "";
    if (!stdout.trim().startsWith("[")) throw err;
  }
  return JSON.parse(stdout) as Finding[];
}

/** Lints the document the server serves at `path`: no errors, and only the kept warnings. */
async function expectLintClean(path: string, name: string): Promise<void> {
  const res = await target.fetch(path);
  expect(res.status).toBe(200);
  const file = join(target.dir, name);
  writeFileSync(file, await res.text());
  const findings = spectral(file);
  const describe = (f: Finding) => `${SEVERITY[f.severity]} ${f.code} at ${f.path.join(".")}: ${f.message}`;
  expect(findings.filter((f) => f.severity === 0).map(describe)).toEqual([]);
  expect(findings.filter((f) => f.severity === 1).map((f) => f.code)).toEqual(KEPT_WARNINGS);
}

it("passes Spectral's spectral:oas ruleset: no errors, only the warnings docs/api.md lists", async () => {
  await expectLintClean("/v1/openapi.json", "openapi.json");
}, 60_000);

it("passes it for /_test/openapi.json too, which a server in test mode serves", async () => {
  await expectLintClean("/_test/openapi.json", "test-openapi.json");
}, 60_000);

it("fails a document that breaks the ruleset, so the check above can fail", async () => {
  const res = await target.fetch("/v1/openapi.json");
  const doc = await res.json();
  // What the MCP schemas once were: an array type without `items`.
  doc.paths["/mcp"].post.requestBody.content["application/json"].schema = { type: ["object", "array"] };
  const file = join(target.dir, "broken.json");
  writeFileSync(file, JSON.stringify(doc));
  expect(
    spectral(file)
      .filter((f) => f.severity === 0)
      .map((f) => f.code),
  ).toContain("array-items");
}, 60_000);
