/**
 * What one box's operator configures and checks (docs/operations.md): the version line; every
 * `serve` and `sync` flag from `MARQUEE_<FLAG>` and from `--config FILE`, flags winning over the
 * environment over the file; the configuration file's format and its one-line errors; schema
 * versions, each migration logged and a file from a newer Marquee refused untouched.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDb } from "../db/driver.ts";
import { LEDGER_MIGRATIONS, openLedger } from "../db/ledger.ts";
import { migrate, NewerSchemaError } from "../db/migrate.ts";
import { openReplica, REPLICA_MIGRATIONS } from "../db/replica.ts";
import { UsageError } from "../server/cli/args.ts";
import { parseSettings, variableFor } from "../server/cli/settings.ts";
import { ConfigFileError, parseConfigFile } from "../server/config-file.ts";
import { marquee, ok } from "./ops-cli.ts";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "marquee-config-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const write = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe("marquee --version", () => {
  it("prints the package version, the commit when known and the runtime, and exits 0", () => {
    const line = /^marquee 0\.1\.0( \([0-9a-f]{7,12}\))? bun \d+\.\d+\.\d+$/;
    expect(ok(marquee(["--version"]))).toMatch(line);
    expect(ok(marquee(["version"]))).toMatch(line);
    expect(ok(marquee(["--version"], { env: { MARQUEE_COMMIT: "ABCDEF1234567" } }))).toMatch(
      /^marquee 0\.1\.0 \(abcdef123456\) bun /,
    );
    expect(JSON.parse(ok(marquee(["version", "--json"])))).toMatchObject({ version: "0.1.0", runtime: /^bun / });
  });
});

describe("the configuration file", () => {
  it("reads shared settings, sections, strings, integers, booleans and comments", () => {
    const file = parseConfigFile(
      [
        "# /etc/marquee/marquee.toml",
        'db = "/var/lib/marquee/marquee.db"   # the replica',
        "ledger = 'redis://:p#w@127.0.0.1:6379/0'",
        "",
        "[serve]",
        "port = 8080",
        "test-mode = false",
        'base-url = "https://events.example.com/\\u00e9"',
        "[ sync ]",
        "follow = true",
      ].join("\n"),
      "m.toml",
    );
    expect(Object.fromEntries([...file.shared].map(([k, e]) => [k, e.value]))).toEqual({
      db: "/var/lib/marquee/marquee.db",
      ledger: "redis://:p#w@127.0.0.1:6379/0",
    });
    const serve = file.sections.get("serve")!;
    expect([...serve].map(([k, e]) => [k, e.value, e.line])).toEqual([
      ["port", "8080", 6],
      ["test-mode", false, 7],
      ["base-url", "https://events.example.com/é", 8],
    ]);
    expect(file.sections.get("sync")!.get("follow")!.value).toBe(true);
  });

  it("refuses what it does not know, naming the line", () => {
    const cases: Array<[string, RegExp]> = [
      ["port = 8080", /m\.toml line 1: port belongs in a section \(\[serve\] or \[sync\]\)/],
      ["[server]\nport = 1", /line 1: unknown section \[server\]; sections are \[serve\] and \[sync\]/],
      ["[serve]\nport = 1\nport = 2", /line 3: port is set twice/],
      ["[serve]\nhost = localhost", /line 2: a value is a "quoted string", an integer, true or false; not localhost/],
      ['[serve]\nhost = "localhost', /line 2: a string that is never closed/],
      ['[serve]\nhost = "a" b', /line 2: unexpected text after the value: b/],
      ["[serve]\nSync_From = 1", /line 2: "Sync_From" is not a setting name/],
      ["[serve]\njust words", /line 2: expected name = value/],
    ];
    for (const [text, message] of cases) expect(() => parseConfigFile(text, "m.toml")).toThrow(message);
    expect(() => parseConfigFile("[serve]\n[serve]", "m.toml")).toThrow(ConfigFileError);
  });
});

describe("flags, environment, file", () => {
  const table = {
    port: { type: "string" },
    "sync-from": { type: "string" },
    demo: { type: "boolean" },
    // A flag added later gets its variable and its setting without more code.
    "log-level": { type: "string", default: "info" },
  } as const;

  it("takes a flag over its variable over the file, each flag by itself; defaults last", () => {
    const config = write(
      "layers.toml",
      'db = "/from/file.db"\n[serve]\nport = 1111\nsync-from = "/from/file.ndjson"\ndemo = true\nlog-level = "warn"\n',
    );
    const fromFile = parseSettings("serve", ["--config", config], table, {});
    expect(fromFile.values).toMatchObject({
      db: "/from/file.db",
      port: "1111",
      "sync-from": "/from/file.ndjson",
      demo: true,
      "log-level": "warn",
      json: false,
    });
    expect(fromFile.origins.port).toBe(`port (${config} line 3)`);

    const env = {
      MARQUEE_PORT: "2222",
      MARQUEE_SYNC_FROM: "/from/env.ndjson",
      MARQUEE_LOG_LEVEL: "debug",
      MARQUEE_DEMO: "0",
    };
    const withEnv = parseSettings("serve", ["--config", config, "--port", "3333"], table, env);
    expect(withEnv.values).toMatchObject({
      port: "3333",
      "sync-from": "/from/env.ndjson",
      demo: false,
      "log-level": "debug",
      db: "/from/file.db",
    });
    expect(withEnv.origins).toMatchObject({
      port: "--port",
      "sync-from": "MARQUEE_SYNC_FROM",
      db: `db (${config} line 1)`,
    });
    expect(parseSettings("serve", [], table, {}).values).toMatchObject({ "log-level": "info", json: false });
    expect(variableFor("max-upstream-lag")).toBe("MARQUEE_MAX_UPSTREAM_LAG");
  });

  it("keeps the older names: PORT after MARQUEE_PORT, MARQUEE_CONFIG for the file", () => {
    expect(parseSettings("serve", [], table, { PORT: "4444" }).values.port).toBe("4444");
    expect(parseSettings("serve", [], table, { PORT: "4444", MARQUEE_PORT: "5555" }).values.port).toBe("5555");
    const config = write("env-config.toml", "[serve]\nport = 6666\n");
    expect(parseSettings("serve", [], table, { MARQUEE_CONFIG: config }).values.port).toBe("6666");
    expect(parseSettings("serve", [], table, { MARQUEE_CONFIG: config, PORT: "7777" }).values.port).toBe("7777");
  });

  it("refuses a setting the command does not take, and a variable that is not a boolean", () => {
    const config = write("wrong.toml", "[serve]\nfollow = true\n[sync]\nfollow = true\n");
    expect(() => parseSettings("serve", ["--config", config], table, {})).toThrow(
      new UsageError(`${config} line 2: marquee serve has no --follow`),
    );
    expect(() => parseSettings("serve", [], table, { MARQUEE_DEMO: "maybe" })).toThrow(
      "MARQUEE_DEMO must be 1 or 0 (true or false), not maybe",
    );
    expect(() => parseSettings("serve", ["--config", join(dir, "missing.toml")], table, {})).toThrow(
      /cannot read the configuration file .*missing\.toml: ENOENT/,
    );
  });

  it("checks a setting from the file as its flag; a bad ledger URL names where it came from, never its password", () => {
    const db = join(dir, "served", "marquee.db");
    const config = write("serve.toml", `db = "${db}"\n[serve]\nport = "not a port"\ndemo = false\n`);
    const bad = marquee(["serve", "--config", config]);
    expect(bad).toMatchObject({ status: 2, stderr: "marquee serve: --port must be an integer >= 0" });
    const leaky = write("leaky.toml", 'ledger = "http://user:hunter2@redis.internal:6379"\n');
    const refused = marquee(["serve", "--config", leaky, "--db", db]);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toBe(
      `marquee serve: ledger (${leaky} line 1): http:// is not supported; expected redis://[user:password@]host:port[/db]`,
    );
    const fromEnv = marquee(["accounts", "list", "--db", db], { env: { MARQUEE_LEDGER: "mysql://u:hunter2@h" } });
    expect(fromEnv).toMatchObject({ status: 2 });
    expect(fromEnv.stderr).toMatch(/^marquee accounts: MARQUEE_LEDGER: mysql:\/\/ is not supported/);
    expect(fromEnv.stderr + refused.stderr).not.toContain("hunter2");
  });
});

describe("schema versions", () => {
  it("logs each migration of an existing file, nothing for a new one", async () => {
    const path = join(dir, "old.db");
    const old = await openDb(path);
    migrate(
      old,
      REPLICA_MIGRATIONS.filter((m) => m.version <= 6),
    );
    old.close();
    const lines: string[] = [];
    (await openReplica(path, { log: (line) => lines.push(line) })).close();
    // One line per migration after v6, whatever the newest is.
    const newest = Math.max(...REPLICA_MIGRATIONS.map((m) => m.version));
    expect(lines).toHaveLength(newest - 6);
    expect(lines[0]).toMatch(new RegExp(`^migrated replica ${path}: schema version 6 → 7 \\(\\d+ ms\\)$`));
    expect(lines.map((l) => l.replace(/ \(\d+ ms\)$/, "").split(": ")[1])).toEqual(
      Array.from({ length: newest - 6 }, (_, i) => `schema version ${6 + i} → ${7 + i}`),
    );
    const fresh: string[] = [];
    (await openLedger(join(dir, "new.ledger.db"), { log: (line) => fresh.push(line) })).close();
    expect(fresh).toEqual([]);
  });

  it("refuses a replica or a ledger a newer Marquee wrote, with one line naming both versions, and leaves it as it was", async () => {
    const replica = join(dir, "newer", "marquee.db");
    const ledger = join(dir, "newer", "marquee.ledger.db");
    mkdirSync(join(dir, "newer"));
    for (const path of [replica, ledger]) {
      const db = await openDb(path);
      db.exec("PRAGMA user_version = 99");
      db.close();
    }
    await expect(openReplica(replica)).rejects.toThrow(NewerSchemaError);
    const records = write("one.ndjson", "");
    const sync = marquee(["sync", "--from", records, "--db", replica]);
    expect(sync.status).toBe(1);
    expect(sync.stderr).toBe(
      `marquee sync: replica ${replica} has schema version 99, written by a newer Marquee; this one knows up to version ${REPLICA_MIGRATIONS.at(-1)!.version}: ` +
        "run the newer Marquee, or restore a backup taken before the upgrade (docs/operations.md, Upgrades and schema versions)",
    );
    const accounts = marquee(["accounts", "list", "--db", replica]);
    expect(accounts.status).toBe(1);
    expect(accounts.stderr).toMatch(
      new RegExp(
        `^marquee accounts: ledger ${ledger} has schema version 99, .* up to version ${Math.max(...LEDGER_MIGRATIONS.map((m) => m.version))}: `,
      ),
    );
    const serve = marquee(["serve", "--port", "0", "--db", replica]);
    expect(serve.status).toBe(1);
    expect(serve.stderr.split("\n")).toHaveLength(1);
    // Never migrated: no table was made.
    const db = await openDb(replica, { readonly: true });
    expect(db.prepare("SELECT count(*) AS n FROM sqlite_master").get()).toEqual({ n: 0 });
    expect(Number(db.pragma("user_version"))).toBe(99);
    db.close();
  });
});
