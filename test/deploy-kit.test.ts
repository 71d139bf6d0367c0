/**
 * The deploy kit (deploy/, README "Run it in production"): the systemd unit passes
 * `systemd-analyze verify` without a warning and has what docs/operations.md promises of it; the
 * configuration example is one `marquee serve` takes; the nginx example, run by a real nginx in
 * front of an upstream that records what reaches it, passes the client's X-Request-Id (or makes
 * one) and logs the same id.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, request as plainRequest } from "node:http";
import { request } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfigFile } from "../server/config-file.ts";
import { BUN, freePort, ROOT } from "./harness.ts";
import { cleanEnv, waitFor } from "./ops-cli.ts";

const DEPLOY = join(ROOT, "deploy");
const read = (name: string) => readFileSync(join(DEPLOY, name), "utf8");

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "marquee-deploy-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("deploy/marquee.service", () => {
  it("passes systemd-analyze verify without a warning", () => {
    // The binary is installed at deploy time; any executable stands in for it here.
    const unit = join(dir, "marquee.service");
    writeFileSync(
      unit,
      read("marquee.service").replace("ExecStart=/usr/local/bin/marquee", `ExecStart=${process.execPath}`),
    );
    const r = spawnSync("systemd-analyze", ["verify", unit], { encoding: "utf8" });
    expect(r.error, "systemd-analyze (Debian package systemd) is missing").toBeUndefined();
    expect({ status: r.status, stderr: r.stderr.trim() }).toEqual({ status: 0, stderr: "" });
  });

  it("keeps state in its own directory, restarts on failure, stops with SIGTERM, hardens, and hides every secret from ps", () => {
    const unit = read("marquee.service");
    const settings = (section: string) =>
      unit
        .split(/^\[/m)
        .find((s) => s.startsWith(`${section}]`))!
        .split("\n")
        .filter((l) => /^\w+=/.test(l));
    expect(settings("Service")).toEqual(
      expect.arrayContaining([
        "ExecStart=/usr/local/bin/marquee serve",
        "StateDirectory=marquee",
        "Restart=on-failure",
        "KillSignal=SIGTERM",
        "Environment=MARQUEE_CONFIG=/etc/marquee/marquee.toml",
        "EnvironmentFile=-/etc/marquee/marquee.env",
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "PrivateTmp=yes",
        "CapabilityBoundingSet=",
      ]),
    );
    expect(settings("Service").find((l) => l.startsWith("ExecStart="))).not.toMatch(/:\/\//);
  });
});

describe("deploy/marquee.toml", () => {
  it("is a configuration file marquee serve runs with", async () => {
    const file = parseConfigFile(read("marquee.toml"), "marquee.toml");
    expect(file.shared.get("db")?.value).toBe("/var/lib/marquee/marquee.db");
    const port = await freePort();
    const adminPort = await freePort();
    // Flags win over the file: a scratch replica and free ports, everything else from the example.
    const child = spawn(
      BUN,
      [
        join(ROOT, "server/main.ts"),
        ...["serve", "--config", join(DEPLOY, "marquee.toml"), "--db", join(dir, "kit.db"), "--port", String(port)],
        ...["--admin-port", String(adminPort)],
      ],
      { cwd: ROOT, env: cleanEnv() },
    );
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    try {
      await waitFor("the server", () =>
        fetch(`http://127.0.0.1:${port}/healthz`).then(
          (r) => r.ok,
          () => false,
        ),
      );
      // The example's base-url, on the start-up line (a pipe may deliver it after the first answer).
      await waitFor("the start-up line", () => out.includes("https://events.example.com"));
      expect(file.sections.get("serve")?.get("admin-port")?.value).toBe("9090");
      const ready = await fetch(`http://127.0.0.1:${adminPort}/readyz`);
      expect(ready.status).toBe(200);
    } finally {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
  }, 30_000);
});

describe("deploy/nginx.conf", () => {
  it("passes the client's X-Request-Id, or makes one, to Marquee and logs the same id", async () => {
    const seen: IncomingHttpHeaders[] = [];
    const upstream = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(200, { "content-type": "application/json" }).end('{"status":"ok"}');
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const upstreamPort = (upstream.address() as AddressInfo).port;
    const [http, https] = [await freePort(), await freePort()];
    execFileSync(
      "openssl",
      [
        ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=events.example.com"],
        ...["-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")],
      ],
      { stdio: "ignore" },
    );
    // The example as shipped, but for where this machine has room: ports, certificate, log.
    const site = read("nginx.conf")
      .replace("127.0.0.1:8080", `127.0.0.1:${upstreamPort}`)
      .replace(/^\s*listen \[::\]:.*$/gm, "")
      .replace("listen 80;", `listen 127.0.0.1:${http};`)
      .replace("listen 443 ssl http2;", `listen 127.0.0.1:${https} ssl http2;`)
      .replace(/\/etc\/letsencrypt\/live\/events\.example\.com\/fullchain\.pem/, join(dir, "cert.pem"))
      .replace(/\/etc\/letsencrypt\/live\/events\.example\.com\/privkey\.pem/, join(dir, "key.pem"))
      .replace("/var/log/nginx/marquee.access.log", join(dir, "access.log"));
    writeFileSync(join(dir, "site.conf"), site);
    const temp = (name: string) => `${name}_temp_path ${join(dir, name)};`;
    writeFileSync(
      join(dir, "nginx.conf"),
      [
        process.getuid?.() === 0 ? "user root;" : "",
        `pid ${join(dir, "nginx.pid")};`,
        `error_log ${join(dir, "error.log")};`,
        "events {}",
        `http { ${["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map(temp).join(" ")} include ${join(dir, "site.conf")}; }`,
      ].join("\n"),
    );
    const nginx = spawn("nginx", ["-c", join(dir, "nginx.conf"), "-p", dir, "-g", "daemon off;"], { stdio: "pipe" });
    let errors = "";
    nginx.stderr.on("data", (d) => (errors += d));
    const get = (port: number, headers: Record<string, string>, secure = true) =>
      new Promise<{ status: number; location?: string }>((resolve, reject) => {
        const req = (secure ? request : plainRequest)(
          {
            host: "127.0.0.1",
            port,
            path: "/healthz",
            headers: { host: "events.example.com", ...headers },
            rejectUnauthorized: false,
            servername: "events.example.com",
          },
          (res) => {
            res.resume();
            res.on("end", () => resolve({ status: res.statusCode!, location: res.headers.location }));
          },
        );
        req.on("error", reject);
        req.end();
      });
    try {
      await waitFor(`nginx (${errors})`, () =>
        get(https, {}).then(
          () => true,
          () => false,
        ),
      );
      seen.length = 0;
      expect((await get(https, { "x-request-id": "client-id.123:a" })).status).toBe(200);
      expect((await get(https, {})).status).toBe(200);
      expect(seen.map((h) => h["x-request-id"])).toEqual(["client-id.123:a", expect.stringMatching(/^[0-9a-f]{32}$/)]);
      const made = seen[1]["x-request-id"];
      expect(seen[1]["x-forwarded-proto"]).toBe("https");
      await waitFor("the access log", () =>
        readFileSync(join(dir, "access.log"), "utf8").includes(`request_id=${made}`),
      );
      expect(readFileSync(join(dir, "access.log"), "utf8")).toContain("request_id=client-id.123:a");
      expect(await get(http, {}, false)).toEqual({ status: 301, location: "https://events.example.com/healthz" });
    } finally {
      const exited = new Promise((resolve) => nginx.once("exit", resolve));
      nginx.kill("SIGQUIT");
      await exited;
      upstream.close();
    }
  }, 30_000);
});
