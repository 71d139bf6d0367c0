/**
 * `marquee backup --to DIR` (docs/operations.md, Backups): taken while a Bun server answers a
 * steady stream of requests (which write usage into the ledger the whole time), the copies open
 * as a server of their own that serves the same pages and honours the same keys; the restore
 * steps the command prints, run as printed, bring the backup's moment back. The copy itself runs
 * on both SQLite drivers: here on Node (better-sqlite3), through the CLI on Bun (bun:sqlite).
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BackupError, backupDatabase } from "../db/backup.ts";
import { openLedger } from "../db/ledger.ts";
import { REPLICA_MIGRATIONS } from "../db/replica.ts";
import { Client, startBunServer, type Target } from "./harness.ts";
import { marquee, marqueeAsync, ok, stopKeepingFiles } from "./ops-cli.ts";

const CLOCK = "2026-12-02T12:00:00Z";
/** Every server announces the same public URL, so pages compare whole. */
const BASE = "https://events.example.com";
const QUERIES = [
  "/v1/events?state=NY&limit=20",
  "/v1/events?lat=40.758&lng=-73.9855&radius_miles=10&limit=20",
  "/v1/events?state=CA&city=Los%20Angeles&limit=5",
  "/v1/events?limit=50",
];

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "marquee-backup-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const get = (t: Target, path: string, key: string) => t.fetch(path, { headers: { authorization: `Bearer ${key}` } });

async function pages(t: Target, key: string): Promise<unknown[]> {
  const out = [];
  for (const q of QUERIES) {
    const res = await get(t, q, key);
    expect(res.status, q).toBe(200);
    out.push((await res.json()).data);
  }
  return out;
}

describe("backupDatabase on this runtime's driver", () => {
  it("copies a ledger consistently, refuses to overwrite, and leaves nothing behind when it fails", async () => {
    const from = join(dir, "unit.ledger.db");
    const ledger = await openLedger(from);
    ledger.exec("INSERT INTO settings(key, value) VALUES ('probe', 'kept')");
    const to = join(dir, "unit-copy.ledger.db");
    const copy = await backupDatabase(from, to); // while the source is open, WAL not checkpointed
    ledger.close();
    expect(copy).toMatchObject({ from, to, schemaVersion: 30 });
    const reopened = await openLedger(to);
    expect(reopened.prepare("SELECT value FROM settings WHERE key = 'probe'").get()).toEqual({ value: "kept" });
    reopened.close();
    await expect(backupDatabase(from, to)).rejects.toThrow(BackupError);
    await expect(backupDatabase(join(dir, "none.db"), join(dir, "none-copy.db"))).rejects.toThrow(/no database at/);
    expect(readdirSync(dir).filter((f) => f.endsWith(".partial"))).toEqual([]);
  });
});

describe("marquee backup while serving", () => {
  it("copies under load; a server on the copy serves the same pages and keys; the printed restore works", async () => {
    const live = join(dir, "live");
    mkdirSync(live);
    const db = join(live, "marquee.db");
    const records = join(dir, "demo.ndjson");
    ok(marquee(["demo-data", "--events", "3000", "--seed", "backup", "--anchor", "2026-12-01", "--out", records]));
    ok(marquee(["sync", "--from", records, "--db", db]));
    const account = ok(
      // A negotiated rate far above the load: the frozen test clock refills no bucket.
      marquee([
        ...["accounts", "create", "--email", "ops@example.com", "--plan", "business"],
        ...["--rate-sustained", "1000000", "--rate-burst", "1000000", "--db", db],
      ]),
    );
    const key = ok(marquee(["keys", "create", "--account", account, "--db", db]));

    const server = await startBunServer([], live, { baseUrl: BASE });
    let restored: Target | undefined;
    try {
      const client = new Client(server);
      await client.setClock(CLOCK);
      const before = await pages(server, key);

      // Requests in flight the whole time the backup runs: each writes delivered rows.
      let stop = false;
      let answered = 0;
      const load = Array.from({ length: 4 }, async (_, i) => {
        while (!stop) {
          const res = await get(server, QUERIES[i], key);
          expect(res.status).toBe(200);
          await res.arrayBuffer();
          answered++;
        }
      });
      const backupDir = join(dir, "backup");
      const started = answered;
      const backup = await marqueeAsync(["backup", "--to", backupDir, "--db", db, "--json"]);
      const duringBackup = answered - started;
      stop = true;
      await Promise.all(load);
      const report = JSON.parse(ok(backup));
      expect(duringBackup).toBeGreaterThan(0);
      expect(report.replica).toMatchObject({
        from: db,
        to: join(backupDir, "marquee.db"),
        schemaVersion: Math.max(...REPLICA_MIGRATIONS.map((m) => m.version)),
      });
      expect(report.ledger).toMatchObject({ to: join(backupDir, "marquee.ledger.db"), schemaVersion: 30 });
      expect(report.restore.join("\n")).toContain(`cp ${join(backupDir, "marquee.db")} ${db}`);

      // Issued after the backup: not in it.
      const later = ok(marquee(["keys", "create", "--account", account, "--db", db]));
      expect((await get(server, QUERIES[0], later)).status).toBe(200);

      // Restored into a new folder, beside the live server.
      const copyDir = join(dir, "copy");
      mkdirSync(copyDir);
      copyFileSync(report.replica.to, join(copyDir, "marquee.db"));
      copyFileSync(report.ledger.to, join(copyDir, "marquee.ledger.db"));
      restored = await startBunServer([], copyDir, { baseUrl: BASE });
      await new Client(restored).setClock(CLOCK);
      expect(await pages(restored, key)).toEqual(before);
      expect((await get(restored, QUERIES[0], later)).status).toBe(401);
      const shown = JSON.parse(
        ok(marquee(["accounts", "show", account, "--db", join(copyDir, "marquee.db"), "--json"])),
      );
      expect(shown.rowsUsed24h).toBeGreaterThan(0); // usage written before the backup came along

      // The printed steps, run as printed, over the live files once their server is stopped
      // (stopped, not closed: closing a test server removes its folder).
      await stopKeepingFiles(server);
      const steps = report.restore.filter((line: string) => !line.startsWith("#")).join("\n");
      execFileSync("bash", ["-euc", steps]);
      expect(existsSync(`${db}-wal`)).toBe(false);
      const back = await startBunServer([], live, { baseUrl: BASE });
      await new Client(back).setClock(CLOCK);
      expect(await pages(back, key)).toEqual(before);
      expect((await get(back, QUERIES[0], later)).status).toBe(401);
      await back.close();
    } finally {
      await server.close();
      await restored?.close();
    }
  }, 120_000);

  it("refuses an existing copy, a missing replica, and needs --to", () => {
    const db = join(dir, "lonely", "marquee.db");
    expect(marquee(["backup", "--db", db])).toMatchObject({ status: 2, stderr: expect.stringMatching(/--to DIR/) });
    const missing = marquee(["backup", "--to", join(dir, "b2"), "--db", db]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/no database at .*lonely\/marquee\.db/);
  });
});
