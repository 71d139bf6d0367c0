/**
 * The date window and lookahead (docs/api.md starts_after/starts_before, "Pagination
 * rules" 4–6, docs/api.md, Listing events): defaults, tier caps, clamps, geo windows, pinned and legacy cursors,
 * a downgrade under a pinned cursor, the polygon plan gate and trial page clamping.
 */
import { beforeAll, expect, it } from "vitest";
import { encodeLegacyCursor } from "../server/cursor.ts";
import { type Client, describeMatrix } from "./harness.ts";
import { eventRecord, venueRecord } from "./records.ts";

const NOW_MS = Date.parse("2030-06-01T00:00:00Z");
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
const day = (d: number) => iso(NOW_MS + d * DAY);
const RATE = { rateSustained: 100_000, rateBurst: 100_000 };

interface Page {
  data: Array<{ id: number; venue: { distanceMiles: number | null } }>;
  page: { nextCursor: string | null; hasMore: boolean; count: number };
}

async function call(c: Client, key: string, qs: string): Promise<{ status: number; code?: string; body: Page }> {
  const res = await c.get(`/v1/events?${qs}`, key);
  const body = await res.json();
  return { status: res.status, code: body.error?.code, body };
}

async function ids(c: Client, key: string, qs: string): Promise<number[]> {
  const r = await call(c, key, qs);
  if (r.status !== 200) throw new Error(`${qs}: ${r.status} ${r.code}`);
  return r.body.data.map((e) => e.id);
}

/** An event id per day offset: id = 1000 + offset. */
const OFFSETS = [1, 2, 29, 31, 89, 91, 95, 364, 366];

describeMatrix("GET /v1/events window and lookahead", (use) => {
  let enterprise: string;
  let business: string;
  let basic: string;
  beforeAll(async () => {
    const c = use();
    await c.setClock(iso(NOW_MS));
    enterprise = await c.keyFor({ plan: "enterprise", ...RATE });
    business = await c.keyFor({ plan: "business", ...RATE });
    basic = await c.keyFor({ plan: "basic", ...RATE });
    await c.records([
      venueRecord(1, { latitude: 37.784, longitude: -122.433 }),
      ...OFFSETS.map((d) => eventRecord(1000 + d, 1, day(d))),
    ]);
  });

  it("defaults to now + 90 days, capped by the tier horizon", async () => {
    const c = use();
    expect(await ids(c, enterprise, "")).toEqual([1001, 1002, 1029, 1031, 1089]);
    expect(await ids(c, business, "")).toEqual([1001, 1002, 1029, 1031, 1089]);
    expect(await ids(c, basic, "")).toEqual([1001, 1002, 1029]);
    expect(await ids(c, basic, `starts_after=${day(20)}`)).toEqual([1029]);
  });

  it("clamps an explicit window to 365 days without a horizon", async () => {
    const c = use();
    expect(await ids(c, enterprise, `starts_before=${day(400)}`)).toEqual([
      1001, 1002, 1029, 1031, 1089, 1091, 1095, 1364,
    ]);
    expect(await ids(c, enterprise, `starts_after=${day(2)}&starts_before=${day(368)}`)).toEqual([
      1002, 1029, 1031, 1089, 1091, 1095, 1364, 1366,
    ]);
  });

  it("answers 403 lookahead_not_in_plan for explicit dates beyond now + horizon", async () => {
    const c = use();
    expect((await call(c, business, `starts_before=${day(90)}`)).status).toBe(200);
    expect((await call(c, business, `starts_after=${day(90)}`)).status).toBe(200);
    for (const qs of [
      `starts_before=${iso(NOW_MS + 90 * DAY + 1)}`,
      `starts_after=${iso(NOW_MS + 90 * DAY + 1)}`,
      `starts_after=${day(95)}&starts_before=${day(96)}`,
    ]) {
      expect(await call(c, business, qs)).toMatchObject({ status: 403, code: "lookahead_not_in_plan" });
    }
    expect(await call(c, basic, `starts_before=${day(31)}`)).toMatchObject({
      status: 403,
      code: "lookahead_not_in_plan",
    });
    // Stage 6 (invalid_date_range) comes before stage 7.
    expect(await call(c, business, `starts_after=${day(200)}&starts_before=${day(100)}`)).toMatchObject({
      status: 400,
      code: "invalid_date_range",
    });
  });

  it("uses 30 days by default and clamps to 90 on geo queries", async () => {
    const c = use();
    const circle = "lat=37.784&lng=-122.433&radius_miles=1";
    const r = await call(c, enterprise, circle);
    expect(r.body.data.map((e) => e.id)).toEqual([1001, 1002, 1029]);
    expect(r.body.data.every((e) => e.venue.distanceMiles === 0)).toBe(true);
    expect(await ids(c, enterprise, `${circle}&starts_before=${day(200)}`)).toEqual([1001, 1002, 1029, 1031, 1089]);
  });

  it("pins the window in a current cursor; a legacy token slides it and compares no filters", async () => {
    const c = use();
    const first = await call(c, enterprise, "limit=1");
    expect(first.body.data.map((e) => e.id)).toEqual([1001]);
    const cursor = first.body.page.nextCursor!;
    const legacy = encodeLegacyCursor({ startMs: NOW_MS + DAY, id: 1001 });
    await c.setClock(day(10));
    try {
      // Pinned: [now, now + 90d] as of the first page, although 1002 has ended by the new now.
      expect(await ids(c, enterprise, `cursor=${cursor}`)).toEqual([1002, 1029, 1031, 1089]);
      // Legacy: recomputed [now + 10d, now + 100d].
      expect(await ids(c, enterprise, `cursor=${legacy}`)).toEqual([1029, 1031, 1089, 1091, 1095]);
      expect(await ids(c, enterprise, `cursor=${legacy}&starts_after=${day(30)}`)).toEqual([1031, 1089, 1091, 1095]);
      expect(await ids(c, enterprise, `cursor=${legacy}&state=NY`)).toEqual([]);
      // Without a cursor: page one of the new window.
      expect(await ids(c, enterprise, "limit=2")).toEqual([1029, 1031]);
    } finally {
      await c.setClock(iso(NOW_MS));
    }
  });

  it("refuses a pinned window past the account's current horizon after a downgrade", async () => {
    const c = use();
    const account = await c.account({ plan: "enterprise", ...RATE });
    const key = await c.key(account);
    const first = await call(c, key, "limit=1");
    const cursor = first.body.page.nextCursor!;
    await c.patchAccount(account, { plan: "basic" });
    expect(await call(c, key, `cursor=${cursor}`)).toMatchObject({ status: 403, code: "lookahead_not_in_plan" });
    // Stage 7 before stage 8: changed filters do not matter yet.
    expect(await call(c, key, `cursor=${cursor}&state=CA`)).toMatchObject({
      status: 403,
      code: "lookahead_not_in_plan",
    });
    expect(await ids(c, key, "")).toEqual([1001, 1002, 1029]);
  });

  it("gates polygons by plan before parsing the ring, after the pagination check", async () => {
    const c = use();
    expect(await call(c, basic, "polygon=")).toMatchObject({ status: 403, code: "feature_not_in_plan" });
    expect(await call(c, basic, "polygon=nonsense&state=XX&limit=0")).toMatchObject({
      status: 403,
      code: "feature_not_in_plan",
    });
    expect(await call(c, basic, "polygon=&page=2")).toMatchObject({ status: 400, code: "unsupported_pagination" });
    expect(await call(c, business, "polygon=")).toMatchObject({ status: 400, code: "invalid_polygon" });
  });

  it("clamps trial pages to 25 rows and continues from the last row delivered", async () => {
    const c = use();
    await c.records(Array.from({ length: 40 }, (_, i) => eventRecord(5000 + i, 1, day(3))));
    const trial = await c.keyFor({ plan: "none", verified: true, hadSubscription: false });
    const first = await call(c, trial, "limit=100");
    expect(first.status).toBe(200);
    expect(first.body.page).toMatchObject({ count: 25, hasMore: true });
    const second = await call(c, trial, `limit=100&cursor=${first.body.page.nextCursor}`);
    const all = [...first.body.data, ...second.body.data].map((e) => e.id);
    expect(all).toEqual([1001, 1002, ...Array.from({ length: 40 }, (_, i) => 5000 + i), 1029].slice(0, 50));
  });
});
