/**
 * A ledger that cannot be written under a running server (docs/api.md, Ticket handoffs; Test
 * mode): creating a handoff answers 503 `handoff_unavailable` with Retry-After 60, Continue a 503
 * page with Retry-After 60, test-mode writes 503 `storage_unavailable` naming the cause; nothing
 * is recorded, and everything works again once the storage does.
 *
 * Two real failures: on the spawned Bun server, a file size limit of 0 set on the running process
 * (prlimit), so every write to its files fails with SQLite's I/O error; in-process (Node,
 * better-sqlite3), the server's own ledger connection made read-only at the driver seam
 * (`PRAGMA query_only`), which fails every write with SQLITE_READONLY.
 */
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDb } from "../db/driver.ts";
import { isStorageFailure } from "../db/storage-failure.ts";
import { sqliteLedgerDb } from "../server/context.ts";
import { Client, startBunServer, startInProcess, type Target } from "./harness.ts";
import { eventRecord, venueRecord } from "./records.ts";

const NOW = "2030-03-01T12:00:00Z";

interface Breakable {
  target: Target;
  break(): void | Promise<void>;
  repair(): void | Promise<void>;
}

const TARGETS: Record<string, () => Promise<Breakable>> = {
  "bun, a file size limit on the running server": async () => {
    const target = await startBunServer([], undefined, { fileSizeLimitable: true });
    const limit = (soft: string) =>
      execFileSync("prlimit", ["--pid", String(target.child.pid), `--fsize=${soft}:unlimited`]);
    return { target, break: () => void limit("0"), repair: () => void limit("unlimited") };
  },
  "in-process, a read-only ledger connection": async () => {
    const target = await startInProcess();
    const readOnly = (on: boolean) => sqliteLedgerDb(target.ctx).exec(`PRAGMA query_only = ${on ? 1 : 0}`);
    return { target, break: () => readOnly(true), repair: () => readOnly(false) };
  },
};

for (const [name, start] of Object.entries(TARGETS)) {
  describe(`storage failures [${name}]`, () => {
    let storage: Breakable;
    let c: Client;
    let auth: Record<string, string>;
    const create = (eventId: number) => c.postJson("/v1/ticket-handoffs", { event_id: eventId }, auth);

    beforeAll(async () => {
      storage = await start();
      c = new Client(storage.target);
      await c.setClock(NOW);
      await c.records([venueRecord(1), eventRecord(501, 1, "2030-03-10T20:00:00Z")]);
      auth = { authorization: `Bearer ${await c.keyFor({ plan: "business" })}` };
    });
    afterAll(async () => {
      await storage.repair();
      await storage.target.close();
    });

    it("answers 503 on create and Continue, records nothing, and recovers", async () => {
      const made = await create(501);
      expect(made.status).toBe(201);
      const handoff = (await made.json()) as { handoff_id: string; handoff_url: string };
      const continuePath = `${new URL(handoff.handoff_url).pathname}/continue`;
      const cont = () =>
        c.fetch(continuePath, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: "",
        });

      await storage.break();
      try {
        for (let i = 0; i < 3; i++) {
          const res = await create(501);
          const body = (await res.json()) as { error: { code: string; message: string }; request_id: string };
          expect(res.status).toBe(503);
          expect(body.error.code).toBe("handoff_unavailable");
          expect(res.headers.get("retry-after")).toBe("60");
          expect(body.request_id).toBe(res.headers.get("x-request-id"));
        }
        const page = await cont();
        expect(page.status).toBe(503);
        expect(page.headers.get("retry-after")).toBe("60");
        expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
        expect(await page.text()).toMatch(/temporarily/i);

        const account = await c.postJson("/_test/accounts", { email: "x@example.com", plan: "basic", verified: true });
        const refusal = (await account.json()) as { error: { code: string; message: string } };
        expect(account.status).toBe(503);
        expect(refusal.error.code).toBe("storage_unavailable");
        expect(refusal.error.message).toMatch(/SQLITE_(IOERR|READONLY)/);
      } finally {
        await storage.repair();
      }

      // Nothing was recorded: the handoff is unredeemed with no click, and the failed attempts
      // spent none of the 10 creations a minute (one is spent by the handoff made above).
      const stored = (await (await c.get(`/_test/handoffs/${handoff.handoff_id}`)).json()) as {
        redeemedMs: number | null;
        clicks: number;
      };
      expect(stored).toMatchObject({ redeemedMs: null, clicks: 0 });
      for (let i = 0; i < 9; i++) expect((await create(501)).status).toBe(201);
      expect((await create(501)).status).toBe(429);

      const redeemed = await cont();
      expect(redeemed.status).toBe(303);
      expect(redeemed.headers.get("location")).toBe("https://www.ticketmaster.com/event/501");
      expect((await c.postJson("/_test/accounts", { email: "y@example.com", plan: "basic" })).status).toBe(201);
    });
  });
}

describe("storage failures in the replica [bun, a file size limit on the running server]", () => {
  it("refuses test-mode records with 503 naming the cause, then applies them", async () => {
    const target = await startBunServer([], undefined, { fileSizeLimitable: true });
    const c = new Client(target);
    const limit = (soft: string) =>
      execFileSync("prlimit", ["--pid", String(target.child.pid), `--fsize=${soft}:unlimited`]);
    try {
      const lines = [venueRecord(7), eventRecord(701, 7, "2030-03-10T20:00:00Z")];
      const post = () =>
        c.fetch("/_test/records", {
          method: "POST",
          headers: { "content-type": "application/x-ndjson" },
          body: lines.map((l) => JSON.stringify(l)).join("\n"),
        });
      limit("0");
      const res = await post();
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(res.status).toBe(503);
      expect(body.error).toMatchObject({ code: "storage_unavailable" });
      expect(body.error.message).toMatch(/SQLITE_IOERR/);
      limit("unlimited");
      expect((await post()).status).toBe(200);
    } finally {
      limit("unlimited");
      await target.close();
    }
  });
});

describe("isStorageFailure", () => {
  it("knows a real full database and a read-only connection, and not a constraint error", async () => {
    const db = await openDb(":memory:");
    db.exec("CREATE TABLE t(x UNIQUE)");
    db.exec("PRAGMA max_page_count = 2");
    const failure = (sql: string) => {
      try {
        db.exec(sql);
      } catch (err) {
        return err;
      }
      throw new Error(`${sql} did not fail`);
    };
    expect(isStorageFailure(failure("INSERT INTO t VALUES (randomblob(100000))"))).toBe(true);
    db.exec("INSERT INTO t VALUES (1)");
    expect(isStorageFailure(failure("INSERT INTO t VALUES (1)"))).toBe(false);
    db.exec("PRAGMA query_only = 1");
    expect(isStorageFailure(failure("INSERT INTO t VALUES (2)"))).toBe(true);
    db.close();
  });
});
