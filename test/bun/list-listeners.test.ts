// The list endpoint through both of Bun's listeners over one app context (server/listen.ts):
// `Bun.serve`, where the route answers with a Response, and `node:http` (a server on a Redis
// ledger), where it replies in parts written as they are (server/node-http.ts). Both must send
// the same status, the same header fields and byte-identical bodies: a page read for the first
// time (text), the same page again from the kept body (bytes), HEAD, and refusals.
// (`ctx.list.caches` is cleared before each page, so its first read is new to both.)
import { afterAll, beforeAll, expect, it } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp, createRouteTable } from "../../server/app.ts";
import { resolveConfig } from "../../server/config.ts";
import { type AppContext, createContext } from "../../server/context.ts";
import { issueKey } from "../../server/keys.ts";
import { type Listener, listen } from "../../server/listen.ts";
import { demoChunks } from "../../sync/demo/generate.ts";
import { streamSource } from "../../sync/source.ts";
import { syncFrom } from "../../sync/sync-from.ts";
import { NOW_MS } from "../access-fixtures.ts";
import { freePort } from "../net.ts";

let dir: string;
let ctx: AppContext;
let key: string;
const listeners: Listener[] = [];
let bunBase: string;
let nodeBase: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "marquee-listeners-"));
  ctx = await createContext(resolveConfig({ dbPath: join(dir, "marquee.db"), testMode: true }, {}));
  ctx.clock.set(NOW_MS);
  const anchor = new Date(NOW_MS).toISOString().slice(0, 10);
  await syncFrom(ctx.replica, streamSource("demo data", demoChunks({ events: 1_500, seed: "listeners", anchor })), {
    now: ctx.clock.now,
  });
  ctx.replicaWrites.changed();
  const { id } = await ctx.ledger.createAccount(
    { email: "l@example.com", plan: "business", rateSustained: 1_000, rateBurst: 1_000 },
    NOW_MS,
  );
  key = (await issueKey(ctx.ledger, id, "live", NOW_MS)).key;
  const routes = createRouteTable(ctx);
  const app = createApp(ctx, routes);
  const [bunPort, nodePort] = [await freePort(), await freePort()];
  listeners.push(await listen(app, routes, { port: bunPort, hostname: "127.0.0.1" }));
  listeners.push(await listen(app, routes, { port: nodePort, hostname: "127.0.0.1", answersLate: true }));
  bunBase = `http://127.0.0.1:${bunPort}`;
  nodeBase = `http://127.0.0.1:${nodePort}`;
});

afterAll(async () => {
  for (const l of listeners) await l.close();
  ctx?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Got {
  status: number;
  names: string[];
  fixed: Record<string, string | null>;
  body: Uint8Array;
  requestId: string | null;
}

async function get(base: string, path: string, method = "GET"): Promise<Got> {
  const res = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${key}` } });
  const names = [...res.headers.keys()].filter((n) => n !== "date" && n !== "connection" && n !== "keep-alive");
  const fixed: Record<string, string | null> = {};
  for (const n of ["content-type", "cache-control", "content-length", "x-ratelimit-limit", "x-rowbudget-limit"])
    fixed[n] = res.headers.get(n);
  return {
    status: res.status,
    names: names.sort(),
    fixed,
    body: new Uint8Array(await res.arrayBuffer()),
    requestId: res.headers.get("x-request-id"),
  };
}

/** Each listener's answer, one request after the other, so both see the same kept state. */
async function both(path: string, method = "GET", order = [bunBase, nodeBase]): Promise<[Got, Got]> {
  const a = await get(order[0], path, method);
  const b = await get(order[1], path, method);
  return [a, b];
}

function expectSame([a, b]: [Got, Got]): void {
  expect({ status: b.status, names: b.names, fixed: b.fixed }).toEqual({
    status: a.status,
    names: a.names,
    fixed: a.fixed,
  });
  expect(Buffer.from(b.body).equals(Buffer.from(a.body))).toBe(true);
  expect(a.requestId).toBeTruthy();
  expect(b.requestId).toBeTruthy();
  expect(b.requestId).not.toBe(a.requestId);
}

const PAGES = [
  "/v1/events",
  "/v1/events?limit=100",
  "/v1/events?state=NY&limit=7",
  "/v1/events?city=Chicago&state=IL",
  "/v1/events?lat=40.75&lng=-73.99&radius_miles=25",
  "/v1/events?city=Austin&city=Boston", // two cities: no venue is in both, the empty page
  "/v1/events?source=ticketmaster",
];

it("sends the same page through both listeners, read for the first time and again from the kept body", async () => {
  for (const path of PAGES) {
    ctx.list.caches.clear();
    const first = await both(path);
    expect(first[0].status).toBe(200);
    expectSame(first);
    // A millisecond later the default window has moved: the page comes from the kept body, as
    // bytes, with its own cursor (the pair shares it, whichever listener encoded it first).
    ctx.clock.advance(1);
    expectSame(await both(path));
    ctx.clock.advance(1);
    const [b, a] = await both(path, "GET", [nodeBase, bunBase]);
    expectSame([a, b]);
  }
});

it("follows a cursor to the same next page through both listeners", async () => {
  const [page] = await both("/v1/events?limit=5");
  const cursor = (JSON.parse(new TextDecoder().decode(page.body)) as { page: { nextCursor: string } }).page.nextCursor;
  expect(cursor).toBeTruthy();
  const next = await both(`/v1/events?limit=5&cursor=${encodeURIComponent(cursor)}`);
  expect(next[0].status).toBe(200);
  expectSame(next);
});

it("answers HEAD and refusals alike: the same headers, no body for HEAD, the same error envelope", async () => {
  const head = await both("/v1/events?state=TX", "HEAD");
  expect(head[0].status).toBe(200);
  expect(head[1].body.length).toBe(0);
  // Bun.serve adds "content-length: 0" to a HEAD answer without a body, node:http nothing.
  for (const g of head) {
    g.names = g.names.filter((n) => n !== "content-length");
    g.fixed["content-length"] = null;
  }
  expectSame(head);
  const [a, b] = await both("/v1/events?limit=0");
  expect(a.status).toBe(400);
  expect({ status: b.status, names: b.names, fixed: b.fixed }).toEqual({
    status: a.status,
    names: a.names,
    fixed: a.fixed,
  });
  // The envelope names its own request id; apart from it the bodies are the same.
  const text = (g: Got) => new TextDecoder().decode(g.body).replace(g.requestId!, "ID");
  expect(text(b)).toBe(text(a));
});
