// Where the Bun runtime is, wherever npm put it: `marquee` runs on Bun, and Bun comes with the
// package as a dependency (README "Use Marquee in your tests"). Plain JavaScript so that Node
// can run it before any TypeScript is loaded.
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, dirname, join } from "node:path";

const require = createRequire(import.meta.url);

/**
 * Bun's own options for every process that runs Marquee: its HTTP parser reads request heads up to
 * 512 KiB (db/contract.ts HTTP_LIMITS.parserHeadBytes) before answering a bare 431 itself, so
 * heads over Marquee's 16 KiB limit still get its 431 in the envelope (docs/api.md, What the
 * HTTP layer refuses).
 */
export const BUN_SERVE_ARGS = ["--max-http-header-size=524288"];
const exe = process.platform === "win32" ? ".exe" : "";

/** The platform packages the `bun` package installs its binary from, this machine's first. */
function platformPackages() {
  const arch = process.arch === "arm64" ? "aarch64" : "x64";
  const os = process.platform === "win32" ? "windows" : process.platform;
  return [`@oven/bun-${os}-${arch}`, `@oven/bun-${os}-${arch}-musl`, `@oven/bun-${os}-${arch}-baseline`];
}

function isExecutable(path) {
  try {
    // The `bun` package ships a small placeholder until its postinstall has run (npm
    // --ignore-scripts leaves it there); the real binary is tens of megabytes.
    if (!statSync(path).isFile() || statSync(path).size < 1_000_000) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function resolvePackageDir(name) {
  try {
    return dirname(require.resolve(`${name}/package.json`));
  } catch {
    return undefined;
  }
}

/**
 * The path of a Bun binary, or undefined. Order: `$MARQUEE_BUN`, this process when it already is
 * Bun, the `bun` dependency (wherever npm hoisted it), its platform package, then `bun` on PATH.
 */
export function findBun(env = process.env) {
  if (env.MARQUEE_BUN) return isExecutable(env.MARQUEE_BUN) ? env.MARQUEE_BUN : undefined;
  if (process.versions.bun) return process.execPath;
  const candidates = [];
  const bunDir = resolvePackageDir("bun");
  if (bunDir) candidates.push(join(bunDir, "bin", "bun.exe"));
  for (const name of platformPackages()) {
    const dir = resolvePackageDir(name);
    if (dir) candidates.push(join(dir, "bin", `bun${exe}`));
  }
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir) candidates.push(join(dir, `bun${exe}`));
  }
  return candidates.find((path) => existsSync(path) && isExecutable(path));
}

export const BUN_MISSING =
  "marquee: cannot find the Bun runtime (the `bun` npm package should have installed it; reinstall without --ignore-scripts, or set MARQUEE_BUN to a bun binary)";
