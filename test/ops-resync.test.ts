/**
 * A replica that can no longer follow its PostgreSQL upstream (docs/operations.md, Backups): one
 * restored from a backup, or a copy of another, is behind the position its replication slot
 * confirmed, so the changes in between are gone from the slot. `sync` and `serve --sync-from`
 * refuse it with one line saying what to do; `--resync` copies the tables again. A replica the
 * slot moved past while nothing of its own changed (other tables written) is not refused. A
 * source URL given by environment or file never shows in `ps`, the logs or `/healthz`.
 * Against a real PostgreSQL (test/pg-server.ts) and the Bun CLI.
 */
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openReplica } from "../db/replica.ts";
import { lsnValue } from "../sync/postgres/lsn.ts";
import { BUN, freePort, ROOT } from "./harness.ts";
import { cleanEnv, marquee, ok, waitFor } from "./ops-cli.ts";
import { type PgServer, startPgServer } from "./pg-server.ts";

let pg: PgServer;
let dir: string;
let url: string;
beforeAll(async () => {
  pg = await startPgServer();
  dir = mkdtempSync(join(tmpdir(), "marquee-resync-"));
  pg.psql("CREATE DATABASE up");
  url = pg.url("up");
  pg.psql(ok(marquee(["upstream-schema"])), "up");
  ok(marquee(["demo-data", "--events", "300", "--seed", "resync", "--anchor", "2026-12-01", "--out", url]));
}, 60_000);
afterAll(() => {
  pg?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const sync = (db: string, ...more: string[]) => marquee(["sync", "--from", url, "--db", db, "--json", ...more]);
const syncOk = (db: string, ...more: string[]) => JSON.parse(ok(sync(db, ...more)));
const firstEvent = () => Number(pg.psql("SELECT min(id) FROM marquee.events", "up"));

async function titleOf(db: string, id: number): Promise<string | undefined> {
  const replica = await openReplica(db, { readonly: true });
  try {
    return replica.prepare<{ title: string }>("SELECT title FROM events WHERE id = ?").get(id)?.title;
  } finally {
    replica.close();
  }
}

/** The replica's files into `to`, as `cp` of a stopped replica (or a restored backup) leaves them. */
function copyReplica(from: string, to: string): void {
  mkdirSync(join(to, ".."), { recursive: true });
  for (const suffix of ["", "-wal"]) {
    try {
      copyFileSync(from + suffix, to + suffix);
    } catch {}
  }
}

describe("a replica behind its slot", () => {
  it("restored from a backup: refused by sync and serve with what to do; --resync copies again", async () => {
    const db = join(dir, "live", "marquee.db");
    expect(syncOk(db).copied).toBeGreaterThan(300);
    const backupDir = join(dir, "backup");
    const backup = JSON.parse(ok(marquee(["backup", "--to", backupDir, "--db", db, "--json"])));
    expect(backup.restore.join("\n")).toContain("--resync");

    const id = firstEvent();
    pg.psql(`UPDATE marquee.events SET title = 'Changed after the backup' WHERE id = ${id}`, "up");
    expect(syncOk(db).changes).toBe(1);
    expect(await titleOf(db, id)).toBe("Changed after the backup");

    // Restored as the backup's printed steps do (only the replica here).
    rmSync(`${db}-wal`, { force: true });
    rmSync(`${db}-shm`, { force: true });
    copyFileSync(backup.replica.to, db);
    const refused = sync(db);
    expect(refused.status).toBe(1);
    expect(refused.stderr.split("\n")).toHaveLength(1);
    expect(refused.stderr).toMatch(
      /^marquee sync: this replica \(.*live\/marquee\.db\) is at position \S+ but its replication slot marquee_marquee_\w+ at 127\.0\.0\.1:\d+\/up confirmed \S+: it was restored from a backup or copied.*run marquee sync with --resync/,
    );
    expect(refused.stderr).not.toContain("secret");
    expect(await titleOf(db, id)).not.toBe("Changed after the backup"); // unchanged by the refusal

    const serve = marquee(["serve", "--port", "0", "--host", "127.0.0.1", "--db", db, "--sync-from", url]);
    expect(serve.status).toBe(1);
    expect(serve.stderr.split("\n")).toHaveLength(1);
    expect(serve.stderr).toMatch(/^marquee serve: this replica .* is at position .*--resync/);

    const resynced = syncOk(db, "--resync");
    expect(resynced.copied).toBeGreaterThan(300);
    expect(await titleOf(db, id)).toBe("Changed after the backup");
    pg.psql(`UPDATE marquee.events SET title = 'And again' WHERE id = ${id}`, "up");
    expect(syncOk(db).changes).toBe(1);
    expect(await titleOf(db, id)).toBe("And again");
  }, 120_000);

  it("a copy of another replica: whichever syncs second is refused; --resync --slot gives the copy its own", async () => {
    const original = join(dir, "original", "marquee.db");
    const copy = join(dir, "copy", "marquee.db");
    syncOk(original);
    copyReplica(original, copy);
    const id = firstEvent() + 1;
    pg.psql(`UPDATE marquee.events SET title = 'Seen by the original' WHERE id = ${id}`, "up");
    expect(syncOk(original).changes).toBe(1);
    const refused = sync(copy);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/another replica follows the same slot.*--resync --slot NEW_NAME/);

    const own = syncOk(copy, "--resync", "--slot", "marquee_the_copy");
    expect(own.slot).toBe("marquee_the_copy");
    expect(await titleOf(copy, id)).toBe("Seen by the original");
    pg.psql(`UPDATE marquee.events SET title = 'Seen by both' WHERE id = ${id}`, "up");
    expect(syncOk(original).changes).toBe(1);
    expect(syncOk(copy).changes).toBe(1);
    expect(await titleOf(copy, id)).toBe("Seen by both");
    expect(await titleOf(original, id)).toBe("Seen by both");
  }, 120_000);

  it("is not what a replica becomes when its slot moves past writes to other tables", () => {
    const db = join(dir, "quiet", "marquee.db");
    syncOk(db);
    pg.psql(
      "CREATE TABLE IF NOT EXISTS public.unrelated (n int); INSERT INTO public.unrelated SELECT generate_series(1, 5000)",
      "up",
    );
    const moved = syncOk(db);
    expect(moved.changes).toBe(0);
    const slot = pg.psql(
      `SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '${moved.slot}'`,
      "up",
    );
    // Only positions the replica holds are confirmed: the slot is never ahead of it.
    expect(lsnValue(slot)).toBeLessThanOrEqual(lsnValue(moved.position));
    pg.psql("INSERT INTO public.unrelated SELECT generate_series(1, 5000)", "up");
    expect(syncOk(db).changes).toBe(0);
    expect(syncOk(db).changes).toBe(0);
  }, 60_000);

  it("--resync needs a PostgreSQL source and contradicts --drop-slot", () => {
    const db = join(dir, "flags", "marquee.db");
    const file = join(dir, "x.ndjson");
    expect(marquee(["sync", "--from", file, "--db", db, "--resync"])).toMatchObject({
      status: 2,
      stderr: "marquee sync: --resync needs a postgres:// source",
    });
    expect(sync(db, "--resync", "--drop-slot")).toMatchObject({
      status: 2,
      stderr: expect.stringMatching(/contradict/),
    });
  });
});

describe("a source URL from the environment or a file", () => {
  it("never shows in ps, the logs or /healthz", async () => {
    const port = await freePort();
    const config = join(dir, "serve.toml");
    writeFileSync(
      config,
      `db = "${join(dir, "quiet-serve", "marquee.db")}"\n[serve]\nport = ${port}\nhost = "127.0.0.1"\n`,
    );
    expect(url).toContain(":secret@");
    const child = spawn(BUN, [join(ROOT, "server/main.ts"), "serve", "--config", config], {
      cwd: ROOT,
      env: cleanEnv({ MARQUEE_SYNC_FROM: url }),
    });
    let logs = "";
    child.stdout.on("data", (d) => (logs += d));
    child.stderr.on("data", (d) => (logs += d));
    try {
      let health = "";
      await waitFor("streaming", async () => {
        health = await fetch(`http://127.0.0.1:${port}/healthz`).then(
          (r) => r.text(),
          () => "",
        );
        return health.includes('"state":"streaming"');
      });
      expect(JSON.parse(health).upstream.source).toBe(`127.0.0.1:${pg.port}/up`);
      const ps = readFileSync(`/proc/${child.pid}/cmdline`, "utf8");
      expect(ps).toContain("--config");
      for (const seen of [health, ps, logs]) {
        expect(seen).not.toContain("secret");
        expect(seen).not.toContain("postgres://");
      }
    } finally {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    expect(logs).not.toContain("secret");
  }, 60_000);
});
