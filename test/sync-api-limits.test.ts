/**
 * The manners of `sync --from-api` (docs/upstream-records.md, A replica of another deployment,
 * Manners), against a real upstream behind a recording proxy: real 429s waited out by their
 * Retry-After, a row budget and a trial allowance never spent below their reserve, 25-row trial
 * pages, refusals ended with the upstream's code in one line, and the key in no output, no `ps`
 * entry and no /healthz field, whether a CLI or a serving process follows the upstream.
 *
 * The upstream's clock is frozen; the rate test moves it on by each 429's Retry-After as the
 * proxy passes the 429 along, so the bucket holds exactly what the retry needs when the replica
 * has waited that long, whatever the load on the machine.
 */
import { spawn } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server as HttpServer } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openReplica } from "../db/replica.ts";
import { BUN, ROOT } from "./harness.ts";
import {
  changeUpstream,
  expectSameAnswers,
  replicaDb,
  replicaDir,
  runSync,
  type Server,
  serveReplica,
  startUpstream,
  type Upstream,
} from "./sync-api-fixtures.ts";

const FAST = { rateSustained: 1_000_000, rateBurst: 1_000_000 };
let up: Upstream;
const servers: Server[] = [];
const dirs: string[] = [];
const proxies: HttpServer[] = [];

beforeAll(async () => {
  up = await startUpstream(5000);
}, 120_000);

afterAll(async () => {
  for (const s of servers) await s.close();
  for (const p of proxies) p.close();
  await up?.server.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Seen {
  at: number;
  query: URLSearchParams;
  status: number;
  code: string | null;
  retryAfter: number | null;
  authorization: string | undefined;
}

/** A proxy in front of the upstream that records every request; `onAnswer` runs before the answer goes back. */
async function startProxy(onAnswer?: (seen: Seen) => Promise<void>): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer(async (req, res) => {
    const at = Date.now();
    const answer = await fetch(`${up.server.baseUrl}${req.url}`, {
      headers: req.headers.authorization ? { authorization: req.headers.authorization } : {},
    });
    const body = Buffer.from(await answer.arrayBuffer());
    let code: string | null = null;
    if (answer.status !== 200) code = (JSON.parse(body.toString()) as { error: { code: string } }).error.code;
    const retryAfter = answer.headers.get("retry-after");
    const s: Seen = {
      at,
      query: new URL(req.url!, "http://x").searchParams,
      status: answer.status,
      code,
      retryAfter: retryAfter === null ? null : Number(retryAfter),
      authorization: req.headers.authorization,
    };
    seen.push(s);
    await onAnswer?.(s);
    const headers = Object.fromEntries(
      [...answer.headers].filter(([k]) => !/^(content-encoding|content-length)$/i.test(k)),
    );
    res.writeHead(answer.status, headers).end(body);
  });
  proxies.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, seen };
}

function newReplica(): string {
  const dir = replicaDir();
  dirs.push(dir);
  return dir;
}

const head = (key: string) =>
  up.client.fetch("/v1/events", { method: "HEAD", headers: { authorization: `Bearer ${key}` } });

describe("manners", () => {
  it("waits out each real 429 by its Retry-After, and finishes the pass", async () => {
    const key = await up.client.keyFor({
      email: "rate@example.com",
      plan: "business",
      rateSustained: 60,
      rateBurst: 3,
    });
    const proxy = await startProxy(async (s) => {
      // The bucket refills by the test clock: by the time the replica has waited, it has.
      if (s.code === "rate_limited") await up.client.advance(s.retryAfter!);
    });
    for (let i = 0; i < 3; i++) expect((await head(key)).status).toBe(200); // the bucket, emptied
    const dir = newReplica();
    const run = await runSync(
      ["--from-api", `${proxy.url}/v1/events?state=NY&city=New%20York`, "--db", replicaDb(dir)],
      { MARQUEE_UPSTREAM_KEY: key },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.passes[0].rateLimited).toBeGreaterThanOrEqual(1);
    const limited = proxy.seen.flatMap((s, i) => (s.code === "rate_limited" ? [i] : []));
    expect(limited.length).toBe(run.passes[0].rateLimited);
    for (const i of limited) {
      const next = proxy.seen[i + 1];
      // Not one request before the Retry-After has passed, and then the bucket admits it (a
      // window past the horizon is then refused for its dates, as it is meant to be).
      expect(next.at - proxy.seen[i].at).toBeGreaterThanOrEqual(proxy.seen[i].retryAfter! * 1000 - 20);
      expect(next.query.toString()).toBe(proxy.seen[i].query.toString());
      expect(next.status).not.toBe(429);
    }
    expect(run.stderr).toMatch(/rate_limited; waiting 1 s \(Retry-After\)/);
    expect(proxy.seen.every((s) => s.authorization === `Bearer ${key}`)).toBe(true);
    const replica = await serveReplica(dir, up.now, [], {}, FAST);
    servers.push(replica.server);
    const upstreamKey = await up.client.keyFor({ email: "reader@example.com", plan: "business", ...FAST });
    await expectSameAnswers({ client: up.client, key: upstreamKey }, replica, "state=NY&city=New%20York&limit=20");
  }, 90_000);

  it("stops a pass at the row budget's reserve and removes nothing", async () => {
    const key = await up.client.keyFor({ email: "budget@example.com", plan: "enterprise", rowBudget: 300, ...FAST });
    const run = await runSync(["--from-api", `${up.server.baseUrl}/v1/events`, "--db", replicaDb(newReplica())], {
      MARQUEE_UPSTREAM_KEY: key,
    });
    expect(run.code).toBe(1);
    expect(run.passes[0]).toMatchObject({ complete: false, removed: 0, cutShort: { reason: "budget" }, rows: 270 });
    // 10 % of the 300 rows left when the pass began stay unspent.
    expect((await head(key)).headers.get("x-rowbudget-remaining")).toBe("30");
    const quarter = await runSync(
      ["--from-api", `${up.server.baseUrl}/v1/events`, "--budget-reserve", "0.5", "--db", replicaDb(newReplica())],
      { MARQUEE_UPSTREAM_KEY: key },
    );
    expect(quarter.passes[0]).toMatchObject({ complete: false, cutShort: { reason: "budget" }, rows: 15 });
    expect((await head(key)).headers.get("x-rowbudget-remaining")).toBe("15");
  }, 60_000);

  it("walks a trial in pages of 25 and stops with a tenth of the 1,000 rows unspent", async () => {
    const key = await up.client.keyFor({
      email: "trial@example.com",
      plan: "none",
      verified: true,
      hadSubscription: false,
    });
    const proxy = await startProxy();
    const run = await runSync(["--from-api", `${proxy.url}/v1/events`, "--db", replicaDb(newReplica())], {
      MARQUEE_UPSTREAM_KEY: key,
    });
    expect(run.code).toBe(1);
    expect(run.passes[0]).toMatchObject({ complete: false, cutShort: { reason: "budget" }, rows: 900 });
    const answered = proxy.seen.filter((s) => s.status === 200);
    expect(answered[0].query.get("limit")).toBe("1");
    expect(answered.slice(1).every((s) => Number(s.query.get("limit")) <= 25)).toBe(true);
    expect((await head(key)).headers.get("x-trial-rowbudget-remaining")).toBe("100");
  }, 60_000);

  it.each([
    ["401 invalid_api_key", async () => "mq_live_00000000000000000000000000000000000"],
    [
      "402 subscription_required",
      () => up.client.keyFor({ email: "lapsed@example.com", plan: "none", verified: true, hadSubscription: true }),
    ],
    [
      "403 account_not_provisioned",
      () => up.client.keyFor({ email: "np@example.com", plan: "business", policy: "missing" }),
    ],
  ])("stops on %s with the upstream's code and message in one line", async (expected, makeKey) => {
    const key = await makeKey();
    const run = await runSync(
      ["--from-api", `${up.server.baseUrl}/v1/events?state=CA`, "--db", replicaDb(newReplica())],
      {
        MARQUEE_UPSTREAM_KEY: key,
      },
    );
    expect(run.code).toBe(1);
    expect(run.passes[0]).toMatchObject({ complete: false, cutShort: { reason: "refused" }, removed: 0 });
    const lines = run.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^marquee sync: the upstream refused: ${expected}: \\S`));
    expect(run.stdout + run.stderr).not.toContain(key);
  });

  it("refuses a scope URL that would be malformed upstream, or holds a key, before sending anything", async () => {
    const proxy = await startProxy();
    const key = "mq_live_SECRETSECRETSECRETSECRETSECRETSECRET";
    for (const [filters, message] of [
      ["state=XX", /invalid_state/],
      ["limit=100", /leave `limit` out/],
      ["starts_after=2030-01-01", /leave `starts_after` out/],
      ["sate=CA", /`sate` is not a filter/],
      ["page=2", /unsupported|not supported/],
      ["lat=40&lng=-74", /invalid_radius/],
      ["exclude_sold_out=yes", /invalid_exclude_sold_out/],
    ] as const) {
      const run = await runSync(["--from-api", `${proxy.url}/v1/events?${filters}`, "--db", replicaDb(newReplica())], {
        MARQUEE_UPSTREAM_KEY: key,
      });
      expect(run.code, filters).toBe(2);
      expect(run.stderr, filters).toMatch(message);
    }
    const inUrl = await runSync(
      ["--from-api", `${proxy.url.replace("//", `//u:${key}@`)}/v1/events`, "--db", replicaDb(newReplica())],
      {},
    );
    expect(inUrl.code).toBe(2);
    expect(inUrl.stderr).toMatch(/never in the URL/);
    expect(inUrl.stderr).not.toContain(key);
    expect(proxy.seen).toHaveLength(0);
  });
});

describe("a signal", () => {
  it("cuts a pass short: it removes nothing and exits 130", async () => {
    const key = await up.client.keyFor({ email: "signal@example.com", plan: "business", ...FAST });
    const dir = newReplica();
    const scope = `${up.server.baseUrl}/v1/events?state=TX`;
    const first = await runSync(["--from-api", scope, "--db", replicaDb(dir)], { MARQUEE_UPSTREAM_KEY: key });
    expect(first.code, first.stderr).toBe(0);
    const gone = (await (await up.client.get("/v1/events?state=TX&limit=1", key)).json()) as {
      data: Array<{ id: number }>;
    };
    await changeUpstream(up, [{ type: "delete", entity: "event", id: gone.data[0].id }]);

    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    const proxy = await startProxy(async (s) => {
      if (s.status === 200) await held; // the pass's first page waits for the signal
    });
    const child = spawn(
      BUN,
      [
        join(ROOT, "server/main.ts"),
        "sync",
        "--json",
        "--from-api",
        `${proxy.url}/v1/events?state=TX`,
        "--db",
        replicaDb(dir),
      ],
      { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, MARQUEE_UPSTREAM_KEY: key } },
    );
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    const exited = new Promise<number | null>((r) => child.on("close", r));
    const deadline = Date.now() + 20_000;
    while (!proxy.seen.some((s) => s.status === 200) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    child.kill("SIGTERM");
    expect(await exited).toBe(130);
    release();
    const summary = JSON.parse(out.trim().split("\n").at(-1)!) as { cutShort: { reason: string }; removed: number };
    expect(summary).toMatchObject({ cutShort: { reason: "signal" }, removed: 0 });
    const replica = await openReplica(replicaDb(dir));
    try {
      expect(replica.prepare("SELECT id FROM events WHERE id = $id").get({ id: gone.data[0].id })).toBeDefined();
    } finally {
      replica.close();
    }
  }, 60_000);
});

describe("the key stays secret", () => {
  it("in a following CLI: not in its arguments, its output or its summaries", async () => {
    const key = await up.client.keyFor({ email: "follow@example.com", plan: "business", ...FAST });
    const dir = newReplica();
    const keyFile = join(dir, "upstream.key");
    writeFileSync(keyFile, `${key}\n`);
    const child = spawn(
      BUN,
      [
        join(ROOT, "server/main.ts"),
        "sync",
        "--from-api",
        `${up.server.baseUrl}/v1/events?state=CA`,
        "--upstream-key-file",
        keyFile,
        "--follow",
        "--interval",
        "3",
        "--json",
        "--db",
        replicaDb(dir),
      ],
      { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, MARQUEE_UPSTREAM_KEY: "" } },
    );
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const deadline = Date.now() + 30_000;
    while (!out.includes('"complete":true') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(out).toContain('"complete":true'); // a pass, then it waits for the next
    expect(readFileSync(`/proc/${child.pid}/cmdline`, "utf8")).not.toContain(key);
    const exited = new Promise<number | null>((r) => child.on("close", r));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(out).not.toContain(key);
  }, 60_000);

  it("in a serving process following the upstream: /healthz shows the last pass, never the key", async () => {
    const key = await up.client.keyFor({ email: "serve@example.com", plan: "business", ...FAST });
    const dir = newReplica();
    const replica = await serveReplica(
      dir,
      up.now,
      ["--sync-from-api", `${up.server.baseUrl}/v1/events?state=CA&city=Los%20Angeles`, "--sync-interval", "1"],
      { MARQUEE_UPSTREAM_KEY: key },
      FAST,
    );
    servers.push(replica.server);
    let health = "";
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      health = await (await replica.client.get("/healthz")).text();
      if ((JSON.parse(health) as { upstream: { lastPass: unknown } }).upstream.lastPass) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const upstream = (
      JSON.parse(health) as {
        upstream: { kind: string; source: string; lastPass: { rows: number; ageSeconds: number } };
      }
    ).upstream;
    expect(upstream).toMatchObject({
      kind: "api",
      source: `${up.server.baseUrl}/v1/events?state=CA&city=Los%20Angeles`,
    });
    expect(upstream.lastPass.rows).toBeGreaterThan(0);
    expect(typeof upstream.lastPass.ageSeconds).toBe("number");
    expect(health).not.toContain(key);
    const child = (replica.server as Server & { child: { pid: number } }).child;
    expect(readFileSync(`/proc/${child.pid}/cmdline`, "utf8")).not.toContain(key);
    const upstreamKey = await up.client.keyFor({ email: "reader2@example.com", plan: "business", ...FAST });
    await expectSameAnswers({ client: up.client, key: upstreamKey }, replica, "city=Los%20Angeles&limit=10");
    expect(replica.server.output()).not.toContain(key);
  }, 60_000);
});
