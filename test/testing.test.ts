/**
 * `marquee/testing` (docs/testing.md, "In a Node or Bun test suite"): each `startMarquee` helper against the
 * test-mode rules it drives, parallel instances, and what `stop()` and a killed parent leave
 * behind. Real Bun servers over real HTTP, each on its own port and temporary folder.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type {
  FaultCode as ContractFault,
  KeyKind as ContractKind,
  Plan as ContractPlan,
  PolicyState,
} from "../db/contract.ts";
import {
  type FaultCode,
  type KeyKind,
  type KeyOptions,
  type Marquee,
  type Plan,
  startMarquee,
} from "../testing/index.ts";
import { eventRecord, venueRecord } from "./records.ts";

// marquee/testing spells its option types out, so its .d.ts stands alone in the package;
// `tsc` fails here when they drift from the server's constants.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const typesMatchTheServer: [
  Same<FaultCode, ContractFault>,
  Same<Plan, ContractPlan>,
  Same<KeyKind, ContractKind>,
  Same<NonNullable<KeyOptions["policy"]>, PolicyState>,
] = [true, true, true, true];
void typesMatchTheServer;

const get = (m: Marquee, path: string, key?: string) =>
  fetch(m.url + path, { headers: key ? { authorization: `Bearer ${key}` } : {}, redirect: "manual" });
const health = async (m: Marquee) =>
  (await (await get(m, "/healthz")).json()) as { events: number; venues: number; now: string };
const code = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;
const refused = (url: string) =>
  fetch(`${url}/healthz`).then(
    () => false,
    () => true,
  );

/** The Vitest example a document shows: the code block after its marker comment naming the file. */
function exampleIn(doc: string, file: string): string | undefined {
  const text = readFileSync(join(import.meta.dirname, "..", doc), "utf8");
  const marker = `<!-- ${file} -->\n\`\`\`ts\n`;
  const at = text.indexOf(marker);
  return at < 0 ? undefined : text.slice(at + marker.length, text.indexOf("```\n", at + marker.length));
}

it.each([
  ["README.md", "test/package/readme-example.ts"],
  ["docs/testing.md", "test/package/testing-example.ts"],
])("the Vitest example of %s is %s, which the suite and `npm run test:package` run", (doc, file) => {
  expect(exampleIn(doc, file)).toBe(readFileSync(join(import.meta.dirname, "..", file), "utf8"));
});

describe("startMarquee", () => {
  let m: Marquee;
  beforeAll(async () => {
    m = await startMarquee({ now: "2030-03-01T12:00:00Z" });
  });
  afterAll(() => m.stop());

  it("serves test mode on a loopback port with an empty replica", async () => {
    expect(m.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await health(m)).toMatchObject({ events: 0, venues: 0 });
    expect((await get(m, "/_test/clock")).status).toBe(200);
  });

  it("`now` freezes the server's clock from the start; clock.set and clock.advance move it", async () => {
    expect(await m.clock.now()).toEqual({ now: "2030-03-01T12:00:00.000Z", frozen: true });
    expect((await health(m)).now).toBe("2030-03-01T12:00:00.000Z");
    expect(await m.clock.advance(3600)).toEqual({ now: "2030-03-01T13:00:00.000Z", frozen: true });
    await m.clock.set(new Date("2030-03-02T00:00:00Z"));
    expect((await health(m)).now).toBe("2030-03-02T00:00:00.000Z");
    await m.clock.set("2030-03-01T12:00:00Z");
    await expect(m.clock.set("not a date")).rejects.toThrow(/400/);
  });

  it("applyRecords takes NDJSON text or objects, goes through the sync path and refreshes the snapshot", async () => {
    const key = await m.createKey({ plan: "business" });
    const ndjson = [venueRecord(51), eventRecord(5101, 51, "2030-03-05T20:00:00Z")]
      .map((r) => JSON.stringify(r))
      .join("\n");
    expect(await m.applyRecords(ndjson)).toMatchObject({ snapshotEvents: 1 });
    expect(await m.applyRecords([eventRecord(5102, 51, "2030-03-06T20:00:00Z")])).toMatchObject({ snapshotEvents: 2 });
    const page = (await (await get(m, "/v1/events", key)).json()) as { data: Array<{ id: number }> };
    expect(page.data.map((e) => e.id)).toEqual([5101, 5102]);
    // A bad record is refused with its line number and nothing of its batch is applied.
    await expect(
      m.applyRecords([eventRecord(5103, 51, "2030-03-07T20:00:00Z"), { type: "event", seq: 1e9 }]),
    ).rejects.toThrow(/400.*line 2/);
    expect((await health(m)).events).toBe(2);
  });

  it("createKey gives a key of each plan and kind the test-mode accounts take", async () => {
    for (const plan of ["basic", "business", "enterprise", "legacy"] as const) {
      const res = await get(m, "/v1/events?limit=1", await m.createKey({ plan }));
      expect(res.status, plan).toBe(200);
    }
    const trial = await get(m, "/v1/events?limit=1", await m.createKey({ plan: "none" }));
    expect(trial.headers.get("x-dataapi-access")).toBe("trial");
    const unverified = await get(m, "/v1/events", await m.createKey({ plan: "none", verified: false }));
    expect([unverified.status, await code(unverified)]).toEqual([403, "email_verification_required"]);
    const builder = await m.createKey({ plan: "business", kind: "builder" });
    expect(builder).toMatch(/^mq_builder_/);
    const handoff = (kind: "builder" | "legacy", key: string) =>
      fetch(`${m.url}/v1/ticket-handoffs`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ event_id: 5101 }),
      }).then((r) => [kind, r.status]);
    expect(await handoff("builder", builder)).toEqual(["builder", 201]);
    expect(await handoff("legacy", await m.createKey({ plan: "legacy", kind: "legacy" }))).toEqual(["legacy", 401]);
    await expect(m.createKey({ plan: "gold" as "basic" })).rejects.toThrow(/400/);
  });

  it("fault(code, times) fails exactly the next `times` requests that reach it", async () => {
    const key = await m.createKey({ plan: "business" });
    await m.fault("policy_unavailable", 2);
    for (let i = 0; i < 2; i++) {
      const res = await get(m, "/v1/events", key);
      expect([res.status, await code(res)]).toEqual([503, "policy_unavailable"]);
    }
    expect((await get(m, "/v1/events", key)).status).toBe(200);
    await expect(m.fault("no_such_fault" as "internal_error")).rejects.toThrow(/400/);
  });

  it("createAccount gives the account and key ids with the key; account(id) reads its state", async () => {
    const created = await m.createAccount({ plan: "none" });
    expect(created).toEqual({ accountId: expect.any(Number), keyId: expect.any(Number), key: expect.any(String) });
    expect((await get(m, "/v1/events?limit=1", created.key)).status).toBe(200);
    const state = await m.account(created.accountId);
    expect(state).toMatchObject({
      id: created.accountId,
      plan: "none",
      access: "trial",
      trial: { state: "active", rowsUsed: 1, rowsLeft: 999 },
      rowsUsed24h: 1,
      requestRate: [{ keyId: null, tokens: 59 }],
      keys: [{ id: created.keyId, kind: "live" }],
    });
    expect(JSON.stringify(state)).not.toContain(created.key);
    await expect(m.account(99_999_999)).rejects.toThrow(/404 invalid_request: no such account/);
  });

  it("faults.add scopes a fault to a key and a path; list shows what is pending; clear disarms", async () => {
    const mine = await m.createAccount({ plan: "business" });
    const other = await m.createKey({ plan: "business" });
    const armed = await m.faults.add({ code: "rate_limited", keyId: mine.keyId, path: "/v1/events", times: 2 });
    expect(armed).toEqual({
      id: armed.id,
      code: "rate_limited",
      times: 2,
      keyId: mine.keyId,
      path: "/v1/events",
      delayMs: null,
    });
    expect((await get(m, "/v1/events", other)).status).toBe(200);
    const res = await get(m, "/v1/events", mine.key);
    expect([res.status, res.headers.get("retry-after"), res.headers.get("x-ratelimit-remaining")]).toEqual([
      429,
      "1",
      "0",
    ]);
    expect(await m.faults.list()).toEqual([{ ...armed, times: 1 }]);
    expect((await m.account(mine.accountId)).requestRate[0].tokens).toBe(60);
    await m.faults.add({ code: "delay", delayMs: 50 });
    expect(await m.faults.clear()).toBe(2);
    expect(await m.faults.list()).toEqual([]);
    await expect(m.faults.add({ code: "delay" })).rejects.toThrow(/400 invalid_request: delayMs/);
  });

  it("reset empties the ledger and pending faults and keeps the replica", async () => {
    const key = await m.createKey({ plan: "business" });
    await m.fault("internal_error", 5);
    await m.reset();
    expect((await get(m, "/v1/events", key)).status).toBe(401);
    const fresh = await m.createKey({ plan: "business" });
    const res = await get(m, "/v1/events", fresh);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { page: { count: number } }).page.count).toBe(2);
  });

  it("applyRecords appends records without seq and rejects stale ones with the server's message", async () => {
    const before = (await health(m)).events;
    const { seq: _, ...unsequenced } = eventRecord(5104, 51, "2030-03-08T20:00:00Z");
    expect(await m.applyRecords([unsequenced])).toMatchObject({ applied: 1 });
    await expect(
      m.applyRecords([eventRecord(5105, 51, "2030-03-09T20:00:00Z"), { ...unsequenced, seq: 1 }]),
    ).rejects.toThrow(/409 stale_records: line 2: seq 1 is not above the replica's watermark \d+/);
    expect((await health(m)).events).toBe(before + 1);
  });
});

describe("a stopped instance", () => {
  it("rejects every method with a message saying so, and stop() stays harmless", async () => {
    const m = await startMarquee();
    await m.stop();
    const calls: Array<[string, () => Promise<unknown>]> = [
      ["createKey", () => m.createKey()],
      ["createAccount", () => m.createAccount()],
      ["account", () => m.account(1)],
      ["applyRecords", () => m.applyRecords([])],
      ["clock.set", () => m.clock.set("2030-01-01")],
      ["clock.advance", () => m.clock.advance(1)],
      ["clock.now", () => m.clock.now()],
      ["fault", () => m.fault("internal_error")],
      ["faults.add", () => m.faults.add({ code: "internal_error" })],
      ["faults.list", () => m.faults.list()],
      ["faults.clear", () => m.faults.clear()],
      ["reset", () => m.reset({ replica: true })],
    ];
    for (const [name, call] of calls) {
      await expect(call(), name).rejects.toThrow("this Marquee instance is stopped");
    }
    await m.stop();
  });
});

describe("startMarquee options", () => {
  it("demoEvents loads that many demo events anchored on `now`'s day, and records come on top", async () => {
    // A started server's stderr reaches the runner's: a healthy one writes nothing there.
    const stderr = vi.spyOn(process.stderr, "write");
    const m = await startMarquee({
      demoEvents: 300,
      now: "2031-07-04T00:00:00Z",
      // Without seq: they follow the demo data's (records at or below its watermark are refused).
      records: [venueRecord(1_000_001), eventRecord(1_000_001, 1_000_001, "2031-07-05T20:00:00Z")].map(
        ({ seq: _, ...record }) => record,
      ),
    });
    try {
      const stats = await health(m);
      expect(stats.events).toBeGreaterThan(250); // the demo stream deletes a few of its own events
      expect(stats.events).toBeLessThanOrEqual(301);
      const key = await m.createKey({ plan: "enterprise" });
      expect((await get(m, "/events/1000001")).status).toBe(200);
      const page = (await (await get(m, "/v1/events?limit=100", key)).json()) as { data: Array<{ startDate: string }> };
      expect(page.data.length).toBeGreaterThan(0);
      // The demo data starts around its anchor day, so the frozen "now" sees it as upcoming.
      expect(Date.parse(page.data[0].startDate)).toBeLessThan(Date.parse("2031-07-20T00:00:00Z"));
      await new Promise((r) => setTimeout(r, 300));
      expect(stderr.mock.calls.map((c) => String(c[0])).join("")).toBe("");
    } finally {
      stderr.mockRestore();
      await m.stop();
    }
  });

  it("rejects options it cannot honour before starting anything", async () => {
    await expect(startMarquee({ demoEvents: -1 })).rejects.toThrow(/demoEvents/);
    await expect(startMarquee({ now: "someday" })).rejects.toThrow(/now/);
  });
});

describe("instances", () => {
  const ours = () => new Set(readdirSync(tmpdir()).filter((n) => n.startsWith("marquee-testing-")));

  it("8 in parallel get their own ports and replicas; stop() closes each port and removes its folder", async () => {
    const before = ours();
    const all = await Promise.all(Array.from({ length: 8 }, () => startMarquee()));
    try {
      expect(new Set(all.map((m) => m.url)).size).toBe(8);
      const started = [...ours()].filter((n) => !before.has(n));
      expect(started).toHaveLength(8);
      await all[3].applyRecords([venueRecord(77), eventRecord(7701, 77, "2040-01-01T00:00:00Z")]);
      const counts = await Promise.all(all.map(async (m) => (await health(m)).events));
      expect(counts).toEqual([0, 0, 0, 1, 0, 0, 0, 0]);
    } finally {
      await Promise.all(all.map((m) => m.stop()));
    }
    expect(await Promise.all(all.map((m) => refused(m.url)))).toEqual(Array(8).fill(true));
    expect([...ours()].filter((n) => !before.has(n))).toEqual([]);
    await all[0].stop(); // a second stop is harmless
  });

  it("parallel instances never share faults or the clock", async () => {
    const [a, b] = await Promise.all([
      startMarquee({ now: "2030-01-01T00:00:00Z" }),
      startMarquee({ now: "2030-01-01T00:00:00Z" }),
    ]);
    try {
      await a.faults.add({ code: "internal_error", times: 3 });
      await a.clock.advance(3600);
      expect(await b.faults.list()).toEqual([]);
      expect((await b.clock.now()).now).toBe("2030-01-01T00:00:00.000Z");
      expect((await get(b, "/v1/events", await b.createKey())).status).toBe(200);
      expect((await get(a, "/v1/events", await a.createKey())).status).toBe(500);
      await b.reset({ replica: true });
      expect(await a.faults.list()).toMatchObject([{ code: "internal_error", times: 2 }]);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it("a test runner killed with SIGKILL takes its server and temporary files with it", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "marquee-orphan-"));
    try {
      const script = `import { startMarquee } from ${JSON.stringify(join(import.meta.dirname, "..", "testing", "index.ts"))};
        const m = await startMarquee({ demoEvents: 100 }); console.log(m.url); setInterval(() => {}, 1000);`;
      // Bun runs the TypeScript source directly; the runner's own folder for temporary files is `tmp`.
      const runner = spawn(join(import.meta.dirname, "..", "node_modules", ".bin", "bun"), ["-e", script], {
        env: { ...process.env, TMPDIR: tmp },
        stdio: ["ignore", "pipe", "inherit"],
      });
      const url = await new Promise<string>((resolve, reject) => {
        let out = "";
        runner.stdout!.on("data", (d) => {
          out += d;
          if (out.includes("\n")) resolve(out.trim());
        });
        runner.once("exit", (c) => reject(new Error(`runner exited (${c})`)));
      });
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(readdirSync(tmp)).toHaveLength(1);
      expect(await refused(url)).toBe(false);
      runner.kill("SIGKILL");
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline && (!(await refused(url)) || readdirSync(tmp).length > 0)) {
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(await refused(url)).toBe(true);
      expect(readdirSync(tmp)).toEqual([]);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it("the folder a test was given is gone once stop() resolves, even for a server that had loaded data", async () => {
    const before = ours();
    const m = await startMarquee({ demoEvents: 100 });
    const mine = [...ours()].filter((d) => !before.has(d));
    expect(mine).toHaveLength(1);
    expect(readdirSync(join(tmpdir(), mine[0])).length).toBeGreaterThan(0);
    await m.stop();
    expect(existsSync(join(tmpdir(), mine[0]))).toBe(false);
    expect(await refused(m.url)).toBe(true);
  });
});
