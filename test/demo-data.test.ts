/**
 * The demo data (docs/operations.md, The program `marquee demo-data`): deterministic bytes, valid records, and every
 * case docs/api.md names, on the default 50,000-event stream.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import distance from "@turf/distance";
import { beforeAll, describe, expect, it } from "vitest";
import { AGGREGATOR_VENDORS, CATEGORIES, DEMO, GEOCODE_PRECISIONS, US_STATES } from "../db/contract.ts";
import { parseIsoInstant } from "../db/instant.ts";
import { demoChunks, demoRecords } from "../sync/demo/generate.ts";
import { KNOWN_ZONES, localToUtcMs, PLACES } from "../sync/demo/places.ts";
import { deriveCost, vendorOf } from "../sync/derive.ts";
import { parseRecordLine } from "../sync/records.ts";
import { BUN, ROOT } from "./harness.ts";

const digest = (options: { events: number; seed: string; anchor: string }) => {
  const hash = createHash("sha256");
  for (const chunk of demoChunks(options)) hash.update(chunk);
  return hash.digest("hex");
};

describe("demo data determinism", () => {
  const base = { events: 3000, seed: "marquee", anchor: DEMO.anchor };

  it("the same options write the same bytes; another seed or anchor writes others", () => {
    const a = digest(base);
    expect(digest(base)).toBe(a);
    expect(digest({ ...base, seed: "other" })).not.toBe(a);
    expect(digest({ ...base, anchor: "2026-12-02" })).not.toBe(a);
  });

  it("the Bun CLI writes exactly the bytes Node generates", () => {
    const r = spawnSync(BUN, ["server/main.ts", "demo-data", "--events", "3000", "--seed", "marquee"], {
      cwd: ROOT,
      maxBuffer: 64 << 20,
    });
    expect(r.status).toBe(0);
    expect(createHash("sha256").update(r.stdout).digest("hex")).toBe(digest(base));
  });

  it("local times follow the US daylight-saving rule in every zone it uses (checked against Intl)", () => {
    for (const zone of KNOWN_ZONES) {
      const fmt = new Intl.DateTimeFormat("en-US", {
        timeZone: zone,
        hourCycle: "h23",
        year: "numeric",
        month: "2-digit",
        day: "2-digit",
        hour: "2-digit",
        minute: "2-digit",
      });
      for (let day = 0; day < 3 * 366; day += 3) {
        const ms = localToUtcMs(zone, 2026, 0, 1 + day, 20, 0);
        const parts = Object.fromEntries(fmt.formatToParts(new Date(ms)).map((p) => [p.type, p.value]));
        const expected = new Date(Date.UTC(2026, 0, 1 + day));
        expect(`${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}`).toBe(
          `${expected.toISOString().slice(0, 10)} 20:00`,
        );
      }
    }
    expect(new Set(PLACES.map((p) => p.timezone)).size).toBeLessThanOrEqual(KNOWN_ZONES.length);
    for (const p of PLACES) expect(KNOWN_ZONES).toContain(p.timezone);
  });
});

describe("the default demo stream", () => {
  type Venue = {
    id: number;
    city: string;
    state: string;
    timezone: string | null;
    latitude: number | null;
    longitude: number | null;
    geocodePrecision: string | null;
    visible: boolean;
  };
  type Event = ReturnType<typeof parseRecordLine> & { type: "event" } extends { event: infer E } ? E : never;
  const venues = new Map<number, Venue>();
  const venueRecords: Venue[] = [];
  const firstEvents = new Map<number, Event>();
  const eventRecords: Event[] = [];
  const deletes: Array<{ entity: string; id: number }> = [];
  let records = 0;
  let lastSeq = 0;
  let increasing = true;

  beforeAll(() => {
    for (const chunk of demoChunks({ events: DEMO.events, seed: DEMO.seed, anchor: DEMO.anchor })) {
      for (const line of chunk.split("\n")) {
        if (!line) continue;
        const r = parseRecordLine(line, ++records); // every line passes the sync schema
        increasing &&= r.seq === lastSeq + 1;
        lastSeq = r.seq;
        if (r.type === "venue") {
          venueRecords.push(r.venue);
          if (!venues.has(r.venue.id)) venues.set(r.venue.id, r.venue);
        } else if (r.type === "event") {
          eventRecords.push(r.event);
          if (!firstEvents.has(r.event.id)) firstEvents.set(r.event.id, r.event);
        } else deletes.push(r);
      }
    }
  }, 60_000);

  const events = () => [...firstEvents.values()];
  const count = (pred: (e: Event) => boolean) => events().filter(pred).length;

  it("has 50,000 events, venues in all 50 states and DC, and seq 1, 2, 3, …", () => {
    expect(firstEvents.size).toBe(DEMO.events);
    expect(increasing).toBe(true);
    expect(new Set([...venues.values()].map((v) => v.state))).toEqual(new Set(US_STATES));
    expect(venues.size).toBe(DEMO.events / DEMO.eventsPerVenue);
  });

  it("uses real places with their IANA zones, a few venues without a resolved zone", () => {
    const places = new Set(PLACES.map((p) => `${p.city}|${p.state}|${p.timezone}`));
    const withZone = [...venues.values()].filter((v) => v.timezone !== null);
    for (const v of withZone) expect(places.has(`${v.city}|${v.state}|${v.timezone}`)).toBe(true);
    expect(venues.size - withZone.length).toBeGreaterThan(0);
  });

  it("covers every geocode precision including null, venues without coordinates, hidden, updated and deleted venues", () => {
    const all = [...venues.values()];
    for (const p of [...GEOCODE_PRECISIONS, null])
      expect(all.some((v) => v.geocodePrecision === p && v.latitude !== null)).toBe(true);
    expect(all.some((v) => v.latitude === null && v.longitude === null)).toBe(true);
    expect(all.some((v) => !v.visible)).toBe(true);
    expect(venueRecords.length).toBeGreaterThan(venues.size); // updates
    expect(venueRecords.slice(venues.size).some((v) => !v.visible)).toBe(true); // hidden later
    expect(deletes.some((d) => d.entity === "venue")).toBe(true);
  });

  it("puts thousands of events in dense metros: New York within 25 miles of Times Square", () => {
    const near = [...venues.values()].filter(
      (v) => v.latitude !== null && distance([-73.9855, 40.758], [v.longitude!, v.latitude], { units: "miles" }) <= 25,
    );
    expect(near.length).toBeGreaterThan(0.05 * venues.size);
    const nearIds = new Set(near.map((v) => v.id));
    expect(count((e) => nearIds.has(e.venueId))).toBeGreaterThan(2500);
  });

  it("uses all 21 categories, plus unknown and repeated values that sync drops", () => {
    const seen = new Set(events().flatMap((e) => e.categories));
    for (const c of CATEGORIES) expect(seen.has(c)).toBe(true);
    expect([...seen].some((c) => !(CATEGORIES as readonly string[]).includes(c))).toBe(true);
    expect(events().some((e) => new Set(e.categories).size < e.categories.length)).toBe(true);
  });

  it("has hundreds of sources, every aggregator vendor and scraper tokens", () => {
    const sources = new Set(events().map((e) => e.source));
    expect(sources.size).toBeGreaterThan(300);
    const vendors = new Set([...sources].map(vendorOf));
    for (const a of AGGREGATOR_VENDORS) expect(vendors.has(a)).toBe(true);
    expect([...sources].filter((s) => s.startsWith("scraper:")).length).toBeGreaterThan(200);
    for (const s of sources) expect(s.length).toBeLessThanOrEqual(64);
  });

  it("covers cost cases: free, explicitly non-free with stale free text, unknown", () => {
    expect(count((e) => e.isFree === true && deriveCost(e.costText, e.isFree) === "Free")).toBeGreaterThan(100);
    expect(
      count(
        (e) =>
          e.isFree === false && e.costText !== null && /^(free|free admission|no cover|\$0)$/i.test(e.costText.trim()),
      ),
    ).toBeGreaterThan(100);
    expect(count((e) => e.isFree === null && e.costText === null)).toBeGreaterThan(100);
    expect(count((e) => e.isFree === null && deriveCost(e.costText, e.isFree) === "Free")).toBeGreaterThan(100);
  });

  it("covers sold out, low tickets, statuses, duplicates, and updates that change them", () => {
    expect(count((e) => e.isSoldOut)).toBeGreaterThan(100);
    expect(count((e) => e.isLowTickets)).toBeGreaterThan(100);
    for (const s of ["active", "cancelled", "spam", "inactive"])
      expect(count((e) => e.status === s)).toBeGreaterThan(10);
    expect(count((e) => e.duplicateOf !== null && firstEvents.has(e.duplicateOf))).toBeGreaterThan(100);
    expect(eventRecords.length - firstEvents.size).toBeGreaterThan(500);
    expect(deletes.filter((d) => d.entity === "event").length).toBeGreaterThan(50);
  });

  it("covers ticketing: broken, unusable and missing links, non-ticketed events", () => {
    expect(count((e) => e.ticketLinks.length === 0)).toBeGreaterThan(100);
    expect(count((e) => e.ticketLinks.length > 0 && e.ticketLinks.every((l) => l.broken))).toBeGreaterThan(100);
    expect(count((e) => e.ticketLinks.some((l) => !/^https?:\/\//.test(l.url) || l.url.includes("@")))).toBeGreaterThan(
      20,
    );
    expect(count((e) => !e.ticketed)).toBeGreaterThan(100);
    expect(count((e) => e.websiteBroken)).toBeGreaterThan(100);
  });

  it("covers dates: null endDate, festivals running at the anchor, past events, offset notation, heavy ties", () => {
    const anchorMs = Date.parse(`${DEMO.anchor}T00:00:00Z`);
    expect(count((e) => e.endDate === null)).toBeGreaterThan(1000);
    expect(
      count(
        (e) =>
          e.categories[0] === "Festivals" &&
          parseIsoInstant(e.startDate)! < anchorMs &&
          parseIsoInstant(e.endDate ?? e.startDate)! > anchorMs + 86_400_000,
      ),
    ).toBeGreaterThan(10);
    expect(count((e) => parseIsoInstant(e.endDate ?? e.startDate)! < anchorMs)).toBeGreaterThan(100);
    expect(count((e) => /[+-]\d{2}:\d{2}$/.test(e.startDate))).toBeGreaterThan(100);
    const ties = new Map<number, number>();
    for (const e of events())
      ties.set(parseIsoInstant(e.startDate)!, (ties.get(parseIsoInstant(e.startDate)!) ?? 0) + 1);
    expect(Math.max(...ties.values())).toBeGreaterThanOrEqual(50);
  });

  it("schedules shows at plausible local hours in the venue's zone", () => {
    const hours = new Map<number, number>();
    const zoneOf = new Map([...venues.values()].map((v) => [v.id, v.timezone]));
    for (const e of events().slice(0, 3000)) {
      const zone = zoneOf.get(e.venueId);
      if (!zone) continue;
      const h = Number(
        new Intl.DateTimeFormat("en-US", { timeZone: zone, hour: "2-digit", hourCycle: "h23" }).format(
          parseIsoInstant(e.startDate)!,
        ),
      );
      hours.set(h, (hours.get(h) ?? 0) + 1);
    }
    for (const h of hours.keys()) expect(h).toBeGreaterThanOrEqual(9);
    const evening = (hours.get(19) ?? 0) + (hours.get(20) ?? 0);
    expect(evening / [...hours.values()].reduce((a, b) => a + b)).toBeGreaterThan(0.5);
  });

  it("generates the same records as objects and as text", () => {
    const objects = [...demoRecords({ events: 50, seed: "x", anchor: DEMO.anchor })]
      .map((r) => `${JSON.stringify(r)}\n`)
      .join("");
    expect([...demoChunks({ events: 50, seed: "x", anchor: DEMO.anchor })].join("")).toBe(objects);
  });
});
