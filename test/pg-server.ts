/**
 * A throwaway PostgreSQL server for a test file: initdb in a temporary folder, started on a free
 * loopback port with wal_level=logical, stopped and removed afterwards. Uses the Debian
 * `postgresql` binaries (.ci/run installs them). PostgreSQL refuses to run as root, so as root
 * the server runs as the `postgres` user that the package creates.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./net.ts";

export interface PgServer {
  port: number;
  dir: string;
  /** A superuser URL (`postgres` role, password `secret`) to database `db`. */
  url(db?: string, user?: string, password?: string): string;
  /** Runs SQL through psql as the superuser; returns its output (tuples only, unaligned). */
  psql(sql: string, db?: string): string;
  /** Stops the server and starts it again on the same port and data (an outage). */
  pause(): void;
  resume(): void;
  stop(): void;
}

function binDir(): string {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root))
    throw new Error("PostgreSQL server binaries not found: apt-get install postgresql (see .ci/run)");
  const versions = readdirSync(root).filter((v) => existsSync(join(root, v, "bin", "initdb")));
  versions.sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) throw new Error("no initdb under /usr/lib/postgresql");
  return join(root, versions[0], "bin");
}

export async function startPgServer(options: { walLevel?: "logical" | "replica" } = {}): Promise<PgServer> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), "marquee-pg-"));
  const data = join(dir, "data");
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, args: string[], input?: string) =>
    execFileSync(
      asRoot ? "runuser" : join(bin, cmd),
      asRoot ? ["-u", "postgres", "--", join(bin, cmd), ...args] : args,
      {
        input,
        encoding: "utf8",
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
  if (asRoot) {
    chmodSync(dir, 0o755);
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    chownSync(dir, uid, gid);
  }
  const pwfile = join(dir, "pw");
  writeFileSync(pwfile, "secret\n");
  if (asRoot) execFileSync("chown", ["postgres", pwfile]);
  run("initdb", [
    "-D",
    data,
    "-U",
    "postgres",
    "--auth=scram-sha-256",
    `--pwfile=${pwfile}`,
    "-E",
    "UTF8",
    "--no-sync",
  ]);
  const port = await freePort();
  const settings = [
    `-p ${port}`,
    `-k ${dir}`,
    "-c listen_addresses=127.0.0.1",
    `-c wal_level=${options.walLevel ?? "logical"}`,
    "-c max_wal_senders=10",
    "-c max_replication_slots=10",
    "-c fsync=off",
    "-c full_page_writes=off",
  ].join(" ");
  const start = () => run("pg_ctl", ["-D", data, "-o", settings, "-l", join(dir, "log"), "-w", "start"]);
  start();
  // A run that ends without stopping it (a crash, a script's early exit) leaves no server behind.
  const stopAtExit = () => stopServer();
  process.once("exit", stopAtExit);
  let stopped = false;
  function stopServer() {
    if (stopped) return;
    stopped = true;
    process.off("exit", stopAtExit);
    try {
      run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
    } catch {
      // already stopped
    }
    rmSync(dir, { recursive: true, force: true });
  }
  const url = (db = "postgres", user = "postgres", password = "secret") =>
    `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${port}/${db}`;
  return {
    port,
    dir,
    url,
    psql(sql, db = "postgres") {
      return execFileSync(join(bin, "psql"), ["-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", url(db), "-c", sql], {
        encoding: "utf8",
        stdio: ["pipe", "pipe", "pipe"],
      }).trim();
    },
    pause() {
      run("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]);
    },
    resume: start,
    stop: stopServer,
  };
}
