/**
 * `npx marquee` (bin/marquee.js) on Node: it runs the CLI on the Bun it finds, and when there is
 * none it says so in one line instead of exiting silently.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BUN_MISSING, findBun } from "../bin/find-bun.js";

const BIN = join(import.meta.dirname, "..", "bin", "marquee.js");
const runBin = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", env: { ...process.env, ...env } });

describe("bin/marquee.js", () => {
  it("runs the CLI on Bun: --help prints the usage and exits 0", () => {
    const r = runBin(["--help"]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^usage: marquee <command> \[flags\]/);
  });

  it("passes the CLI's exit code through", () => {
    const r = runBin(["no-such-command"]);
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe("marquee: unknown command 'no-such-command' (see 'marquee --help')");
  });

  it("without a Bun runtime prints one line and exits 1", () => {
    const r = runBin(["--help"], { MARQUEE_BUN: "/nonexistent/bun" });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(`${BUN_MISSING}\n`);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });
});

describe("findBun", () => {
  it("finds the bun dependency's binary from Node", () => {
    expect(findBun({ PATH: "" })).toMatch(/bun(\.exe)?$/);
  });

  it("takes MARQUEE_BUN when it is a real binary, and refuses a placeholder", () => {
    const real = findBun({ PATH: "" })!;
    expect(findBun({ MARQUEE_BUN: real })).toBe(real);
    const dir = mkdtempSync(join(tmpdir(), "marquee-bin-"));
    try {
      // What the `bun` package holds until its install script has put the real binary in place.
      const placeholder = join(dir, "bun");
      writeFileSync(placeholder, "#!/bin/sh\necho placeholder\n", { mode: 0o755 });
      expect(findBun({ MARQUEE_BUN: placeholder })).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
