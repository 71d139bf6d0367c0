#!/usr/bin/env node
// `npx marquee …`: runs the CLI on the Bun that npm installed beside it.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bun = join(root, "node_modules", ".bin", process.platform === "win32" ? "bun.exe" : "bun");
const result = spawnSync(bun, [join(root, "server", "main.ts"), ...process.argv.slice(2)], { stdio: "inherit" });
process.exit(result.status ?? 1);
