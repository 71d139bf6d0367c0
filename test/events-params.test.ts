/**
 * GET /v1/events parameter rules: every 400 code of the API's parameter table, the check order
 * of docs/api.md, Listing events, repeats, empty values, unknown parameters, and a fast-check fuzz asserting no
 * request ever yields a 500 and every error has the API's envelope.
 */
import fc from "fast-check";
import { beforeAll, expect, it } from "vitest";
import { LIST_PARAMETERS } from "../server/params.ts";
import { type Client, describeMatrix } from "./harness.ts";
import { eventRecord, venueRecord } from "./records.ts";

const NOW = "2030-01-01T00:00:00Z";

async function expectError(c: Client, key: string, qs: string, status: number, code: string) {
  const res = await c.get(`/v1/events${qs}`, key);
  const body = (await res.json()) as { error: { code: string; message: string; requestId: string } };
  expect({ qs, status: res.status, code: body.error?.code }).toEqual({ qs, status, code });
  expect(body.error.requestId).toBe(res.headers.get("x-request-id"));
  expect(typeof body.error.message).toBe("string");
}

async function expectOk(c: Client, key: string, qs: string) {
  const res = await c.get(`/v1/events${qs}`, key);
  expect({ qs, status: res.status }).toEqual({ qs, status: 200 });
  return (await res.json()) as { data: Array<{ id: number }>; page: { nextCursor: string | null; hasMore: boolean } };
}

const bad = (code: string, values: string[]) => values.map((v) => [code, v] as const);

describeMatrix("GET /v1/events parameters", (use) => {
  let key: string;
  let cursor: string;
  beforeAll(async () => {
    const c = use();
    await c.setClock(NOW);
    key = await c.keyFor({ plan: "enterprise", rateSustained: 100_000, rateBurst: 100_000 });
    await c.records([venueRecord(1), ...[1, 2, 3].map((i) => eventRecord(200 + i, 1, `2030-01-0${i + 1}T20:00:00Z`))]);
    const first = await expectOk(c, key, "?limit=1");
    cursor = first.page.nextCursor!;
  });

  it("rejects offset-style pagination, even empty or beside a valid cursor", async () => {
    const c = use();
    for (const p of ["page", "offset", "next_cursor", "nextCursor"]) {
      await expectError(c, key, `?${p}=2`, 400, "unsupported_pagination");
      await expectError(c, key, `?${p}=`, 400, "unsupported_pagination");
      await expectError(c, key, `?${p}`, 400, "unsupported_pagination");
      await expectError(c, key, `?cursor=${cursor}&${p}=${cursor}`, 400, "unsupported_pagination");
    }
  });

  it.each([
    // "ın" (dotless i) and "ſc" (long s) upper-case to IN and SC outside ASCII: still invalid.
    ...bad("invalid_state", ["XX", "C", "CAL", "PR", "C A", "ca,ny", "\u0131n", "\u017Fc", "\uFF23A"]),
    ...bad("invalid_date", [
      "",
      "tomorrow",
      "2030-13-01",
      "2030-02-30",
      "2030-01-01T25:00:00Z",
      "1893456000",
      "2030-1-1",
      "2030-01-01 20:00",
    ]),
    ...bad("invalid_source", ["Ticketmaster", "-abc", "_abc", "a b", "a".repeat(65), "tm%", "tm*", "é"]),
    ...bad("invalid_exclude_aggregators", ["", "TRUE", "1", "yes", "false "]),
    ...bad("invalid_exclude_sold_out", ["", "True", "0", "no"]),
    ...bad("invalid_limit", ["", "0", "101", "-1", "1.5", "1e2", "+5", " 5", "0x10", "abc", "99999999999999999999"]),
    ...bad("invalid_cursor", ["", "!!!", "abc", "djE6MTox=x", "dj"]),
    ...bad("invalid_include_centroids", ["", "1", "TRUE"]),
  ])("%s for %j", async (code, value) => {
    const name = {
      invalid_state: "state",
      invalid_date: "starts_after",
      invalid_source: "source",
      invalid_exclude_aggregators: "exclude_aggregators",
      invalid_exclude_sold_out: "exclude_sold_out",
      invalid_limit: "limit",
      invalid_cursor: "cursor",
      invalid_include_centroids: "include_centroids",
    }[code]!;
    await expectError(use(), key, `?${name}=${encodeURIComponent(value)}`, 400, code);
    if (name === "starts_after")
      await expectError(use(), key, `?starts_before=${encodeURIComponent(value)}`, 400, code);
  });

  it("accepts the edges of every rule", async () => {
    const c = use();
    for (const qs of [
      "?limit=1",
      "?limit=100",
      "?limit=007",
      "?state=dc",
      "?state=%20ny%20",
      "?exclude_aggregators=false",
      "?exclude_sold_out=true",
      "?include_centroids=true",
      `?source=${"a".repeat(64)}`,
      "?source=a.b:c-d_e",
      "?starts_after=2030-01-01T00:00Z",
      "?starts_after=2030-01-01T00:00:00.123456789Z",
      "?starts_after=2030-01-01t00:00:00z",
    ]) {
      await expectOk(c, key, qs);
    }
  });

  it("treats a repeated single-valued parameter as invalid for that parameter", async () => {
    const c = use();
    await expectError(c, key, "?state=CA&state=CA", 400, "invalid_state");
    await expectError(c, key, "?state=&state=CA", 400, "invalid_state");
    await expectError(c, key, "?starts_after=2030-01-01&starts_after=2030-01-01", 400, "invalid_date");
    await expectError(c, key, "?starts_before=2030-02-01&starts_before=2030-02-01", 400, "invalid_date");
    await expectError(c, key, "?exclude_aggregators=true&exclude_aggregators=true", 400, "invalid_exclude_aggregators");
    await expectError(c, key, "?exclude_sold_out=true&exclude_sold_out=false", 400, "invalid_exclude_sold_out");
    await expectError(c, key, "?limit=5&limit=5", 400, "invalid_limit");
    await expectError(c, key, `?cursor=${cursor}&cursor=${cursor}`, 400, "invalid_cursor");
    await expectError(c, key, "?include_centroids=true&include_centroids=true", 400, "invalid_include_centroids");
    // source is the one repeatable parameter.
    await expectOk(c, key, "?source=a&source=b&source=a");
  });

  it("ignores unknown parameters, including differently-cased known ones", async () => {
    const c = use();
    const p = await expectOk(c, key, "?foo=bar&Limit=abc&STATE=zz&Page=2&cursor_x=1");
    expect(p.data.map((e) => e.id)).toEqual([201, 202, 203]);
  });

  it("gives invalid_date_range when starts_before is not after starts_after (default now)", async () => {
    const c = use();
    await expectError(c, key, "?starts_after=2030-02-01&starts_before=2030-02-01", 400, "invalid_date_range");
    await expectError(c, key, "?starts_after=2030-02-01T00:00:01Z&starts_before=2030-02-01", 400, "invalid_date_range");
    await expectError(c, key, "?starts_before=2030-01-01", 400, "invalid_date_range");
    await expectError(c, key, "?starts_before=2029-06-01", 400, "invalid_date_range");
    await expectOk(c, key, "?starts_before=2030-01-01T00:00:00.001Z");
    await expectOk(c, key, "?starts_after=2020-01-01&starts_before=2020-01-02");
  });

  it("checks in the order of docs/api.md, Listing events: the first failing stage wins", async () => {
    const c = use();
    const chain: Array<[string, string]> = [
      ["?page=1&state=XX&limit=0", "unsupported_pagination"],
      ["?state=XX&starts_after=nope", "invalid_state"],
      ["?starts_after=nope&starts_before=nope&source=BAD", "invalid_date"],
      ["?starts_before=nope&source=BAD", "invalid_date"],
      ["?source=BAD&exclude_aggregators=x", "invalid_source"],
      ["?exclude_aggregators=x&exclude_sold_out=x", "invalid_exclude_aggregators"],
      ["?exclude_sold_out=x&limit=0", "invalid_exclude_sold_out"],
      ["?limit=0&cursor=zzz", "invalid_limit"],
      ["?cursor=zzz&lat=999&lng=0&radius_miles=1", "invalid_cursor"],
      ["?lat=999&lng=0&radius_miles=1&include_centroids=x", "invalid_coordinates"],
      ["?lat=37&lng=-122&include_centroids=x", "invalid_radius"],
      ["?polygon=1,2&include_centroids=x", "invalid_polygon"],
      [
        "?polygon=40.7,-74;40.71,-74;40.71,-73.99&lat=1&lng=1&radius_miles=1&include_centroids=x",
        "conflicting_geo_filters",
      ],
      ["?include_centroids=x&starts_after=2030-02-01&starts_before=2030-01-15", "invalid_include_centroids"],
      [`?starts_after=2030-02-01&starts_before=2030-01-15&cursor=${cursor}`, "invalid_date_range"],
      [`?cursor=${cursor}&state=CA`, "invalid_cursor"],
    ];
    for (const [qs, code] of chain) await expectError(c, key, qs, 400, code);
  });

  it("never answers 500 and always uses the documented envelope (fuzz)", async () => {
    const c = use();
    const names = [...LIST_PARAMETERS.map((p) => p.name), "page", "offset", "next_cursor", "nextCursor"];
    const value = fc.oneof(
      fc.string(),
      fc.constantFrom(
        "",
        "true",
        "false",
        "CA",
        "ny",
        "2030-01-05",
        "2030-01-05T10:00:00Z",
        "25",
        "0",
        "101",
        "37.78",
        "-122.43",
        "1",
        "40.7,-74;40.8,-74;40.8,-73.9",
        "ticketmaster",
        "scraper:fill",
        "s_ngkick",
        cursor,
        "%",
        "%%",
        "\u0000",
      ),
      fc.integer({ min: -1000, max: 1000 }).map(String),
      fc.double({ noNaN: false }).map(String),
    );
    const param = fc.tuple(fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 6 })), value);
    await fc.assert(
      fc.asyncProperty(fc.array(param, { maxLength: 6 }), async (pairs) => {
        const qs = pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&");
        const res = await c.get(`/v1/events?${qs}`, key);
        expect(res.status, qs).not.toBe(500);
        const requestId = res.headers.get("x-request-id");
        const body = (await res.json()) as Record<string, any>;
        if (res.status === 200) {
          expect(Object.keys(body)).toEqual(["data", "page"]);
        } else {
          expect(Object.keys(body)).toEqual(["error"]);
          expect(Object.keys(body.error).sort()).toEqual(["code", "message", "requestId"]);
          expect(body.error.requestId).toBe(requestId);
          expect([400, 403]).toContain(res.status);
        }
      }),
      { numRuns: 250 },
    );
  });
});
