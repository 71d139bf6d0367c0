/**
 * The operator's side of the developer portal, as the real CLI on Bun: `--key-limit` on
 * `accounts create|update`, `accounts sign-in-link` (a link a running server honours once), the
 * ledger holding only digests of link tokens and session ids, and an old ledger upgrading.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listKeys, readAccount } from "../db/accounts.ts";
import { openDb } from "../db/driver.ts";
import { LEDGER_MIGRATIONS, openLedger } from "../db/ledger.ts";
import { migrate } from "../db/migrate.ts";
import { BUN, Client, ROOT, startBunServer } from "./harness.ts";
import { HTML_ACCEPT, openLink } from "./portal-client.ts";

function marquee(db: string, ...args: string[]) {
  const r = spawnSync(BUN, [join(ROOT, "server/main.ts"), ...args, "--db", db], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, MARQUEE_DB: "", MARQUEE_BASE_URL: "" },
  });
  return { status: r.status, stdout: r.stdout.trim(), stderr: r.stderr.trim() };
}

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

describe("marquee accounts --key-limit and sign-in-link", () => {
  let server: Awaited<ReturnType<typeof startBunServer>>;
  let c: Client;
  let db: string;
  beforeAll(async () => {
    server = await startBunServer();
    c = new Client(server);
    db = join(server.dir, "marquee.db");
  });
  afterAll(async () => server?.close());

  it("sets the key limit on create and update, and refuses a bad one", () => {
    const created = JSON.parse(
      marquee(db, "accounts", "create", "--email", "kl@example.com", "--plan", "basic", "--key-limit", "3", "--json")
        .stdout,
    );
    expect(created.keyLimit).toBe(3);
    const defaulted = JSON.parse(marquee(db, "accounts", "create", "--email", "d@example.com", "--json").stdout);
    expect(defaulted.keyLimit).toBe(10);
    const updated = marquee(db, "accounts", "update", String(created.id), "--key-limit", "0");
    expect(updated.stdout).toContain("key limit 0");
    for (const bad of ["-1", "abc", "1.5"]) {
      const r = marquee(db, "accounts", "update", String(created.id), "--key-limit", bad);
      expect(r.status, bad).toBe(2);
      expect(r.stderr).toMatch(/--key-limit/);
    }
  });

  it("prints a one-time link that the running server honours once; the ledger keeps only digests", async () => {
    const id = marquee(
      db,
      "accounts",
      "create",
      "--email",
      "owner@example.com",
      "--plan",
      "business",
      "--key-limit",
      "4",
    ).stdout;
    const text = marquee(db, "accounts", "sign-in-link", id, "--base-url", server.baseUrl);
    expect(text.status, text.stderr).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^${server.baseUrl}/developers/sign-in\\?token=[0-9A-Za-z]{32}$`));
    const asJson = JSON.parse(
      marquee(db, "accounts", "sign-in-link", id, "--json", "--base-url", "https://portal.example").stdout,
    );
    expect(asJson.url).toMatch(/^https:\/\/portal\.example\/developers\/sign-in\?token=/);
    expect(Date.parse(asJson.expiresAt) - Date.now()).toBeGreaterThan(14 * 60_000);
    expect(Date.parse(asJson.expiresAt) - Date.now()).toBeLessThanOrEqual(15 * 60_000);

    const res = await openLink(c, text.stdout);
    expect(res.status).toBe(303);
    const cookie = res.headers.get("set-cookie")!.split(";")[0];
    const page = await c.fetch("/developers/keys", { headers: { cookie, accept: "application/json" } });
    expect(((await page.json()) as { account: { keyLimit: number } }).account.keyLimit).toBe(4);
    expect((await openLink(c, text.stdout)).status).toBe(410);

    // The operator lowers the limit while the owner is signed in: the next request sees it.
    marquee(db, "accounts", "update", id, "--key-limit", "1");
    const after = await c.fetch("/developers/keys", { headers: { cookie, ...HTML_ACCEPT } });
    expect(await after.text()).toContain("0 of 1 active keys");

    const token = new URL(text.stdout).searchParams.get("token")!;
    const sessionId = cookie.split("=")[1];
    const bytes = readdirSync(server.dir)
      .filter((f) => f.startsWith("marquee.ledger.db"))
      .map((f) => readFileSync(join(server.dir, f)).toString("latin1"))
      .join("");
    expect(bytes).toContain(sha256(token));
    expect(bytes).toContain(sha256(sessionId));
    expect(bytes).not.toContain(token);
    expect(bytes).not.toContain(sessionId);
  });

  it("names a missing account or argument in one line", () => {
    expect(marquee(db, "accounts", "sign-in-link", "999999")).toMatchObject({
      status: 1,
      stderr: expect.stringMatching(/no account 999999/),
    });
    expect(marquee(db, "accounts", "sign-in-link")).toMatchObject({
      status: 2,
      stderr: expect.stringMatching(/account ID is required/),
    });
    expect(marquee(db, "accounts", "--help").stdout).toContain("sign-in-link");
  });
});

describe("ledger upgrade", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "marquee-upgrade-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("adds key limits, labels and the portal tables to a ledger made before them, keeping its rows", async () => {
    const path = join(dir, "old.ledger.db");
    const old = await openDb(path);
    migrate(
      old,
      LEDGER_MIGRATIONS.filter((m) => m.version < 30),
    );
    expect(Number(old.pragma("user_version"))).toBe(20);
    old.exec(`INSERT INTO accounts(id, email, plan, verified, had_subscription, created_ms, updated_ms)
      VALUES (7, 'old@example.com', 'basic', 1, 0, 1, 1)`);
    old.exec(
      "INSERT INTO api_keys(account_id, kind, digest, prefix, created_ms) VALUES (7, 'live', 'abc', 'mq_live_AbCd', 2)",
    );
    old.close();

    const ledger = await openLedger(path);
    try {
      expect(Number(ledger.pragma("user_version"))).toBe(30);
      expect(readAccount(ledger, 7)).toMatchObject({ email: "old@example.com", keyLimit: 10 });
      expect(listKeys(ledger, 7)).toEqual([
        {
          id: 1,
          accountId: 7,
          kind: "live",
          prefix: "mq_live_AbCd",
          createdMs: 2,
          revokedMs: null,
          label: null,
          issuedBy: "operator",
        },
      ]);
      const tables = ledger
        .prepare<{ name: string }>(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'portal_%' ORDER BY name",
        )
        .all();
      expect(tables.map((t) => t.name)).toEqual(["portal_sessions", "portal_sign_in_links"]);
    } finally {
      ledger.close();
    }
  });
});
