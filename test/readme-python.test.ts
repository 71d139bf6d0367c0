/**
 * The Python `unittest` examples of README "Use Marquee from any language" and docs/testing.md,
 * "From any language": each taken from its document and run with Debian's `python3` exactly as
 * printed, in a client project where `npx marquee` is this checkout (node_modules/marquee, as
 * `npm install -D marquee` would link it).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { ROOT } from "./harness.ts";

/** A document's Python block, after its marker comment. */
function pythonExample(doc: string): string {
  const text = readFileSync(join(ROOT, doc), "utf8");
  const block = /<!-- test\/readme-python\.test\.ts -->\n```python\n([\s\S]*?)```\n/.exec(text)?.[1];
  if (!block) throw new Error(`${doc} has no Python example after <!-- test/readme-python.test.ts -->`);
  return block;
}

it.each([
  ["README.md", 1],
  ["docs/testing.md", 5],
])(
  "the Python example of %s passes, run as printed",
  (doc, tests) => {
    const project = mkdtempSync(join(tmpdir(), "marquee-python-"));
    try {
      writeFileSync(join(project, "package.json"), JSON.stringify({ name: "client", private: true }));
      mkdirSync(join(project, "node_modules", ".bin"), { recursive: true });
      symlinkSync(ROOT, join(project, "node_modules", "marquee"));
      symlinkSync(join("..", "marquee", "bin", "marquee.js"), join(project, "node_modules", ".bin", "marquee"));
      writeFileSync(join(project, "test_marquee.py"), pythonExample(doc));
      const run = spawnSync("python3", ["test_marquee.py", "-v"], {
        cwd: project,
        encoding: "utf8",
        timeout: 150_000,
        // The example names its own --db; nothing of this shell's Marquee settings may leak in.
        env: { ...process.env, MARQUEE_DB: "", MARQUEE_LEDGER: "", MARQUEE_SECRET: "", PORT: "" },
      });
      expect({ status: run.status, output: run.stderr }).toEqual({
        status: 0,
        output: expect.stringMatching(/\nOK\n$/),
      });
      expect(run.stderr).toMatch(new RegExp(`^Ran ${tests} tests? in `, "m"));
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  },
  180_000,
);
