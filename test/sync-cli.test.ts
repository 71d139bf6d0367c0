/**
 * The operator interface of sync (docs/operations.md, The program) on the real program under Bun: `demo-data` and
 * `sync` round trips (file and stdin), one-line errors with a non-zero exit for bad flags and
 * bad lines, `sync --follow` until SIGINT, `serve --sync-from` and `serve --demo`.
 */
import { spawn, spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDb } from "../db/driver.ts";
import { openReplica, readReplicaStats, readWatermark } from "../db/replica.ts";
import { BUN, freePort, ROOT, startBunServer, waitForHealth } from "./harness.ts";
import { eventRecord, venueRecord } from "./records.ts";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "marquee-cli-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function marquee(args: string[], input?: string) {
  const r = spawnSync(BUN, ["server/main.ts", ...args], {
    cwd: ROOT,
    input,
    encoding: "utf8",
    env: { ...process.env, MARQUEE_DB: "" },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The watermark as another process sees it; 0 while the replica is still being created. */
async function peekWatermark(path: string): Promise<number> {
  try {
    const ro = await openDb(path, { readonly: true });
    try {
      return readWatermark(ro);
    } finally {
      ro.close();
    }
  } catch {
    return 0;
  }
}

async function stats(path: string) {
  const db = await openReplica(path);
  try {
    return readReplicaStats(db);
  } finally {
    db.close();
  }
}

describe("marquee demo-data and sync", () => {
  it("round-trips a demo stream through a file, then is a no-op the second time", async () => {
    const file = join(dir, "demo.ndjson");
    const db = join(dir, "file.db");
    const gen = marquee(["demo-data", "--events", "500", "--seed", "cli", "--out", file, "--json"]);
    expect(gen.code, gen.stderr).toBe(0);
    const written = JSON.parse(gen.stdout);
    expect(written).toMatchObject({ events: 500, seed: "cli", anchor: "2026-12-01", out: file });
    expect(readFileSync(file, "utf8").split("\n").filter(Boolean).length).toBe(written.records);

    const first = marquee(["sync", "--from", file, "--db", db, "--json"]);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({
      records: written.records,
      applied: written.records,
      watermark: written.lastSeq,
    });
    const s = await stats(db);
    expect(s.events).toBeGreaterThan(450);
    expect(s.snapshotEvents).toBeGreaterThan(350);

    const second = marquee(["sync", "--from", file, "--db", db]);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(
      new RegExp(`^synced ${file}: ${written.records} records \\(0 applied, ${written.records} already applied\\)`),
    );
    expect(second.stderr).toBe(""); // no progress bar without a terminal
  });

  it("reads stdin with --from - (demo-data piped into sync)", async () => {
    const db = join(dir, "stdin.db");
    const stream = marquee(["demo-data", "--events", "200", "--seed", "pipe"]);
    expect(stream.code).toBe(0);
    expect(stream.stderr).toMatch(/^wrote \d+ records \(200 events, 80 venues, last seq \d+\) to stdout\n$/);
    const r = marquee(["sync", "--from", "-", "--db", db, "--json"], stream.stdout);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      source: "stdin",
      applied: stream.stdout.split("\n").filter(Boolean).length,
      writerThread: true, // an input of unknown size gets the writer thread on Bun
    });
  });

  it("the binary from `npm run build` syncs on its writer thread too", async () => {
    // package.json's own build command, with the executable written here instead of dist/.
    const build = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: { build: string } })
      .scripts.build;
    const exe = join(dir, "marquee-exe");
    const args = build.replace(/^bun /, "").replace("dist/marquee", exe).split(" ");
    const built = spawnSync(BUN, args, { cwd: ROOT, encoding: "utf8" });
    expect(built.status, built.stderr).toBe(0);
    const stream = marquee(["demo-data", "--events", "200", "--seed", "exe"]);
    const r = spawnSync(exe, ["sync", "--from", "-", "--db", join(dir, "exe.db"), "--json"], {
      cwd: dir,
      input: stream.stdout,
      encoding: "utf8",
      env: { ...process.env, MARQUEE_DB: "" },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      source: "stdin",
      applied: stream.stdout.split("\n").filter(Boolean).length,
      writerThread: true,
    });
  }, 60_000);

  it("fails a bad line with its number and a non-zero exit, keeping earlier batches", async () => {
    const db = join(dir, "bad.db");
    const good = [
      venueRecord(1),
      eventRecord(10, 1, "2030-01-01T20:00:00Z"),
      eventRecord(11, 1, "2030-01-02T20:00:00Z"),
    ];
    const file = join(dir, "bad.ndjson");
    writeFileSync(file, [...good.map((r) => JSON.stringify(r)), '{"type":"event"}'].join("\n"));
    const r = marquee(["sync", "--from", file, "--db", db, "--batch-size", "2"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim().split("\n")).toEqual([
      `marquee sync: ${file}: line 4: seq: missing; 2 records before it stay applied (watermark ${good[1].seq})`,
    ]);
    expect((await stats(db)).watermark).toBe(good[1].seq);
    const json = marquee(["sync", "--from", file, "--db", db, "--json"]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ skipped: 2, applied: 0, error: { line: 4 } });
  });

  const badFlags: Array<[string, string[], RegExp]> = [
    ["sync without --from", ["sync"], /^marquee sync: --from SRC is required/],
    ["an unknown flag", ["sync", "--from", "x", "--fast"], /^marquee sync: Unknown option '--fast'/],
    [
      "a bad batch size",
      ["sync", "--from", "x", "--batch-size", "0"],
      /^marquee sync: --batch-size must be an integer >= 1/,
    ],
    [
      "an unknown priority",
      ["sync", "--from", "x", "--priority", "high"],
      /^marquee sync: --priority must be one of background, normal/,
    ],
    [
      "a missing file",
      ["sync", "--from", "/nonexistent/records.ndjson"],
      /^marquee sync: .*no such file or directory/i,
    ],
    [
      "an unreachable PostgreSQL source",
      ["sync", "--from", "postgres://u:p@127.0.0.1:1/upstream"],
      /^marquee sync: cannot reach PostgreSQL at 127\.0\.0\.1:1\/upstream \(ECONNREFUSED\)/,
    ],
    [
      "an unreachable http source",
      ["sync", "--from", "http://127.0.0.1:1/records.ndjson"],
      /^marquee sync: cannot fetch http:\/\/127\.0\.0\.1:1\/records\.ndjson/,
    ],
    [
      "--slot with a file",
      ["sync", "--from", "x", "--slot", "s"],
      /^marquee sync: --slot needs a postgres:\/\/ source$/m,
    ],
    [
      "--drop-slot and --thread-rows with a file",
      ["sync", "--from", "x", "--drop-slot", "--thread-rows", "5"],
      /^marquee sync: --drop-slot and --thread-rows need a postgres:\/\/ source$/m,
    ],
    [
      "demo-data --events abc",
      ["demo-data", "--events", "abc"],
      /^marquee demo-data: --events must be an integer >= 1/,
    ],
    ["demo-data --events 0", ["demo-data", "--events", "0"], /^marquee demo-data: --events must be an integer >= 1/],
    [
      "demo-data --anchor",
      ["demo-data", "--anchor", "2026-02-30"],
      /^marquee demo-data: --anchor: anchor must be a date YYYY-MM-DD/,
    ],
    ["demo-data positional", ["demo-data", "extra"], /^marquee demo-data: Unexpected argument 'extra'/],
  ];
  for (const [what, args, message] of badFlags) {
    it(`rejects ${what} with one line and a non-zero exit`, () => {
      const r = marquee([...args, "--db", join(dir, "flags.db")]);
      expect(r.code).not.toBe(0);
      expect(r.stdout).toBe("");
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toMatch(message);
    });
  }

  it("prints helpful --help for both commands", () => {
    for (const [cmd, flag] of [
      ["sync", "--follow"],
      ["demo-data", "--anchor"],
    ]) {
      const r = marquee([cmd, "--help"]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`usage: marquee ${cmd}`);
      expect(r.stdout).toContain(flag);
    }
  });

  it("Ctrl-C during a long sync commits what was read, refreshes the snapshot and exits 130", async () => {
    const file = join(dir, "long.ndjson");
    const db = join(dir, "long.db");
    expect(marquee(["demo-data", "--events", "40000", "--seed", "long", "--out", file]).code).toBe(0);
    const child = spawn(BUN, ["server/main.ts", "sync", "--from", file, "--db", db, "--batch-size", "500", "--json"], {
      cwd: ROOT,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
    for (let i = 0; i < 400 && child.exitCode === null && (await peekWatermark(db)) === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    child.kill("SIGINT");
    expect(await exited).toBe(130);
    const summary = JSON.parse(stdout);
    expect(stderr).toBe(`marquee sync: interrupted at line ${summary.position.line}; run it again to resume\n`);
    const total = readFileSync(file, "utf8").split("\n").length - 1;
    expect(summary.position.line).toBeLessThan(total);
    const s = await stats(db);
    expect(s.watermark).toBe(summary.watermark);
    expect(s.snapshotEvents).toBe(summary.snapshotEvents);
    const rest = marquee(["sync", "--from", file, "--db", db, "--json"]);
    expect(JSON.parse(rest.stdout)).toMatchObject({
      skipped: summary.watermark,
      applied: total - summary.watermark,
      watermark: total,
    });
  });

  /**
   * Scheduling policy of each thread of `pid` (sched(7): 0 normal, 5 idle), the main thread first.
   * A thread that ends between the listing and the read is left out: the command restarts itself
   * in place as it begins (server/cli/allocator.ts), which ends every thread but the main one.
   */
  function threadPolicies(pid: number): number[] {
    const policy = (tid: string) => {
      let stat: string;
      try {
        stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      } catch {
        return null;
      }
      return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[38]); // field 41, policy
    };
    const others = readdirSync(`/proc/${pid}/task`).filter((tid) => tid !== String(pid));
    return [policy(String(pid)), ...others.map(policy)].filter((p): p is number => p !== null);
  }

  for (const [flags, policy] of [
    [[], 5],
    [["--priority", "normal"], 0],
  ] as const) {
    it(`${flags.length ? flags.join(" ") : "by default"}: every thread of the sync runs ${policy === 5 ? "in the idle class" : "as started"}`, async () => {
      // stdin keeps the process waiting, with its writer thread started, until it is closed.
      const db = join(dir, `priority-${policy}.db`);
      const child = spawn(BUN, ["server/main.ts", "sync", "--from", "-", "--db", db, "--json", ...flags], {
        cwd: ROOT,
      });
      const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
      let seen: number[] = [];
      // Waiting on stdin, past the point where the priority is set (the replica exists), with
      // the writer thread started (threads of the runtime and the writer: more than a few).
      for (let i = 0; i < 200; i++) {
        await new Promise((r) => setTimeout(r, 25));
        seen = threadPolicies(child.pid!);
        if (existsSync(db) && seen.length > 4 && seen.every((p) => p === policy)) break;
      }
      expect(seen.length).toBeGreaterThan(4);
      expect(seen).toEqual(seen.map(() => policy));
      child.stdin.end(`${JSON.stringify(venueRecord(1))}\n`);
      expect(await exited).toBe(0);
    });
  }

  it("--follow applies appended lines until SIGINT, then prints its summary", async () => {
    const file = join(dir, "follow.ndjson");
    const db = join(dir, "follow.db");
    writeFileSync(
      file,
      [venueRecord(1), eventRecord(21, 1, "2030-01-01T20:00:00Z")].map((r) => `${JSON.stringify(r)}\n`).join(""),
    );
    const env = { ...process.env };
    delete env.MIMALLOC_PURGE_DELAY;
    const child = spawn(BUN, ["server/main.ts", "sync", "--from", file, "--db", db, "--follow", "--json"], {
      cwd: ROOT,
      env,
    });
    let stdout = "";
    child.stdout.on("data", (d) => (stdout += d));
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
    const waitFor = async (seq: number) => {
      for (let i = 0; i < 300 && (await peekWatermark(db)) < seq; i++) await new Promise((r) => setTimeout(r, 25));
      expect(await peekWatermark(db)).toBe(seq);
    };
    const late = eventRecord(22, 1, "2030-01-02T20:00:00Z");
    await waitFor(late.seq - 1);
    // The bulk command restarted itself in place with the allocator keeping freed memory
    // (server/cli/allocator.ts): the same process, which SIGINT below still reaches.
    const environ = readFileSync(`/proc/${child.pid}/environ`, "utf8").split("\0");
    expect(environ).toContain("MIMALLOC_PURGE_DELAY=-1");
    appendFileSync(file, `${JSON.stringify(late)}\n`);
    await waitFor(late.seq);
    child.kill("SIGINT");
    expect(await exited).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ records: 3, applied: 3, watermark: late.seq, snapshotEvents: 2 });
  });
});

describe("marquee serve", () => {
  it("--sync-from applies the file at start and what is appended to it later", async () => {
    const file = join(dir, "serve-feed.ndjson");
    const first = [venueRecord(1), eventRecord(31, 1, "2030-01-01T20:00:00Z")];
    writeFileSync(file, first.map((r) => `${JSON.stringify(r)}\n`).join(""));
    const server = await startBunServer(["--sync-from", file, "--sync-interval", "1"]);
    try {
      const health = async () =>
        (await (await server.fetch("/healthz")).json()) as {
          watermark: number;
          events: number;
          snapshotEvents: number;
        };
      expect(await health()).toMatchObject({ watermark: first[1].seq, events: 1, snapshotEvents: 1 });
      const later = eventRecord(32, 1, "2030-01-02T20:00:00Z");
      appendFileSync(file, `${JSON.stringify(later)}\n`);
      let h = await health();
      for (let i = 0; i < 100 && h.snapshotEvents < 2; i++) {
        await new Promise((r) => setTimeout(r, 50));
        h = await health();
      }
      expect(h).toMatchObject({ watermark: later.seq, events: 2, snapshotEvents: 2 });
    } finally {
      await server.close();
    }
  });

  it("--demo loads the demo data into an empty replica, prints working keys once, and not again", async () => {
    const db = join(dir, "demo", "marquee.db");
    const port = await freePort();
    const start = () => {
      const child = spawn(
        BUN,
        ["server/main.ts", "serve", "--demo", "--port", String(port), "--host", "127.0.0.1", "--db", db],
        {
          cwd: ROOT,
          env: { ...process.env, MARQUEE_SECRET: "", MARQUEE_DB: "" },
        },
      );
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      child.stderr.on("data", (d) => (out += d));
      return { child, out: () => out };
    };
    const stop = async (child: ReturnType<typeof start>["child"]) => {
      // A server that failed to start has exited already: its exit event will not come again.
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    };
    const base = `http://127.0.0.1:${port}`;
    const first = start();
    try {
      await waitForHealth(base, first.child, first.out);
      const out = first.out();
      expect(out).toMatch(/synced demo data: [\d,]+ records/);
      const keys = Object.fromEntries(
        [...out.matchAll(/^ {2}(\w+) +account \d+ +(mq_\w+)/gm)].map((m) => [m[1], m[2]]),
      );
      expect(Object.keys(keys)).toEqual(expect.arrayContaining(["business", "basic", "enterprise", "trial"]));
      const health = (await (await fetch(`${base}/healthz`)).json()) as { events: number; snapshotEvents: number };
      expect(health.events).toBeGreaterThan(45_000);
      expect(health.snapshotEvents).toBeGreaterThan(40_000);
      const res = await fetch(`${base}/v1/events?state=NY&limit=5`, {
        headers: { authorization: `Bearer ${keys.business}` },
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { data: unknown[] }).data.length).toBe(5);
    } finally {
      await stop(first.child);
    }
    const second = start();
    try {
      await waitForHealth(base, second.child, second.out);
      expect(second.out()).not.toContain("mq_");
    } finally {
      await stop(second.child);
    }
  }, 90_000);
});
