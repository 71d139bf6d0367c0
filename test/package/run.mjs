#!/usr/bin/env node
/**
 * `npm run test:package`: Marquee as a client team gets it. Packs the project, installs the
 * tarball into a new empty project under the OS temp folder (offline, from the npm cache this
 * clone's install filled), prints the tarball's size and files and fails on any test, bench or
 * fixture file in it, then in that project runs `npx marquee --help`, type-checks and runs the
 * Vitest examples of README.md and docs/testing.md (test/package/readme-example.ts and
 * test/package/testing-example.ts, identical to their blocks), and imports `marquee/testing` from
 * plain Node and from Bun.
 *
 * Kept out of `npm test`: installing the tarball compiles better-sqlite3.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const FORBIDDEN =
  /(^|\/)(test|tests|__tests__|bench|benchmarks?|fixtures?)(\/|$)|\.(test|spec)\.[cm]?[jt]s$|(^|\/)bunfig\.toml$|(^|\/)\.ci\//;

/** Each document's Vitest example and the file it shows verbatim. */
const EXAMPLES = [
  ["README.md", "test/package/readme-example.ts"],
  ["docs/testing.md", "test/package/testing-example.ts"],
];

const step = (what) => console.log(`\n== ${what}`);
const run = (cmd, args, cwd, extra = {}) =>
  execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], ...extra });
const versionOf = (name) => JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8")).version;
const leftovers = () =>
  readdirSync(tmpdir())
    .filter((n) => n.startsWith("marquee-testing-"))
    .sort();

/**
 * The client project's lockfile: this clone's own resolved versions (the ones its install put in
 * the npm cache) plus the tarball. npm resolves a dependency missing from a lockfile through the
 * registry's full metadata, which an install from a lockfile never fetched, so without this an
 * offline install could not resolve anything.
 */
function lockFor(manifest, packed) {
  const own = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8"));
  const marquee = own.packages[""];
  const packages = {
    "": { name: manifest.name, dependencies: manifest.dependencies, devDependencies: manifest.devDependencies },
  };
  packages["node_modules/marquee"] = {
    version: packed.version,
    resolved: `file:../${packed.filename}`,
    integrity: packed.integrity,
    dependencies: marquee.dependencies,
    bin: marquee.bin,
    engines: marquee.engines,
  };
  for (const [path, entry] of Object.entries(own.packages)) {
    if (path !== "") packages[path] = entry;
  }
  return { name: manifest.name, lockfileVersion: 3, requires: true, packages };
}

const work = mkdtempSync(join(tmpdir(), "marquee-package-"));
const before = new Set(leftovers());
let failed = false;
try {
  step("npm pack");
  // `prepack` (the build of marquee/testing) prints to the same stdout before the JSON.
  const packOut = run("npm", ["pack", "--json", "--pack-destination", work], ROOT);
  const [packed] = JSON.parse(packOut.slice(packOut.search(/^\[/m)));
  console.log(
    `${packed.filename}: ${(packed.size / 1024).toFixed(1)} KiB packed, ${(packed.unpackedSize / 1024).toFixed(1)} KiB unpacked, ${packed.files.length} files`,
  );
  for (const f of packed.files) console.log(`  ${String(f.size).padStart(8)}  ${f.path}`);
  const bad = packed.files.map((f) => f.path).filter((p) => FORBIDDEN.test(p));
  if (bad.length > 0) throw new Error(`the tarball ships test, bench or fixture files: ${bad.join(", ")}`);
  for (const needed of [
    "bin/marquee.js",
    "server/main.ts",
    "testing/child.ts",
    "dist/testing/index.js",
    "dist/types/testing/index.d.ts",
    "dist/api.d.ts",
  ]) {
    if (!packed.files.some((f) => f.path === needed)) throw new Error(`the tarball lacks ${needed}`);
  }

  step("install the tarball into an empty project, offline");
  const app = join(work, "client-app");
  run("mkdir", ["-p", app], work);
  const devDependencies = Object.fromEntries(["vitest", "openapi-fetch", "typescript"].map((n) => [n, versionOf(n)]));
  const manifest = {
    name: "client-app",
    private: true,
    type: "module",
    dependencies: { marquee: `file:../${packed.filename}` },
    devDependencies,
  };
  writeFileSync(join(app, "package.json"), JSON.stringify(manifest, null, 2));
  writeFileSync(join(app, "package-lock.json"), JSON.stringify(lockFor(manifest, packed), null, 2));
  const started = Date.now();
  run("npm", ["install", "--offline", "--no-audit", "--no-fund", "--loglevel=error"], app, { stdio: "inherit" });
  console.log(`installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  // Which Bun the installed package found (npm may have left the `bun` package's placeholder).
  const findBunJs = pathToFileURL(join(app, "node_modules/marquee/bin/find-bun.js")).href;
  const found = run(
    "node",
    ["--input-type=module", "-e", `import { findBun } from ${JSON.stringify(findBunJs)}; console.log(findBun())`],
    app,
  ).trim();
  console.log(`Bun found at ${found}`);

  step("npx marquee --help");
  const help = run("npx", ["--no-install", "marquee", "--help"], app);
  console.log(help.trimEnd());
  if (!help.includes("usage: marquee <command>")) throw new Error("`npx marquee --help` did not print the usage");

  step("the Vitest examples of README.md and docs/testing.md: type-check and run");
  const examples = [];
  for (const [doc, file] of EXAMPLES) {
    const example = readFileSync(join(ROOT, file), "utf8");
    if (!readFileSync(join(ROOT, doc), "utf8").includes(`<!-- ${file} -->\n\`\`\`ts\n${example}\`\`\`\n`)) {
      throw new Error(`${doc} does not show ${file} verbatim`);
    }
    const name = `${basename(file, ".ts")}.test.ts`;
    copyFileSync(join(ROOT, file), join(app, name));
    examples.push(name);
  }
  writeFileSync(
    join(app, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        lib: ["ES2023", "DOM"],
        types: [],
        strict: true,
        noEmit: true,
        skipLibCheck: true,
      },
      include: examples,
    }),
  );
  run("npx", ["--no-install", "tsc", "-p", "."], app, { stdio: "inherit" });
  run("npx", ["--no-install", "vitest", "run", ...examples], app, { stdio: "inherit" });

  step("import marquee/testing from plain Node and from Bun");
  const script = `import { startMarquee } from "marquee/testing";
const m = await startMarquee({ demoEvents: 50 });
const key = await m.createKey();
const res = await fetch(m.url + "/v1/events?limit=1", { headers: { authorization: "Bearer " + key } });
console.log(typeof Bun === "undefined" ? "node" : "bun", res.status, (await res.json()).page.count);
await m.stop();`;
  writeFileSync(join(app, "smoke.mjs"), script);
  for (const runtime of ["node", join(app, "node_modules/.bin/bun")]) {
    const out = run(runtime, ["smoke.mjs"], app).trim();
    console.log(out);
    if (!/ 200 1$/.test(out)) throw new Error(`marquee/testing from ${runtime}: ${out}`);
  }

  const left = leftovers().filter((n) => !before.has(n));
  if (left.length > 0) throw new Error(`temporary folders left behind: ${left.join(", ")}`);
  console.log("\npackage test passed");
} catch (err) {
  failed = true;
  console.error(`\npackage test FAILED: ${err.message}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
