/**
 * What this build is (docs/operations.md, The program): the package's version, the commit when it is
 * known, and the runtime. `marquee --version`, `/healthz` and `/metrics` all read it here.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
// A JSON import, so `bun build --compile` carries the version inside the binary.
import pkg from "../package.json" with { type: "json" };

export interface BuildInfo {
  version: string;
  /** The commit, abbreviated: `MARQUEE_COMMIT` when the build set it, else a checkout's HEAD; null when unknown. */
  commit: string | null;
  /** `bun 1.4.5` or `node 22.1.0`. */
  runtime: string;
}

/** The running program's build: read once at start-up by whoever needs it (no module state). */
export function readBuildInfo(env: Record<string, string | undefined> = process.env): BuildInfo {
  const bun = (process.versions as Record<string, string | undefined>).bun;
  return {
    version: pkg.version,
    commit: commitFrom(env),
    runtime: bun ? `bun ${bun}` : `node ${process.versions.node}`,
  };
}

/** `marquee 0.1.0 (abc1234) bun 1.4.5`: the line `marquee --version` prints. */
export function versionLine(info: BuildInfo): string {
  return `marquee ${info.version}${info.commit ? ` (${info.commit})` : ""} ${info.runtime}`;
}

function commitFrom(env: Record<string, string | undefined>): string | null {
  const given = env.MARQUEE_COMMIT?.trim();
  if (given && /^[0-9a-f]{7,40}$/i.test(given)) return given.slice(0, 12).toLowerCase();
  try {
    // A checkout: .git/HEAD names a ref (or holds the commit itself when detached). In a linked
    // worktree .git is a file naming the worktree's own folder, whose refs live in a common one.
    let git = join(import.meta.dirname, "..", ".git");
    if (statSync(git).isFile())
      git = resolve(
        git,
        "..",
        readFileSync(git, "utf8")
          .replace(/^gitdir:\s*/, "")
          .trim(),
      );
    const head = readFileSync(join(git, "HEAD"), "utf8").trim();
    const ref = head.startsWith("ref: ") ? head.slice(5) : null;
    const common = existsSync(join(git, "commondir"))
      ? resolve(git, readFileSync(join(git, "commondir"), "utf8").trim())
      : git;
    const commit = ref ? readRef(common, ref) : head;
    return commit && /^[0-9a-f]{40}$/.test(commit) ? commit.slice(0, 12) : null;
  } catch {
    return null;
  }
}

function readRef(git: string, ref: string): string | null {
  try {
    return readFileSync(join(git, ref), "utf8").trim();
  } catch {
    // Packed refs: "<sha> <ref>" lines.
    const packed = readFileSync(join(git, "packed-refs"), "utf8");
    return (
      packed
        .split("\n")
        .find((line) => line.endsWith(` ${ref}`))
        ?.split(" ")[0] ?? null
    );
  }
}
