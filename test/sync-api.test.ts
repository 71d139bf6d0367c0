/**
 * `marquee sync --from-api` against a real upstream (docs/upstream-records.md, A replica of
 * another deployment): for a state, a city and a circle, every list query inside the scope
 * answers the same events in the same order with the same fields on the replica as upstream;
 * upstream changes arrive with the next pass, what left the scope goes, and a pass cut short by a
 * fault removes nothing. Sources and `--aggregators` make `source` and `exclude_aggregators`
 * answerable exactly; what stays unanswerable is refused, never answered wrongly.
 */
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "./harness.ts";
import {
  changeUpstream,
  errorOf,
  expectSameAnswers,
  replicaDb,
  replicaDir,
  runSync,
  type Server,
  serveReplica,
  startUpstream,
  type Upstream,
  walkPages,
} from "./sync-api-fixtures.ts";

const DAY = 86_400_000;
const FAST = { rateSustained: 1_000_000, rateBurst: 1_000_000 };
let up: Upstream;
let upKey: string;
const servers: Server[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  up = await startUpstream(5000);
  // A negotiated rate, so the comparisons' many pages never wait (the rate suite tests waiting).
  upKey = await up.client.keyFor({ email: "upstream@example.com", plan: "business", ...FAST });
}, 120_000);

afterAll(async () => {
  for (const s of servers) await s.close();
  await up?.server.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const iso = (ms: number) => new Date(ms).toISOString();
const upstreamUrl = (filters: string) => `${up.server.baseUrl}/v1/events?${filters}`;

/** Syncs `filters` into a new replica and serves it; the pass must be complete. */
async function replicate(filters: string, extra: string[] = []) {
  const dir = replicaDir();
  dirs.push(dir);
  const run = await runSync(["--from-api", upstreamUrl(filters), "--db", replicaDb(dir), ...extra], {
    MARQUEE_UPSTREAM_KEY: upKey,
  });
  expect(run.code, run.stderr).toBe(0);
  expect(run.passes[0].complete).toBe(true);
  const replica = await serveReplica(dir, up.now, [], {}, FAST);
  servers.push(replica.server);
  return { dir, run, replica };
}

describe("a replica of a state", () => {
  let dir: string;
  let replica: { client: Client; key: string; server: Server };
  const scope = "state=CA";
  const queries = () => {
    const t = up.now;
    return [
      "state=CA",
      "state=ca&limit=7",
      "state=CA&limit=100",
      "state=CA&exclude_sold_out=true&limit=33",
      "state=CA&city=Los%20Angeles",
      "state=CA&city=San%20Francisco&limit=5",
      "state=CA&city=Nowhere",
      `state=CA&starts_after=${iso(t + 5 * DAY)}&starts_before=${iso(t + 60 * DAY)}&limit=50`,
      `state=CA&starts_before=${iso(t + 90 * DAY)}`,
      `state=CA&starts_after=${iso(t + 80 * DAY)}`,
      "state=CA&lat=34.0522&lng=-118.2437&radius_miles=25",
      "state=CA&lat=34.0522&lng=-118.2437&radius_miles=25&include_centroids=true&limit=9",
      `lat=37.7749&lng=-122.4194&radius_miles=10&starts_before=${iso(t + 90 * DAY)}`,
      "state=CA&polygon=37.60,-122.60;37.60,-122.30;37.90,-122.30;37.90,-122.60",
    ];
  };

  beforeAll(async () => {
    ({ dir, replica } = await replicate(scope));
  }, 120_000);

  it("answers every query inside the scope as the upstream does, URLs pointing at the upstream", async () => {
    let seen = 0;
    for (const q of queries()) seen += await expectSameAnswers({ client: up.client, key: upKey }, replica, q);
    expect(seen).toBeGreaterThan(300);
    const [first] = (await walkPages(replica.client, replica.key, "state=CA&limit=1"))[0].data;
    expect(first.eventUrl).toMatch(new RegExp(`^${up.server.baseUrl}/events/`));
    expect(first.eventUrl).not.toContain(replica.server.baseUrl);
  });

  it("sends a handoff created on the replica, and its ticket redirect, on to the upstream's ticketUrl", async () => {
    const events = (await walkPages(replica.client, replica.key, "state=CA&exclude_sold_out=true&limit=100")).flatMap(
      (p) => p.data,
    );
    const e = events.find((x) => x.ticketUrl !== null)!;
    expect(e.ticketUrl).toBe(`${up.server.baseUrl}/t/${e.id}`);
    const redirect = await replica.server.fetch(`/t/${e.id}`);
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get("location")).toBe(e.ticketUrl);
    const created = await replica.client.fetch("/v1/ticket-handoffs", {
      method: "POST",
      headers: { authorization: `Bearer ${replica.key}`, "content-type": "application/json" },
      body: JSON.stringify({ event_id: e.id }),
    });
    expect(created.status).toBe(201);
    const handoff = (await created.json()) as { handoff_url: string; event_url: string };
    expect(handoff.event_url).toBe(e.eventUrl);
    const path = new URL(handoff.handoff_url).pathname;
    const page = await replica.server.fetch(path);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(new URL(up.server.baseUrl).host);
    const go = await replica.server.fetch(`${path}/continue`, { method: "POST" });
    expect(go.status).toBe(303);
    expect(go.headers.get("location")).toBe(e.ticketUrl);
  });

  it("reports the complete pass in /healthz: its age and the rows it spent", async () => {
    const health = (await (await replica.client.get("/healthz")).json()) as {
      upstream: { kind: string; lastPass: { rows: number; ageSeconds: number; upserted: number } };
    };
    expect(health.upstream.kind).toBe("api");
    expect(health.upstream.lastPass.rows).toBeGreaterThan(100);
    expect(health.upstream.lastPass.upserted).toBeGreaterThan(100);
    expect(health.upstream.lastPass.ageSeconds).toBeGreaterThanOrEqual(0);
  });

  it("refuses `source` and `exclude_aggregators=true` it cannot answer exactly, with the parameter's code", async () => {
    const source = await errorOf(await replica.client.get("/v1/events?state=CA&source=ticketmaster", replica.key));
    expect(source).toMatchObject({ status: 400, code: "invalid_source" });
    expect(source.message).toMatch(/replica of another deployment/);
    const aggregators = await errorOf(
      await replica.client.get("/v1/events?state=CA&exclude_aggregators=true", replica.key),
    );
    expect(aggregators).toMatchObject({ status: 400, code: "invalid_exclude_aggregators" });
    expect(aggregators.message).toMatch(/--aggregators/);
    // Their ordinary values stay answerable.
    await expectSameAnswers({ client: up.client, key: upKey }, replica, "state=CA&exclude_aggregators=false&limit=60");
  });

  it("brings upstream changes with the next pass, and removes what left the scope", async () => {
    const listed = (await walkPages(up.client, upKey, "state=CA&limit=100")).flatMap((p) => p.data);
    const ids = listed.map((e) => e.id as number);
    const byVenue = new Map<number, number[]>();
    for (const e of listed) {
      const v = (e.venue as { id: number }).id;
      byVenue.set(v, [...(byVenue.get(v) ?? []), e.id as number]);
    }
    // A CA venue whose events all go when it is hidden, and a NY venue to move an event to.
    const [hiddenVenue, hiddenEvents] = [...byVenue].find(([, es]) => es.length >= 2)!;
    const others = ids.filter((id) => !hiddenEvents.includes(id));
    const [cancelled, deleted, moved, soldOut, leftState, leftHorizon] = others;
    const nyVenue = [...up.venues.values()].find((v) => v.venue.state === "NY" && v.venue.visible)!.venue.id;
    const event = (id: number, fields: Record<string, unknown>) => {
      const r = up.events.get(id)!;
      return { type: "event", event: { ...r.event, ...fields } };
    };
    const movedStart = iso(up.now + 3 * DAY + 3_600_000);
    await changeUpstream(up, [
      event(cancelled, { status: "cancelled" }),
      { type: "delete", entity: "event", id: deleted },
      event(moved, { startDate: movedStart, endDate: null }),
      event(soldOut, { isSoldOut: true }),
      event(leftState, { venueId: nyVenue }),
      event(leftHorizon, { startDate: iso(up.now + 200 * DAY), endDate: null }),
      { type: "venue", venue: { ...up.venues.get(hiddenVenue)!.venue, visible: false } },
      event(ids[ids.length - 1], { id: 990_001, slug: "a-new-one", title: "A New One" }),
    ]);
    const run = await runSync(["--from-api", upstreamUrl(scope), "--db", replicaDb(dir)], {
      MARQUEE_UPSTREAM_KEY: upKey,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.passes[0].removed).toBe(4 + hiddenEvents.length);
    for (const q of queries()) await expectSameAnswers({ client: up.client, key: upKey }, replica, q);
    const now = (await walkPages(replica.client, replica.key, "state=CA&limit=100")).flatMap((p) => p.data);
    const byId = new Map(now.map((e) => [e.id as number, e]));
    for (const gone of [cancelled, deleted, leftState, leftHorizon, ...hiddenEvents])
      expect(byId.has(gone)).toBe(false);
    expect(byId.get(moved)?.startDate).toBe(movedStart.replace(".000Z", "Z"));
    expect(byId.get(soldOut)?.isSoldOut).toBe(true);
    expect(byId.get(990_001)?.title).toBe("A New One");
  }, 60_000);

  it("removes nothing when a fault upstream cuts the pass short, and catches up with the next", async () => {
    const listed = (await walkPages(up.client, upKey, "state=CA&limit=100")).flatMap((p) => p.data);
    const doomed = listed[3].id as number;
    await changeUpstream(up, [{ type: "delete", entity: "event", id: doomed }]);
    await up.client.fault("internal_error", 3);
    const cut = await runSync(["--from-api", upstreamUrl(scope), "--db", replicaDb(dir)], {
      MARQUEE_UPSTREAM_KEY: upKey,
    });
    expect(cut.code).toBe(1);
    expect(cut.passes[0]).toMatchObject({ complete: false, removed: 0, cutShort: { reason: "error" } });
    const held = (await walkPages(replica.client, replica.key, "state=CA&limit=100")).flatMap((p) => p.data);
    expect(held.map((e) => e.id)).toContain(doomed);

    const again = await runSync(["--from-api", upstreamUrl(scope), "--db", replicaDb(dir)], {
      MARQUEE_UPSTREAM_KEY: upKey,
    });
    expect(again.code, again.stderr).toBe(0);
    expect(again.passes[0].removed).toBe(1);
    for (const q of queries()) await expectSameAnswers({ client: up.client, key: upKey }, replica, q);
  }, 60_000);

  it("refuses to mix kinds of source, in one line", async () => {
    const ndjson = await runSync(["--from", "/dev/null", "--db", replicaDb(dir)], {});
    expect(ndjson.code).toBe(1);
    expect(ndjson.stderr.trim().split("\n")).toHaveLength(1);
    expect(ndjson.stderr).toMatch(/follows another deployment's API, not NDJSON records/);
  });
});

describe("a replica of a city and of a circle", () => {
  it("answers the city's queries as the upstream does", async () => {
    const { replica } = await replicate("state=NY&city=New%20York");
    const t = up.now;
    for (const q of [
      "state=NY&city=New%20York",
      "city=New%20York&limit=3",
      "state=NY&city=New%20York&exclude_sold_out=true",
      `city=New%20York&starts_after=${iso(t + 10 * DAY)}&starts_before=${iso(t + 50 * DAY)}`,
      "state=NY&city=New%20York&lat=40.758&lng=-73.9855&radius_miles=5&include_centroids=true",
    ])
      await expectSameAnswers({ client: up.client, key: upKey }, replica, q);
  }, 60_000);

  it("answers the circle's queries as the upstream does (geo windows of 90 days at most)", async () => {
    const circle = "lat=34.0522&lng=-118.2437&radius_miles=25";
    const { run, replica } = await replicate(`${circle}&include_centroids=true`);
    expect(run.passes[0].upserted).toBeGreaterThan(20);
    const t = up.now;
    for (const q of [
      circle,
      `${circle}&include_centroids=true&limit=4`,
      `${circle}&starts_after=${iso(t + 30 * DAY)}&starts_before=${iso(t + 90 * DAY)}&include_centroids=true`,
      `lat=34.0522&lng=-118.2437&radius_miles=10&starts_before=${iso(t + 45 * DAY)}`,
      `${circle}&state=CA&exclude_sold_out=true&starts_before=${iso(t + 90 * DAY)}`,
    ])
      await expectSameAnswers({ client: up.client, key: upKey }, replica, q);
    const health = (await (await replica.client.get("/healthz")).json()) as { upstream: { sources: null } };
    expect(health.upstream.sources).toBeNull();
  }, 60_000);
});

describe("a replica of sources", () => {
  it("answers `source` for the recorded tokens and, with --aggregators, `exclude_aggregators`", async () => {
    const scope = "state=CA&source=ticketmaster,scraper:,eventbrite";
    const { run, replica } = await replicate(scope, ["--aggregators"]);
    expect(run.stderr).toMatch(/twice the rows/);
    expect(run.passes[0].aggregatorRows).toBeGreaterThan(0);
    const same = (q: string) => expectSameAnswers({ client: up.client, key: upKey }, replica, q);
    expect(await same("state=CA&source=ticketmaster")).toBeGreaterThan(0);
    expect(await same("state=CA&source=scraper:")).toBeGreaterThan(0);
    await same("state=CA&source=eventbrite,ticketmaster&limit=9");
    await same(`state=CA&source=${encodeURIComponent("ticketmaster,scraper:,eventbrite")}`);
    const kept = await same(
      `state=CA&source=${encodeURIComponent("ticketmaster,scraper:,eventbrite")}&exclude_aggregators=true`,
    );
    expect(kept).toBeGreaterThan(0);
    await same("state=CA&source=scraper:&exclude_aggregators=true&limit=11");
    const other = await errorOf(await replica.client.get("/v1/events?state=CA&source=dice", replica.key));
    expect(other).toMatchObject({ status: 400, code: "invalid_source" });
    expect(other.message).toContain("`ticketmaster`, `scraper:`, `eventbrite`");
    // A narrower token than the recorded one cannot be told apart either.
    expect((await errorOf(await replica.client.get("/v1/events?source=scraper:a", replica.key))).code).toBe(
      "invalid_source",
    );
  }, 90_000);
});
