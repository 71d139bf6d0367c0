/**
 * `marquee/testing`: a private Marquee for each test file (README "Use Marquee in your tests"; docs/testing.md).
 *
 * `startMarquee()` spawns `marquee serve --test-mode` on the Bun that comes with the package, on
 * its own free loopback port with its own replica and ledger in a new folder under the OS temp
 * folder, and returns helpers that drive the test-mode HTTP API (docs/api.md "Test mode"). That
 * API is the only way in: the helpers do nothing a test could not do with `fetch`.
 *
 * Spawning Bun was measured against serving in-process on Node (better-sqlite3) and starts
 * faster while serving through the same code path as `marquee serve` (docs/operations.md, "How it runs, and why that way").
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
/**
 * Codes `faults.add` injects (docs/api.md, Test mode, Faults): every code `GET /v1/events` and
 * `POST /v1/ticket-handoffs` answer with, plus `delay` and `reset`.
 */
export type FaultCode =
  | "invalid_api_key"
  | "subscription_required"
  | "trial_expired"
  | "trial_exhausted"
  | "email_verification_required"
  | "feature_not_in_plan"
  | "lookahead_not_in_plan"
  | "account_not_provisioned"
  | "trial_capacity_reserved"
  | "rate_limited"
  | "row_budget_exhausted"
  | "unsupported_pagination"
  | "invalid_limit"
  | "invalid_date"
  | "invalid_date_range"
  | "invalid_cursor"
  | "invalid_state"
  | "invalid_source"
  | "invalid_exclude_aggregators"
  | "invalid_exclude_sold_out"
  | "invalid_include_centroids"
  | "invalid_coordinates"
  | "invalid_radius"
  | "invalid_polygon"
  | "conflicting_geo_filters"
  | "rate_limit_unavailable"
  | "policy_unavailable"
  | "trial_unavailable"
  | "internal_error"
  | "invalid_request"
  | "event_unavailable"
  | "ticket_link_unavailable"
  | "rate_limit_exceeded"
  | "handoff_unavailable"
  | "delay"
  | "reset";

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

/** `createAccount`'s answer: the new account, and one key of it (shown once). */
export interface CreatedAccount {
  accountId: number;
  keyId: number;
  key: string;
}

/** A fault to arm (`POST /_test/faults`). */
export interface FaultOptions {
  code: FaultCode;
  /** Requests it fails (default 1). */
  times?: number;
  /** Only requests with this key (`CreatedAccount.keyId`). */
  keyId?: number;
  /** Only requests whose path starts with this, e.g. "/v1/events". */
  path?: string;
  /** With `code: "delay"`: how long the answer waits, in ms. */
  delayMs?: number;
}

/** An armed fault, with the uses it has left. */
export interface Fault {
  id: number;
  code: FaultCode;
  times: number;
  keyId: number | null;
  path: string | null;
  delayMs: number | null;
}

/** `account(id)`: the account and what the request path counts for it (`GET /_test/accounts/{id}`). */
export interface AccountState {
  id: number;
  email: string;
  plan: Plan;
  verified: boolean;
  hadSubscription: boolean;
  rowBudget: number | null;
  rateSustained: number | null;
  rateBurst: number | null;
  policy: "ok" | "missing" | "stale" | "foreign";
  keyLimit: number;
  createdMs: number;
  updatedMs: number;
  /** What a request is served as: its effective plan, "trial", or null. */
  access: Exclude<Plan, "none"> | "trial" | null;
  trial: {
    state: "not_started" | "active" | "expired" | "exhausted";
    startedAt: string | null;
    expiresAt: string | null;
    rowsUsed: number;
    rowsLeft: number;
  } | null;
  rowsUsed24h: number;
  rowsLeft24h: number | null;
  requestRate: Array<{
    bucket: string;
    keyId: number | null;
    capacity: number;
    refillPerMinute: number;
    tokens: number;
    fullAt: string;
  }>;
  keys: Array<{
    id: number;
    kind: KeyKind;
    prefix: string;
    label: string | null;
    issuedBy: "operator" | "owner";
    createdAt: string;
    revokedAt: string | null;
  }>;
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
  /** Creates an account and a key for it: their ids, and the key (shown once). */
  createAccount(options?: KeyOptions): Promise<CreatedAccount>;
  /** The account and what the request path counts for it: trial, rows, request-rate tokens, keys. */
  account(accountId: number): Promise<AccountState>;
  /**
   * Applies upstream records (NDJSON text or objects) through the sync path, then refreshes the
   * snapshot. A record without `seq` gets the next one; one at or below the replica's watermark
   * rejects the whole call (409 `stale_records`) and nothing is applied.
   */
  applyRecords(records: string | object[]): Promise<ApplyResult>;
  readonly clock: {
    /** Freezes the clock at this instant (ISO 8601 or `YYYY-MM-DD`). */
    set(instant: string | Date): Promise<ClockState>;
    /** Moves the clock forward (or back, when negative) by this many seconds; freezes it. */
    advance(seconds: number): Promise<ClockState>;
    now(): Promise<ClockState>;
  };
  /** The next `times` requests that can be answered with `code` fail with it (`faults.add({ code, times })`). */
  fault(code: FaultCode, times?: number): Promise<void>;
  readonly faults: {
    /** Arms a fault: a code, optionally scoped to a key and a path prefix, or a delay or a reset. */
    add(fault: FaultOptions): Promise<Fault>;
    /** Armed faults in arming order, with the uses each has left. */
    list(): Promise<Fault[]>;
    /** Disarms every fault; resolves to how many there were. */
    clear(): Promise<number>;
  };
  /**
   * Empties the ledger (accounts, keys, usage, handoffs) and pending faults; keeps the replica
   * unless `replica: true`, which empties it too (venues, events, snapshot, watermark).
   */
  reset(options?: { replica?: boolean }): Promise<void>;
  /** The last requests the server answered (at most `limit`, all it keeps by default: 1,000), oldest first. */
  requests(options?: { limit?: number }): Promise<JournalEntry[]>;
  /** Empties the request journal. */
  clearRequests(): Promise<void>;
  /** Closes the port and removes the temporary files. Safe to call twice; every other method then rejects. */
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
  if (!res.ok) throw new Error(`marquee/testing: ${method} ${path} → ${res.status} ${refusal(text)}`);
  return text ? JSON.parse(text) : undefined;
}

/** A refusal's `code: message` when it is the test-mode error envelope, else its text. */
function refusal(text: string): string {
  try {
    const { error } = JSON.parse(text);
    if (typeof error?.code === "string" && typeof error?.message === "string") return `${error.code}: ${error.message}`;
  } catch {
    // not JSON: the text as it is
  }
  return text;
}

const STOPPED = "marquee/testing: this Marquee instance is stopped";

/** `target` with every method (and those of its objects) rejecting once `stopped()`, except `stop`. */
function guarded<T extends object>(target: T, stopped: () => boolean): T {
  for (const [name, value] of Object.entries(target)) {
    if (name === "stop") continue;
    if (typeof value === "function") {
      (target as Record<string, unknown>)[name] = (...args: unknown[]) =>
        stopped() ? Promise.reject(new Error(STOPPED)) : value(...args);
    } else if (value && typeof value === "object") {
      guarded(value, stopped);
    }
  }
  return target;
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

  const createAccount = async (o: KeyOptions = {}): Promise<CreatedAccount> => {
    const { kind = "live", plan = "business", email, ...fields } = o;
    const account = await post("/_test/accounts", {
      email: email ?? `test-${++accounts}@example.com`,
      plan,
      ...fields,
    });
    const { id, key } = await post(`/_test/accounts/${account.id}/keys`, { kind });
    return { accountId: account.id, keyId: id, key };
  };

  const marquee: Marquee = {
    url,
    createKey: async (o) => (await createAccount(o)).key,
    createAccount,
    account: (accountId) => call(url, `/_test/accounts/${accountId}`, "GET"),
    applyRecords: (records) => apply(recordsText(records)),
    clock: {
      set: (instant) => post("/_test/clock", { set: instant instanceof Date ? instant.toISOString() : instant }),
      advance: (seconds) => post("/_test/clock", { advanceSeconds: seconds }),
      now: () => call(url, "/_test/clock", "GET"),
    },
    async fault(code, times = 1) {
      await post("/_test/faults", { code, times });
    },
    faults: {
      add: (fault) => post("/_test/faults", fault),
      list: async () => (await call(url, "/_test/faults", "GET")).faults,
      clear: async () => (await call(url, "/_test/faults", "DELETE")).cleared,
    },
    async reset(options = {}) {
      await post("/_test/reset", options.replica === undefined ? {} : { replica: options.replica });
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

  guarded(marquee, () => stopped !== undefined);

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
