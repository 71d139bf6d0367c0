/**
 * Two real Marquee servers for the suites of `sync --from-api` (docs/upstream-records.md, A
 * replica of another deployment): an upstream in test mode holding the demo data set, its clock
 * frozen, and replicas synced from it by the CLI over HTTP, each served by a server of its own
 * with its clock frozen at the same instant, so both answer every query for the same "now".
 */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { demoRecords } from "../sync/demo/generate.ts";
import { BUN, Client, ROOT, startBunServer, type Target } from "./harness.ts";

export type Server = Target & { output: () => string };

export interface Upstream {
  server: Server;
  client: Client;
  /** The frozen "now" of both ends, ms. */
  now: number;
  /** The latest record of every demo event and venue, to change them. */
  events: Map<number, { type: "event"; seq: number; event: Record<string, unknown> }>;
  venues: Map<number, { type: "venue"; seq: number; venue: Record<string, unknown> }>;
  /** The last seq applied upstream. */
  seq: number;
}

/** An upstream with `events` demo events anchored on today (UTC), its clock frozen now. */
export async function startUpstream(events: number): Promise<Upstream> {
  const now = Math.floor(Date.now() / 1000) * 1000;
  const server = (await startBunServer()) as Server;
  const client = new Client(server);
  await client.setClock(new Date(now).toISOString());
  const records = [...demoRecords({ events, seed: "marquee", anchor: new Date(now).toISOString().slice(0, 10) })];
  const upstream: Upstream = { server, client, now, events: new Map(), venues: new Map(), seq: 0 };
  for (const r of records) {
    if (r.type === "event") upstream.events.set((r.event as { id: number }).id, r as never);
    if (r.type === "venue") upstream.venues.set((r.venue as { id: number }).id, r as never);
  }
  await client.records(records);
  upstream.seq = Number(records.at(-1)!.seq);
  return upstream;
}

/** Applies changed records upstream, numbered after the last. */
export async function changeUpstream(up: Upstream, records: Array<Record<string, unknown>>): Promise<void> {
  const numbered: Array<Record<string, unknown>> = records.map((r) => ({ ...r, seq: ++up.seq }));
  await up.client.records(numbered);
  for (const r of numbered) {
    if (r.type === "event") up.events.set((r.event as { id: number }).id, r as never);
    if (r.type === "venue") up.venues.set((r.venue as { id: number }).id, r as never);
  }
}

export interface SyncRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The summary of each pass (`--json`). */
  passes: Array<Record<string, unknown> & { complete: boolean; rows: number; removed: number; upserted: number }>;
}

/** `marquee sync --from-api URL --json …` run to its end, the key in the environment. */
export function runSync(args: string[], env: Record<string, string>): Promise<SyncRun> {
  const child = spawn(BUN, [join(ROOT, "server/main.ts"), "sync", "--json", ...args], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, MARQUEE_DB: "", MARQUEE_UPSTREAM_KEY: "", ...env },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  return new Promise((resolve) =>
    child.on("close", (code) =>
      resolve({
        code,
        stdout,
        stderr,
        passes: stdout
          .split("\n")
          .filter((l) => l.startsWith("{"))
          .map((l) => JSON.parse(l)),
      }),
    ),
  );
}

/** A fresh folder for a replica; its file is `marquee.db`, where startBunServer looks. */
export const replicaDir = () => mkdtempSync(join(tmpdir(), "marquee-api-replica-"));
export const replicaDb = (dir: string) => join(dir, "marquee.db");

/** A server over a replica, its clock frozen at the upstream's now, with a Business key of its own. */
export async function serveReplica(
  dir: string,
  now: number,
  args: string[] = [],
  env: Record<string, string> = {},
  account: Record<string, unknown> = {},
): Promise<{ server: Server; client: Client; key: string }> {
  const server = (await startBunServer(args, dir, { env })) as Server;
  const client = new Client(server);
  await client.setClock(new Date(now).toISOString());
  const key = await client.keyFor({ email: "replica@example.com", plan: "business", ...account });
  return { server, client, key };
}

interface Page {
  data: Array<Record<string, unknown>>;
  page: { nextCursor: string | null; hasMore: boolean; count: number };
}

/** Every page of `query`, the cursor followed to the end. */
export async function walkPages(client: Client, key: string, query: string): Promise<Page[]> {
  const pages: Page[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 500; i++) {
    const sep = query ? "&" : "";
    const res = await client.get(
      `/v1/events?${query}${cursor ? `${sep}cursor=${encodeURIComponent(cursor)}` : ""}`,
      key,
    );
    const body = (await res.json()) as Page;
    expect(res.status, `${query}: ${JSON.stringify(body)}`).toBe(200);
    pages.push(body);
    if (!body.page.hasMore) return pages;
    cursor = body.page.nextCursor;
  }
  throw new Error(`${query}: more than 500 pages`);
}

/**
 * The same query walked on both: the same pages, each with the same events (every field) in the
 * same order. The cursors differ (each server signs its own). Returns the events seen.
 */
export async function expectSameAnswers(
  upstream: { client: Client; key: string },
  replica: { client: Client; key: string },
  query: string,
): Promise<number> {
  const [a, b] = await Promise.all([
    walkPages(upstream.client, upstream.key, query),
    walkPages(replica.client, replica.key, query),
  ]);
  const shape = (pages: Page[]) => pages.map((p) => ({ data: p.data, hasMore: p.page.hasMore, count: p.page.count }));
  expect(shape(b), query).toEqual(shape(a));
  return a.reduce((n, p) => n + p.data.length, 0);
}

/** What an error answer says: status, code, message. */
export async function errorOf(res: Response): Promise<{ status: number; code: string; message: string }> {
  const body = (await res.json()) as { error: { code: string; message: string } };
  return { status: res.status, ...body.error };
}
