// scripts/test-prerequisites.sh: what `npm test` does first on a machine that lacks a Debian package.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { expect, it } from "vitest";
import { ROOT } from "./harness.ts";

const SCRIPT = join(ROOT, "scripts", "test-prerequisites.sh");

function run(packages: string) {
  // MARQUEE_NO_APT: check only, as a user without root would.
  const r = spawnSync("bash", [SCRIPT], {
    encoding: "utf8",
    env: { ...process.env, MARQUEE_TEST_PACKAGES: packages, MARQUEE_NO_APT: "1" },
  });
  return { status: r.status, lines: r.stderr.split("\n").filter((l) => l !== ""), stdout: r.stdout };
}

it("stops at once naming the missing packages and the one command that installs them", () => {
  const r = run("marquee-no-such-package marquee-no-such-command;bash bash;marquee-nor-this-one");
  expect(r.status).toBe(1);
  expect(r.lines[0]).toBe(
    "npm test needs these Debian packages, which are not installed: marquee-no-such-package marquee-nor-this-one",
  );
  expect(r.lines.slice(1)).toEqual([
    "Install them with:",
    "  sudo apt-get install -y --no-install-recommends marquee-no-such-package marquee-nor-this-one",
  ]);
});

it("says nothing and passes when every package is there", () => {
  expect(run("bash bash")).toEqual({ status: 0, lines: [], stdout: "" });
});

it("counts a package as there when its command is on the PATH (a machine without dpkg)", () => {
  expect(run("marquee-no-such-package sh").status).toBe(0);
});

it("checks the packages of scripts/test-packages.txt when no list is given", () => {
  const r = spawnSync("bash", [SCRIPT], {
    encoding: "utf8",
    env: { ...process.env, MARQUEE_TEST_PACKAGES: "", MARQUEE_NO_APT: "1" },
  });
  // This suite runs after the script itself, so the list's packages are installed.
  expect(r.status).toBe(0);
});
