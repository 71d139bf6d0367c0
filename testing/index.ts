/**
 * `marquee/testing`: a private Marquee for each test file (README "Use Marquee in your tests").
 *
 * `startMarquee()` spawns `marquee serve --test-mode` on the Bun that comes with the package, on
 * its own free loopback port with its own replica and ledger in a new folder under the OS temp
 * folder, and returns helpers that drive the test-mode HTTP API (docs/api.md "Test mode"). That
 * API is the only way in: the helpers do nothing a test could not do with `fetch`.
 *
 * Spawning Bun was measured against serving in-process on Node (better-sqlite3) and starts
 * faster while serving through the same code path as `marquee serve` (README, the measurement).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { BUN_MISSING, BUN_SERVE_ARGS, findBun } from "../bin/find-bun.js";

export type Plan = "none" | "basic" | "business" | "enterprise" | "legacy";
export type KeyKind = "live" | "builder" | "legacy";
export type FaultCode =
  | "policy_unavailable"
  | "rate_limit_unavailable"
  | "trial_unavailable"
  | "internal_error"
  | "handoff_unavailable";

export interface StartOptions {
  /** Fill the replica with this many events of the deterministic demo data set (anchored on `now`'s day, or today). */
  demoEvents?: number;
  /** Upstream records to apply at start: NDJSON text or an array of record objects. */
  records?: string | object[];
  /** Freeze the test clock at this instant (ISO 8601 or `YYYY-MM-DD`) from the start. */
  now?: string;
  /** Seed of the demo data (default "marquee"). */
  demoSeed?: string;
}

export interface KeyOptions {
  /** "none" = no developer plan: a verified account with no prior subscription gets a trial. */
  plan?: Plan;
  /** "live" (default), "builder" or "legacy". */
  kind?: KeyKind;
  email?: string;
  verified?: boolean;
  hadSubscription?: boolean;
  rowBudget?: number | null;
  rateSustained?: number | null;
  rateBurst?: number | null;
  policy?: "ok" | "missing" | "stale" | "foreign";
}

export interface ApplyResult {
  applied: number;
  snapshotEvents: number;
  [field: string]: unknown;
}

export interface ClockState {
  now: string;
  frozen: boolean;
}

/** A request the server answered, as its journal keeps it (docs/api.md, Test mode): never a key or a body. */
export interface JournalEntry {
  time: string;
  requestId: string;
  method: string;
  path: string;
  /** The query string without "?", credential-like values replaced by `[redacted]`. */
  query: string;
  status: number;
  code: string | null;
  keyId: number | null;
  accountId: number | null;
  rows: number;
}

export interface Marquee {
  /** `http://127.0.0.1:<port>`, test mode on. */
  readonly url: string;
  /** Creates an account and returns a key for it (shown once; the server keeps only its digest). */
  createKey(options?: KeyOptions): Promise<string>;
  /** Applies upstream records (NDJSON text or objects) through the sync path, then refreshes the snapshot. */
  applyRecords(records: string | object[]): Promise<ApplyResult>;
  readonly clock: {
    /** Freezes the clock at this instant (ISO 8601 or `YYYY-MM-DD`). */
    set(instant: string | Date): Promise<ClockState>;
    /** Moves the clock forward (or back, when negative) by this many seconds; freezes it. */
    advance(seconds: number): Promise<ClockState>;
    now(): Promise<ClockState>;
  };
  /** The next `times` requests that reach the point where `code` can arise fail with it. */
  fault(code: FaultCode, times?: number): Promise<void>;
  /** Empties the ledger (accounts, keys, usage, handoffs) and pending faults; keeps the replica. */
  reset(): Promise<void>;
  /** The last requests the server answered (at most `limit`, all it keeps by default: 1,000), oldest first. */
  requests(options?: { limit?: number }): Promise<JournalEntry[]>;
  /** Empties the request journal. */
  clearRequests(): Promise<void>;
  /** Closes the port and removes the temporary files. Safe to call twice. */
  stop(): Promise<void>;
}

// testing/index.ts in a clone, dist/testing/index.js in the package: the child sits beside the source.
const HERE = dirname(fileURLToPath(import.meta.url));
const CHILD = [join(HERE, "child.ts"), join(HERE, "..", "..", "testing", "child.ts")].find((p) => existsSync(p))!;
const START_TIMEOUT_MS = 20_000;
const PORT_ATTEMPTS = 3;

/** A loopback port that was free a moment ago; a start that loses the race tries another. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

const recordsText = (records: string | object[]) =>
  typeof records === "string" ? records : `${records.map((r) => JSON.stringify(r)).join("\n")}\n`;

interface DemoSetup {
  events: number;
  anchor: string;
  seed: string;
}

/** The demo data's anchor day: `now`'s day when given, else today. */
function anchorDay(now: string | undefined): string {
  const ms = now === undefined ? Date.now() : Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(now) ? `${now}T00:00:00Z` : now);
  if (Number.isNaN(ms)) throw new Error(`marquee/testing: now must be an ISO 8601 instant or YYYY-MM-DD, got '${now}'`);
  return new Date(ms).toISOString().slice(0, 10);
}

class StartError extends Error {
  constructor(
    message: string,
    readonly portTaken: boolean,
  ) {
    super(message);
  }
}

/** Spawns the child and resolves once it prints that it listens. */
function spawnServer(bun: string, dir: string, port: number, demo: DemoSetup): Promise<ChildProcess> {
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    bun,
    [
      ...BUN_SERVE_ARGS,
      CHILD,
      dir,
      String(demo.events),
      demo.anchor,
      demo.seed,
      "--port",
      String(port),
      "--host",
      "127.0.0.1",
      "--base-url",
      url,
      "--db",
      join(dir, "marquee.db"),
    ],
    // stdin stays an open pipe: the child exits when it closes, i.e. when this process ends.
    {
      cwd: dir,
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, MARQUEE_DB: "", MARQUEE_SECRET: "", MARQUEE_LEDGER: "", PORT: "" },
    },
  );
  // The pipes must not keep a test runner's event loop alive on their own.
  for (const stream of [child.stdin, child.stdout, child.stderr])
    (stream as unknown as { unref?: () => void }).unref?.();
  child.unref();
  return new Promise((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    const onExit = (code: number | null, signal: string | null) => fail(`exited during start-up (${signal ?? code})`);
    const onError = (err: Error) => fail(`could not be spawned (${err.message})`);
    const timer = setTimeout(() => fail(`did not start within ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
    const fail = (why: string) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      const output = (stderr + stdout).trim();
      reject(
        new StartError(
          `marquee/testing: the server ${why}${output ? `: ${output}` : ""}`,
          /EADDRINUSE|in use/i.test(output),
        ),
      );
    };
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
      if (!stdout.includes("Marquee listening on")) return;
      clearTimeout(timer);
      child.off("exit", onExit);
      child.off("error", onError);
      // From here on its progress lines are dropped (a full pipe would block the server) and its
      // errors go to the test runner's stderr, where a failing test's output is shown.
      child.stdout!.removeAllListeners("data").resume();
      child.stderr!.removeAllListeners("data").on("data", (d: string) => process.stderr.write(d));
      resolve(child);
    });
    child.once("error", onError);
    child.once("exit", onExit);
  });
}

/** The test-mode API's JSON; each helper states the type it returns. */
// biome-ignore lint/suspicious/noExplicitAny: an answer is any JSON until a helper narrows it
type Json = any;

async function call(
  url: string,
  path: string,
  method: string,
  body?: string,
  contentType = "application/json",
): Promise<Json> {
  const res = await fetch(url + path, {
    method,
    headers: body === undefined ? {} : { "content-type": contentType },
    body,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`marquee/testing: ${method} ${path} → ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

export async function startMarquee(options: StartOptions = {}): Promise<Marquee> {
  const bun = findBun();
  if (!bun) throw new Error(BUN_MISSING);
  const demo = { events: options.demoEvents ?? 0, anchor: anchorDay(options.now), seed: options.demoSeed ?? "marquee" };
  if (!Number.isInteger(demo.events) || demo.events < 0)
    throw new Error("marquee/testing: demoEvents must be a whole number >= 0");
  const dir = mkdtempSync(join(tmpdir(), "marquee-testing-"));
  let child: ChildProcess | undefined;
  let url = "";
  try {
    for (let attempt = 1; !child; attempt++) {
      const port = await freePort();
      try {
        child = await spawnServer(bun, dir, port, demo);
        url = `http://127.0.0.1:${port}`;
      } catch (err) {
        if (!(err instanceof StartError && err.portTaken) || attempt >= PORT_ATTEMPTS) throw err;
      }
    }
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const running = child;
  const exited = new Promise<void>((resolve) => running.once("exit", () => resolve()));

  const post = (path: string, body: unknown) => call(url, path, "POST", JSON.stringify(body));
  const apply = (text: string) =>
    call(url, "/_test/records", "POST", text, "application/x-ndjson") as Promise<ApplyResult>;
  let accounts = 0;
  let stopped: Promise<void> | undefined;

  const marquee: Marquee = {
    url,
    async createKey(o = {}) {
      const { kind = "live", plan = "business", email, ...fields } = o;
      const account = await post("/_test/accounts", {
        email: email ?? `test-${++accounts}@example.com`,
        plan,
        ...fields,
      });
      const { key } = await post(`/_test/accounts/${account.id}/keys`, { kind });
      return key as string;
    },
    applyRecords: (records) => apply(recordsText(records)),
    clock: {
      set: (instant) => post("/_test/clock", { set: instant instanceof Date ? instant.toISOString() : instant }),
      advance: (seconds) => post("/_test/clock", { advanceSeconds: seconds }),
      now: () => call(url, "/_test/clock", "GET"),
    },
    async fault(code, times = 1) {
      await post("/_test/faults", { code, times });
    },
    async reset() {
      await post("/_test/reset", {});
    },
    async requests(o = {}) {
      const query = o.limit === undefined ? "" : `?limit=${o.limit}`;
      return (await call(url, `/_test/requests${query}`, "GET")).requests as JournalEntry[];
    },
    async clearRequests() {
      await call(url, "/_test/requests", "DELETE");
    },
    stop() {
      stopped ??= (async () => {
        if (running.exitCode === null && running.signalCode === null) {
          running.kill("SIGTERM");
          const timeout = setTimeout(() => running.kill("SIGKILL"), 5_000);
          await exited;
          clearTimeout(timeout);
        }
        running.stdin?.destroy();
        rmSync(dir, { recursive: true, force: true });
      })();
      return stopped;
    },
  };

  try {
    if (options.now !== undefined) {
      await marquee.clock.set(options.now);
      // The demo data's snapshot was taken at the wall clock's now; take it again at the test's.
      if (demo.events > 0) await post("/_test/snapshot", {});
    }
    if (options.records !== undefined) await apply(recordsText(options.records));
  } catch (err) {
    await marquee.stop();
    throw err;
  }
  return marquee;
}
