#!/usr/bin/env bun
/**
 * Which modules a Marquee command has loaded (docs/operations.md, Start-up: nothing a command
 * does not use is loaded). Runs the command in this process as server/main.ts runs it as the
 * program's entry, then prints one JSON line: the project's own modules (paths from the
 * repository root) and the packages, by name.
 *
 *   bun test/loaded-modules.ts --help                       after `marquee --help`
 *   bun test/loaded-modules.ts serve [flags…] [-- PATH…]    once `serve` has answered GET /healthz
 *                                                           (one line), then after each PATH (a line
 *                                                           each): "GET /path" or "POST /path"
 *
 * A serve command is given `--port 0 --host 127.0.0.1 --ready-file` here. With `--test-mode`, the
 * paths are asked with a key made for them (POST /_test/accounts, then its keys), and a POST sends
 * a JSON-RPC `tools/list` (what /mcp takes). Each line has the answers' statuses so far.
 * Used by test/bun/startup-loads.test.ts.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { main } from "../server/main.ts";

const ROOT = join(import.meta.dirname, "..");

export interface Loaded {
  own: string[];
  packages: string[];
  statuses: number[];
}

function loaded(statuses: number[]): Loaded {
  const own = new Set<string>();
  const packages = new Set<string>();
  for (const path of Object.keys(require.cache)) {
    const at = path.lastIndexOf("node_modules/");
    if (at >= 0) {
      const [scope, name] = path.slice(at + "node_modules/".length).split("/");
      packages.add(scope.startsWith("@") ? `${scope}/${name}` : scope);
    } else if (path.startsWith(ROOT)) own.add(relative(ROOT, path));
  }
  own.delete("test/loaded-modules.ts");
  return { own: [...own].sort(), packages: [...packages].sort(), statuses };
}

async function waitFor(file: string): Promise<{ url: string }> {
  for (let i = 0; i < 400; i++) {
    if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8"));
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("serve did not write its ready file within 10 s");
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  if (args[0] !== "serve") {
    await main(args, { ownProcess: true });
    console.log(JSON.stringify(loaded([])));
    process.exit(0);
  }
  const split = args.indexOf("--");
  const flags = split < 0 ? args.slice(1) : args.slice(1, split);
  const paths = split < 0 ? [] : args.slice(split + 1);
  const dir = mkdtempSync(join(tmpdir(), "marquee-loaded-"));
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  const ready = join(dir, "ready.json");
  const db = flags.includes("--db") ? [] : ["--db", join(dir, "marquee.db")];
  void main(["serve", "--port", "0", "--host", "127.0.0.1", "--ready-file", ready, ...db, ...flags], {
    ownProcess: true,
  });
  const { url } = await waitFor(ready);
  const statuses = [(await fetch(`${url}/healthz`)).status];
  console.log(JSON.stringify(loaded(statuses)));
  let key = "";
  if (paths.length > 0 && flags.includes("--test-mode")) {
    const post = (path: string, body: object) =>
      fetch(url + path, { method: "POST", body: JSON.stringify(body) }).then((r) => r.json());
    const { id } = await post("/_test/accounts", { email: "loaded@example.com", plan: "business" });
    ({ key } = await post(`/_test/accounts/${id}/keys`, { kind: "live" }));
  }
  for (const p of paths) {
    const [method, path] = p.split(" ");
    const res = await fetch(url + path, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: method === "POST" ? JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) : undefined,
    });
    await res.arrayBuffer();
    statuses.push(res.status);
    console.log(JSON.stringify(loaded(statuses)));
  }
  process.exit(0);
}
