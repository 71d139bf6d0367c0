#!/usr/bin/env node
// `npx marquee …`: runs the CLI on the Bun that npm installed with the package.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { BUN_MISSING, BUN_SERVE_ARGS, findBun } from "./find-bun.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bun = findBun();
if (!bun) {
  console.error(BUN_MISSING);
  process.exit(1);
}
const result = spawnSync(bun, [...BUN_SERVE_ARGS, join(root, "server", "main.ts"), ...process.argv.slice(2)], {
  stdio: "inherit",
});
if (result.error) {
  console.error(`marquee: cannot run ${bun}: ${result.error.message}`);
  process.exit(1);
}
process.exit(result.status ?? 1);
