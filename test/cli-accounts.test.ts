/**
 * `marquee accounts` and `marquee keys` (docs/operations.md, The program), run as the real CLI on Bun: a round trip
 * through the ledger, digest-only key storage, one-line errors with non-zero exits, and changes
 * made from this separate process reaching a running Bun server within one second.
 */
import { execFile, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, expectRows, list, NOW, seedEvents } from "./access-fixtures.ts";
import { BUN, Client, ROOT, startBunServer } from "./harness.ts";

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function marquee(db: string, ...args: string[]): Run {
  const r = spawnSync(BUN, [join(ROOT, "server/main.ts"), ...args, "--db", db], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, MARQUEE_DB: "" },
  });
  return { status: r.status, stdout: r.stdout.trim(), stderr: r.stderr.trim() };
}

/** The same, without waiting: independent runs go in parallel. */
function marqueeAsync(db: string, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      BUN,
      [join(ROOT, "server/main.ts"), ...args, "--db", db],
      { cwd: ROOT, env: { ...process.env, MARQUEE_DB: "" } },
      (_err, stdout, stderr) =>
        resolve({ status: child.exitCode, stdout: String(stdout).trim(), stderr: String(stderr).trim() }),
    );
  });
}

function ok(r: Run): string {
  expect(r, r.stderr).toMatchObject({ status: 0 });
  return r.stdout;
}

describe("marquee accounts / keys", () => {
  let dir: string;
  let db: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "marquee-cli-"));
    db = join(dir, "sub", "marquee.db");
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("creates and updates accounts, issues, lists and revokes keys; the ledger holds digests only", () => {
    const id = ok(marquee(db, "accounts", "create", "--email", "dev@example.com", "--plan", "basic"));
    expect(id).toMatch(/^\d+$/);
    const created = JSON.parse(
      ok(marquee(db, "accounts", "create", "--email", "t@example.com", "--unverified", "--json")),
    );
    expect(created).toMatchObject({ plan: "none", verified: false, hadSubscription: false, policy: "ok" });

    const updated = JSON.parse(
      ok(
        marquee(
          db,
          "accounts",
          "update",
          id,
          "--plan",
          "enterprise",
          "--row-budget",
          "5000",
          "--rate-sustained",
          "120",
          "--rate-burst",
          "30",
          "--policy",
          "stale",
          "--json",
        ),
      ),
    );
    expect(updated).toMatchObject({
      id: Number(id),
      plan: "enterprise",
      rowBudget: 5000,
      rateSustained: 120,
      rateBurst: 30,
      policy: "stale",
    });
    expect(
      ok(
        marquee(
          db,
          "accounts",
          "update",
          id,
          "--row-budget",
          "none",
          "--rate-sustained",
          "none",
          "--rate-burst",
          "none",
          "--policy",
          "ok",
        ),
      ),
    ).toBe(`account ${id} <dev@example.com>, plan enterprise, verified, policy ok`);
    const ended = JSON.parse(ok(marquee(db, "accounts", "update", id, "--plan", "none", "--json")));
    expect(ended.hadSubscription).toBe(true); // ending a plan leaves a prior subscription

    const key = ok(marquee(db, "keys", "create", "--account", id));
    expect(key).toMatch(/^mq_live_[0-9A-Za-z]{38}$/);
    const builder = JSON.parse(ok(marquee(db, "keys", "create", "--account", id, "--kind", "builder", "--json")));
    expect(builder).toMatchObject({ accountId: Number(id), kind: "builder" });
    expect(builder.key.startsWith(builder.prefix)).toBe(true);

    const listed = ok(marquee(db, "keys", "list", "--account", id));
    expect(listed).toContain(key.slice(0, 12));
    expect(listed).not.toContain(key);
    expect(listed).not.toContain(builder.key);
    const rows = JSON.parse(ok(marquee(db, "keys", "list", "--account", id, "--json")));
    expect(rows.map((k: { kind: string; revokedAt: string | null }) => [k.kind, k.revokedAt])).toEqual([
      ["live", null],
      ["builder", null],
    ]);
    expect(JSON.stringify(rows)).not.toContain(key);

    expect(ok(marquee(db, "keys", "revoke", String(builder.id)))).toBe(`revoked key ${builder.id}`);
    const after = JSON.parse(ok(marquee(db, "keys", "list", "--account", id, "--json")));
    expect(after[1].revokedAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);

    // Every file of the ledger (incl. its WAL) holds the digest and never the key.
    const bytes = readdirSync(join(dir, "sub"))
      .filter((f) => f.startsWith("marquee.ledger.db"))
      .map((f) => readFileSync(join(dir, "sub", f)).toString("latin1"))
      .join("");
    expect(bytes).toContain(createHash("sha256").update(key).digest("hex"));
    expect(bytes).not.toContain(key);
    expect(bytes).not.toContain(builder.key);
  });

  it("rejects bad flags with one line and a non-zero exit", async () => {
    const cases: Array<[string[], number, RegExp]> = [
      [["accounts", "create", "--plan", "basic"], 2, /--email is required/],
      [["accounts", "create", "--email", "a@b.co", "--plan", "gold"], 2, /--plan must be one of/],
      [["accounts", "create", "--email", "nope"], 2, /--email/],
      [["accounts", "create", "--email", "a@b.co", "--rate-burst", "5"], 2, /--rate-sustained and --rate-burst/],
      [["accounts", "create", "--email", "a@b.co", "--row-budget", "-1"], 2, /--row-budget/],
      [["accounts", "create", "--email", "a@b.co", "--bogus"], 2, /--bogus/],
      [["accounts", "update", "abc"], 2, /account ID must be a positive integer/],
      [["accounts", "update", "999", "--plan", "basic"], 1, /no account 999/],
      [["accounts", "delete"], 2, /unknown subcommand 'delete'/],
      [["keys", "create", "--account", "999"], 1, /no account 999/],
      [["keys", "create", "--account", "1", "--kind", "admin"], 2, /--kind must be one of/],
      [["keys", "revoke", "999"], 1, /no key 999/],
      [["keys", "revoke"], 2, /KEY_ID is required/],
      [["keys", "list", "--account", "x"], 2, /--account must be a positive integer/],
      [["keys", "find"], 2, /PREFIX is required/],
    ];
    const runs = await Promise.all(cases.map(([args]) => marqueeAsync(db, ...args)));
    for (const [i, [args, status, message]] of cases.entries()) {
      const r = runs[i];
      expect({ args, status: r.status }).toEqual({ args, status });
      expect(r.stderr.split("\n")).toHaveLength(1);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe("");
    }
    expect(marquee(db, "keys", "--help")).toMatchObject({ status: 0 });
    expect(marquee(db, "accounts", "--help").stdout).toContain("--rate-sustained");
  });
});

describe("CLI changes reach a running Bun server", () => {
  let server: Awaited<ReturnType<typeof startBunServer>>;
  let c: Client;
  let db: string;
  beforeAll(async () => {
    server = await startBunServer();
    c = new Client(server);
    db = join(server.dir, "marquee.db");
    await c.setClock(NOW);
    await seedEvents(c);
  });
  afterAll(async () => server?.close());

  it("serves a key created by the CLI, applies a plan change, and refuses the key from the next request after revocation", async () => {
    const account = ok(marquee(db, "accounts", "create", "--email", "ops@example.com", "--plan", "business"));
    const key = ok(marquee(db, "keys", "create", "--account", account));
    const keyId = JSON.parse(ok(marquee(db, "keys", "list", "--account", account, "--json")))[0].id;
    await expectRows(list(c, key, "?polygon=40.6,-74.1;40.8,-74.1;40.8,-73.9&limit=1"), 1);

    ok(marquee(db, "accounts", "update", account, "--plan", "basic"));
    await expectError(list(c, key, "?polygon=40.6,-74.1;40.8,-74.1;40.8,-73.9"), 403, "feature_not_in_plan");

    ok(marquee(db, "keys", "revoke", String(keyId)));
    await expectError(list(c, key), 401, "invalid_api_key");
  });
});
