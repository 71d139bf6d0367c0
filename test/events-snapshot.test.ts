/**
 * Snapshot, then hydrate (docs/api.md, Serving snapshot): pages are chosen from the
 * serving snapshot and hydrated from live rows. Live changes made after the snapshot — which
 * the HTTP test API cannot produce, since /_test/records refreshes the snapshot — are applied
 * here straight to the replica of an in-process server.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { AppContext } from "../server/context.ts";
import { applyBatch } from "../sync/apply.ts";
import { parseRecordLine } from "../sync/records.ts";
import { Client, type Target } from "./harness.ts";
import { deleteRecord, eventRecord, venueRecord } from "./records.ts";

const NOW = "2030-01-01T00:00:00Z";
const day = (d: number) => new Date(Date.parse(NOW) + d * 86_400_000).toISOString();

let ctx: AppContext;
let c: Client;
let dir: string;

beforeAll(async () => {
  const { createApp } = await import("../server/app.ts");
  const { createContext } = await import("../server/context.ts");
  const { resolveConfig } = await import("../server/config.ts");
  dir = mkdtempSync(join(tmpdir(), "marquee-snapshot-"));
  ctx = await createContext(
    resolveConfig({ dbPath: join(dir, "marquee.db"), testMode: true, baseUrl: "http://marquee.test" }, {}),
  );
  const app = createApp(ctx);
  const target: Target = {
    kind: "in-process",
    baseUrl: "http://marquee.test",
    dir,
    fetch: async (path, init) => app.request(new URL(path, "http://marquee.test").href, init),
    close: async () => {},
  };
  c = new Client(target);
  await c.setClock(NOW);
});

afterAll(() => {
  ctx.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Applies records to live rows only; the snapshot stays as it was. */
function applyLive(records: object[]): void {
  applyBatch(
    ctx.replica,
    records.map((r, i) => parseRecordLine(JSON.stringify(r), i + 1)),
  );
}

interface Page {
  data: Array<{ id: number; isSoldOut: boolean; startDate: string; title: string }>;
  page: { nextCursor: string | null; hasMore: boolean; count: number };
}

async function page(key: string, qs: string): Promise<{ body: Page; headers: Headers }> {
  const res = await c.get(`/v1/events?${qs}`, key);
  expect(res.status).toBe(200);
  return { body: (await res.json()) as Page, headers: res.headers };
}

it("drops rows no longer servable, counts only delivered rows and continues from the last snapshot row", async () => {
  const key = await c.keyFor({ plan: "none", verified: true, hadSubscription: false }); // trial: rows are metered
  await c.records([
    venueRecord(1),
    venueRecord(2),
    ...[1, 2, 3, 4, 5, 6, 7].map((i) => eventRecord(100 + i, i === 5 ? 2 : 1, day(i))),
    eventRecord(108, 1, day(8)),
    eventRecord(109, 1, day(9)),
  ]);
  applyLive([
    eventRecord(101, 1, day(1), { status: "cancelled" }),
    deleteRecord("event", 102),
    eventRecord(103, 1, day(3), { status: "spam" }),
    eventRecord(104, 1, day(4), { duplicateOf: 109 }),
    venueRecord(2, { visible: false }), // hides 105
    eventRecord(106, 1, day(6), { isSoldOut: true, title: "Now sold out" }),
    eventRecord(107, 1, day(200)), // rescheduled out of the window
    eventRecord(110, 1, day(1)), // new since the snapshot: not selectable yet
  ]);

  const first = await page(key, "limit=5");
  expect(first.body.data).toEqual([]);
  expect(first.body.page.count).toBe(0);
  expect(first.body.page.hasMore).toBe(true);
  expect(first.headers.get("x-trial-rowbudget-remaining")).toBe("1000");

  const second = await page(key, `limit=2&cursor=${first.body.page.nextCursor}`);
  expect(second.body.data.map((e) => e.id)).toEqual([106]);
  expect(second.body.data[0]).toMatchObject({ isSoldOut: true, title: "Now sold out" }); // live fields
  expect(second.body.page).toMatchObject({ count: 1, hasMore: true });
  expect(second.headers.get("x-trial-rowbudget-remaining")).toBe("999");

  const third = await page(key, `limit=25&cursor=${second.body.page.nextCursor}`);
  expect(third.body.data.map((e) => e.id)).toEqual([108, 109]);
  expect(third.body.page).toEqual({ nextCursor: null, hasMore: false, count: 2 });

  // A row that no longer satisfies the request's own filters is dropped too.
  const unsold = await page(key, "limit=25&exclude_sold_out=true");
  expect(unsold.body.data.map((e) => e.id)).toEqual([108, 109]);

  // After a refresh, the snapshot agrees with the live rows.
  await c.snapshot();
  const fresh = await page(key, "limit=25");
  expect(fresh.body.data.map((e) => e.id)).toEqual([110, 106, 108, 109]);
});
