/**
 * The SQLite driver contract (docs/architecture.md, Runtimes, docs/architecture.md docs/operations.md, The program): one suite, written once, run against
 * better-sqlite3 under vitest on Node (test/driver.test.ts) and against bun:sqlite under
 * `bun test` (test/bun/driver.test.ts). Every expectation is a literal value, so passing on
 * both runtimes means both drivers give identical results.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Db, OpenOptions } from "../db/driver.ts";
import { migrate } from "../db/migrate.ts";
import { writeRows } from "../db/multi-row-write.ts";

/** The slice of a test framework the suite needs (vitest and bun:test both provide it). */
export interface TestApi {
  describe(name: string, fn: () => void): void;
  it(name: string, fn: () => unknown | Promise<unknown>): void;
  expect: (value: unknown) => any;
}

export type Opener = (path: string, options?: OpenOptions) => Promise<Db>;

export function driverContract(t: TestApi, driverName: string, open: Opener): void {
  const { describe, it, expect } = t;

  /** Runs `fn` with fresh databases in a temp folder, closing and removing them afterwards. */
  async function withDb(fn: (db: Db, dir: string) => unknown | Promise<unknown>, options?: OpenOptions): Promise<void> {
    const dir = mkdtempSync(join(tmpdir(), "marquee-driver-"));
    const db = await open(join(dir, "test.db"), options);
    try {
      await fn(db, dir);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }

  const schema = "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, score REAL, data BLOB, flag INTEGER)";

  describe(`SQLite driver contract [${driverName}]`, () => {
    it("writes moves with every statement that may write and never with a read", () =>
      withDb((db) => {
        const start = db.writes;
        db.exec(schema);
        expect(db.writes).toBe(start + 1);
        db.prepare("INSERT INTO t(id, name) VALUES (?, ?)").run(1, "a");
        db.prepare("SELECT name FROM t WHERE id = ?").get(1);
        db.prepare("  select count(*) AS n FROM t").all();
        db.pragma("data_version");
        expect(db.writes).toBe(start + 2);
        // A write that returns rows counts through get and all too, even when it changed nothing.
        db.prepare("UPDATE t SET name = 'b' WHERE id = ? RETURNING id").get(1);
        db.prepare("DELETE FROM t WHERE id = ? RETURNING id").all(99);
        db.transaction(() => db.prepare("WITH x AS (SELECT 2 AS id) INSERT INTO t(id) SELECT id FROM x").run());
        expect(db.writes).toBe(start + 5);
      }));

    it("exec, run and all round-trip every storage class", () =>
      withDb((db) => {
        db.exec(schema);
        const insert = db.prepare("INSERT INTO t(id, name, score, data, flag) VALUES (?, ?, ?, ?, ?)");
        expect(insert.run(1, "Zoë 🎸", 1.5, new Uint8Array([0, 255, 7]), 1)).toEqual({
          changes: 1,
          lastInsertRowid: 1,
        });
        expect(insert.run(2, null, -0.25, null, 0)).toEqual({ changes: 1, lastInsertRowid: 2 });
        insert.run(3, "big", 2 ** 53 - 1, null, null);
        const rows = db.prepare<Record<string, unknown>>("SELECT id, name, score, data, flag FROM t ORDER BY id").all();
        expect(rows.length).toBe(3);
        expect(rows[0].data instanceof Uint8Array).toBe(true);
        expect(Array.from(rows[0].data as Uint8Array)).toEqual([0, 255, 7]);
        expect({ ...rows[0], data: null }).toEqual({ id: 1, name: "Zoë 🎸", score: 1.5, data: null, flag: 1 });
        expect(rows[1]).toEqual({ id: 2, name: null, score: -0.25, data: null, flag: 0 });
        expect(rows[2]).toEqual({ id: 3, name: "big", score: 2 ** 53 - 1, data: null, flag: null });
      }));

    it("binds named $parameters from an object and positional ones from arguments", () =>
      withDb((db) => {
        db.exec(schema);
        db.prepare("INSERT INTO t(id, name, score) VALUES ($id, $name, $score)").run({
          id: 7,
          name: "seven",
          score: 7.5,
        });
        db.prepare("INSERT INTO t(id, name, score) VALUES (?, ?, ?)").run(8, "eight", 8);
        expect(db.prepare("SELECT name FROM t WHERE id = $id").get({ id: 7 })).toEqual({ name: "seven" });
        expect(db.prepare("SELECT name FROM t WHERE id = ?").get(8)).toEqual({ name: "eight" });
        expect(
          db.prepare("SELECT count(*) AS n FROM t WHERE score > $min AND score < $max").get({ min: 7, max: 9 }),
        ).toEqual({ n: 2 });
      }));

    it("binds bigints and returns integers as numbers", () =>
      withDb((db) => {
        db.exec(schema);
        db.prepare("INSERT INTO t(id, flag) VALUES ($id, $flag)").run({ id: 1, flag: 2n ** 40n });
        expect(db.prepare("SELECT flag, typeof(flag) AS type FROM t").get()).toEqual({
          flag: 2 ** 40,
          type: "integer",
        });
      }));

    it("get returns undefined when there is no row; all returns []", () =>
      withDb((db) => {
        db.exec(schema);
        expect(db.prepare("SELECT * FROM t WHERE id = ?").get(42)).toBe(undefined);
        expect(db.prepare("SELECT * FROM t").all()).toEqual([]);
      }));

    it("run reports changes of updates and deletes; all and get also execute writes", () =>
      withDb((db) => {
        db.exec(schema);
        for (let i = 1; i <= 5; i++) db.prepare("INSERT INTO t(id, flag) VALUES (?, 0)").run(i);
        expect(db.prepare("UPDATE t SET flag = 1 WHERE id <= ?").run(3).changes).toBe(3);
        expect(db.prepare("DELETE FROM t WHERE flag = 0").run().changes).toBe(2);
        expect(db.prepare("INSERT INTO t(id) VALUES (?)").all(10)).toEqual([]);
        expect(db.prepare("INSERT INTO t(id) VALUES (?)").get(11)).toBe(undefined);
        expect(db.prepare("SELECT group_concat(id) AS ids FROM (SELECT id FROM t ORDER BY id)").get()).toEqual({
          ids: "1,2,3,10,11",
        });
      }));

    it("caches prepared statements by SQL text", () =>
      withDb((db) => {
        db.exec(schema);
        expect(db.prepare("SELECT 1")).toBe(db.prepare("SELECT 1"));
      }));

    it("transaction commits and returns the callback's value", () =>
      withDb((db) => {
        db.exec(schema);
        const out = db.transaction(() => {
          db.prepare("INSERT INTO t(id) VALUES (1), (2)").run();
          return "done";
        });
        expect(out).toBe("done");
        expect(db.prepare("SELECT count(*) AS n FROM t").get()).toEqual({ n: 2 });
      }));

    it("transaction rolls back everything when the callback throws, and rethrows", () =>
      withDb((db) => {
        db.exec(schema);
        db.prepare("INSERT INTO t(id) VALUES (1)").run();
        let thrown: unknown;
        try {
          db.transaction(() => {
            db.prepare("INSERT INTO t(id) VALUES (2)").run();
            db.prepare("INSERT INTO t(id) VALUES (1)").run(); // primary key conflict
          });
        } catch (err) {
          thrown = err;
        }
        expect(String((thrown as Error)?.message)).toContain("UNIQUE constraint failed");
        expect(db.prepare("SELECT group_concat(id) AS ids FROM t").get()).toEqual({ ids: "1" });
        // The connection is usable afterwards.
        db.transaction(() => db.prepare("INSERT INTO t(id) VALUES (3)").run());
        expect(db.prepare("SELECT count(*) AS n FROM t").get()).toEqual({ n: 2 });
      }));

    it("a nested transaction is an error and the outer one rolls back", () =>
      withDb((db) => {
        db.exec(schema);
        expect(() =>
          db.transaction(() => {
            db.prepare("INSERT INTO t(id) VALUES (1)").run();
            db.transaction(() => db.prepare("INSERT INTO t(id) VALUES (2)").run());
          }),
        ).toThrow();
        expect(db.prepare("SELECT count(*) AS n FROM t").get()).toEqual({ n: 0 });
      }));

    it("opens in WAL mode with a busy timeout, NORMAL sync and foreign keys by default", () =>
      withDb((db) => {
        expect(db.pragma("journal_mode")).toBe("wal");
        expect(db.pragma("busy_timeout")).toBe(5000);
        expect(db.pragma("synchronous")).toBe(1);
        expect(db.pragma("foreign_keys")).toBe(1);
        expect(db.pragma("user_version")).toBe(0);
      }));

    it("honours synchronous=FULL and a custom busy timeout", () =>
      withDb(
        (db) => {
          expect(db.pragma("synchronous")).toBe(2);
          expect(db.pragma("busy_timeout")).toBe(1234);
        },
        { synchronous: "FULL", busyTimeoutMs: 1234 },
      ));

    it("migrates with user_version, once, each migration atomically", () =>
      withDb((db) => {
        const v1 = { version: 1, sql: "CREATE TABLE a (x INTEGER)" };
        const v2 = { version: 2, sql: "CREATE TABLE b (y INTEGER); INSERT INTO b VALUES (1)" };
        expect(migrate(db, [v2, v1])).toBe(2);
        expect(db.pragma("user_version")).toBe(2);
        expect(migrate(db, [v1, v2])).toBe(2); // nothing re-applied
        expect(db.prepare("SELECT count(*) AS n FROM b").get()).toEqual({ n: 1 });
        const broken = { version: 3, sql: "CREATE TABLE c (z INTEGER); INSERT INTO missing VALUES (1)" };
        expect(() => migrate(db, [v1, v2, broken])).toThrow();
        expect(db.pragma("user_version")).toBe(2);
        expect(db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'c'").get()).toEqual({ n: 0 });
      }));

    it("a reader sees the last commit while a writer's transaction is open (WAL)", () =>
      withDb(async (db, dir) => {
        db.exec(schema);
        db.prepare("INSERT INTO t(id) VALUES (1)").run();
        const reader = await open(join(dir, "test.db"));
        try {
          db.transaction(() => {
            db.prepare("INSERT INTO t(id) VALUES (2)").run();
            expect(reader.prepare("SELECT count(*) AS n FROM t").get()).toEqual({ n: 1 });
          });
          expect(reader.prepare("SELECT count(*) AS n FROM t").get()).toEqual({ n: 2 });
        } finally {
          reader.close();
        }
      }));

    it("a second writer waits for busy_timeout, then fails with 'database is locked'", () =>
      withDb(async (db, dir) => {
        db.exec(schema);
        const other = await open(join(dir, "test.db"), { busyTimeoutMs: 50 });
        try {
          let message = "";
          const started = Date.now();
          db.transaction(() => {
            db.prepare("INSERT INTO t(id) VALUES (1)").run();
            try {
              other.prepare("INSERT INTO t(id) VALUES (2)").run();
            } catch (err) {
              message = (err as Error).message;
            }
          });
          expect(message).toContain("database is locked");
          expect(Date.now() - started).toBeGreaterThanOrEqual(40);
          other.prepare("INSERT INTO t(id) VALUES (2)").run(); // free again after the commit
          expect(db.prepare("SELECT count(*) AS n FROM t").get()).toEqual({ n: 2 });
        } finally {
          other.close();
        }
      }));

    it("a read-only handle reads and refuses writes", () =>
      withDb(async (db, dir) => {
        db.exec(schema);
        db.prepare("INSERT INTO t(id) VALUES (1)").run();
        const ro = await open(join(dir, "test.db"), { readonly: true });
        try {
          expect(ro.prepare("SELECT count(*) AS n FROM t").get()).toEqual({ n: 1 });
          expect(() => ro.prepare("INSERT INTO t(id) VALUES (2)").run()).toThrow();
        } finally {
          ro.close();
        }
      }));

    it("pragma reads a single value", () =>
      withDb((db) => {
        db.exec("PRAGMA user_version = 42");
        expect(db.pragma("user_version")).toBe(42);
        expect(typeof db.pragma("data_version")).toBe("number");
        expect(db.pragma("page_size")).toBe(4096);
      }));

    it("writeRows writes any number of rows through multi-row statements, and upserts", () =>
      withDb((db) => {
        db.exec("CREATE TABLE kv (k INTEGER PRIMARY KEY, v TEXT, n REAL)");
        const upsert = (values: string) =>
          `INSERT INTO kv(k, v, n) VALUES ${values} ON CONFLICT(k) DO UPDATE SET v = excluded.v, n = excluded.n`;
        // Sizes around every chunk boundary (64, 16, 4, 1), written one after another.
        let next = 0;
        const sizes = [0, 1, 3, 4, 5, 15, 16, 17, 63, 64, 65, 150];
        for (const size of sizes) {
          const rows = Array.from({ length: size }, (_, i) => [next + i, `v${next + i}`, (next + i) / 2]);
          writeRows(db, upsert, rows);
          next += size;
        }
        const total = sizes.reduce((a, b) => a + b, 0);
        const all = db.prepare<{ k: number; v: string; n: number }>("SELECT k, v, n FROM kv ORDER BY k").all();
        expect(all.length).toBe(total);
        expect(all.every((r, i) => r.k === i && r.v === `v${i}` && r.n === i / 2)).toBe(true);
        // Existing keys are updated, with nulls bound as nulls.
        writeRows(db, upsert, [
          [0, null, 9],
          [total - 1, "last", null],
        ]);
        expect(db.prepare("SELECT k, v, n FROM kv WHERE k IN (0, $last) ORDER BY k").all({ last: total - 1 })).toEqual([
          { k: 0, v: null, n: 9 },
          { k: total - 1, v: "last", n: null },
        ]);
        expect(db.prepare("SELECT count(*) AS c FROM kv").get()).toEqual({ c: total });
      }));
  });
}
