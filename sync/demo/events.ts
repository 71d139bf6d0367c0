/**
 * One demo event, derived from (seed, id) alone so that later updates of an event can be
 * regenerated without keeping a million events in memory. The mix covers every case docs/api.md
 * names: sold out and low tickets, free, explicitly non-free with stale free text, unknown cost,
 * multi-day festivals already running, null endDate, cancelled, spam, duplicates, broken and
 * missing ticket links, non-ticketed events, and heavy startDate ties (most shows at 7 or 8 p.m.).
 */
import { CATEGORIES, DAY_MS } from "../../db/contract.ts";
import { localToUtcMs, utcOffsetMinutes } from "./places.ts";
import { Random, Table, type WeightedIndex } from "./random.ts";
import { SELLERS, sellerOfSource, sellerUrl, UNUSABLE_URLS } from "./sellers.ts";
import type { DemoVenue } from "./venues.ts";
import { HOLIDAY_DATES, SPAM_TITLES, slugify, TITLES } from "./words.ts";

export interface DemoWorld {
  seed: string;
  /** Midnight UTC of the anchor day; event dates are relative to it. */
  anchor: { year: number; month: number; day: number };
  venues: DemoVenue[];
  venuePicker: WeightedIndex;
  /** Slugs of titles seen in this run: most titles repeat, and a slug costs a normalization. */
  slugs: Map<string, string>;
}

export type DemoEvent = ReturnType<typeof baseEvent>;

const START_TIMES = new Table<readonly [number, number]>([
  [30, [20, 0]],
  [26, [19, 0]],
  [8, [19, 30]],
  [7, [21, 0]],
  [5, [18, 0]],
  [4, [20, 30]],
  [4, [22, 0]],
  [3, [12, 0]],
  [3, [10, 0]],
  [3, [14, 0]],
  [2, [17, 0]],
  [2, [9, 0]],
  [2, [23, 0]],
  [1, [11, 30]],
]);
const PRICES = ["$10", "$15", "$20", "$25", "$35", "$45", "$60", "$89.50", "$125", "$250"];
const AGES = new Table<string | null>([
  [40, null],
  [25, "21+"],
  [12, "18+"],
  [20, "All Ages"],
  [3, "all ages"],
]);
const COSTS = new Table([
  [50, "priced"],
  [6, "vague"],
  [8, "free"],
  [3, "staleFree"],
  [4, "freeText"],
  [16, "unknown"],
  [3, "tba"],
] as const);
const LINKS = new Table([
  [70, "ok"],
  [13, "missing"],
  [6, "broken"],
  [4, "brokenFirst"],
  [3, "unusable"],
  [4, "boxOffice"],
] as const);
const WEBSITES = new Table([
  [72, "page"],
  [22, "none"],
  [3, "unusable"],
  [3, "http"],
] as const);
const FATES = new Table([
  [93, "active"],
  [3, "cancelled"],
  [1.2, "spam"],
  [0.8, "inactive"],
  [2, "duplicate"],
] as const);
const CHANGES = new Table([
  [30, "soldOut"],
  [20, "lowTickets"],
  [15, "cancelled"],
  [15, "moved"],
  [8, "linkBroken"],
  [6, "spam"],
  [6, "demoted"],
] as const);
const UNKNOWN_CATEGORIES = ["Concerts", "music", "Kids", "Live Music", "Misc"];

const pad = (n: number) => String(n).padStart(2, "0");
const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z");

/** An RFC 3339 local time with its offset, the way some upstream feeds write dates. */
function withOffset(ms: number, zone: string): string {
  const d = new Date(ms);
  const offset = utcOffsetMinutes(zone, d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  const local = new Date(ms + offset * 60_000).toISOString().slice(0, 19);
  const sign = offset < 0 ? "-" : "+";
  return `${local}${sign}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
}

/** Days from the anchor to the next (month, day), 0 when it is the anchor day itself. */
function daysUntil(anchor: DemoWorld["anchor"], month: number, day: number): number {
  const from = Date.UTC(anchor.year, anchor.month, anchor.day);
  let to = Date.UTC(anchor.year, month - 1, day);
  if (to < from) to = Date.UTC(anchor.year + 1, month - 1, day);
  return (to - from) / DAY_MS;
}

function schedule(r: Random, w: DemoWorld, v: DemoVenue, primary: string, title: string) {
  const { year, month, day } = w.anchor;
  let dayOffset: number;
  let days = 0; // length of a multi-day run
  const holiday = HOLIDAY_DATES[title];
  if (holiday) {
    dayOffset = daysUntil(w.anchor, holiday[0], holiday[1]) - r.int(0, 4); // on or just before the day
  } else if (primary === "Festivals" && r.chance(0.12)) {
    dayOffset = -r.int(1, 3); // already running at the anchor
    days = r.int(4, 6);
  } else if (primary === "Festivals" && r.chance(0.3)) {
    dayOffset = r.int(0, 300);
    days = r.int(2, 4);
  } else if (primary === "Arts" && r.chance(0.15)) {
    dayOffset = r.int(-30, 250);
    days = r.int(30, 90); // exhibitions
  } else if (r.chance(0.03)) {
    dayOffset = -r.int(1, 45); // already over
  } else {
    const u = r.next();
    dayOffset = Math.floor(400 * u * u); // denser in the coming weeks
  }
  const [hour, minute] = days > 0 ? [r.pick([10, 11, 12]), 0] : START_TIMES.pick(r);
  const startMs = localToUtcMs(v.zone, year, month, day + dayOffset, hour, minute);
  let endMs: number | null = null;
  if (days > 0) endMs = localToUtcMs(v.zone, year, month, day + dayOffset + days, 22, 0);
  else if (r.chance(0.55)) endMs = startMs + r.pick([90, 120, 150, 180, 240]) * 60_000;
  const offsetForm = r.chance(0.01);
  return {
    startDate: offsetForm ? withOffset(startMs, v.zone) : iso(startMs),
    endDate: endMs == null ? null : offsetForm ? withOffset(endMs, v.zone) : iso(endMs),
  };
}

function cost(r: Random): { costText: string | null; isFree: boolean | null } {
  switch (COSTS.pick(r)) {
    case "priced":
      return { costText: r.chance(0.3) ? `${r.pick(PRICES)} - ${r.pick(PRICES)}` : r.pick(PRICES), isFree: false };
    case "vague":
      return {
        costText: r.pick(["$15 adv / $20 door", "From $39.50", " $30 ", "$10 suggested donation"]),
        isFree: null,
      };
    case "free":
      return { costText: r.pick(["Free", "free", null, ""]), isFree: true };
    case "staleFree": // explicitly non-free; the free text is stale
      return { costText: r.pick(["Free", "FREE ADMISSION", "no cover", "$0"]), isFree: false };
    case "freeText":
      return { costText: r.pick(["Free admission", "No cover", "free entry", "0"]), isFree: null };
    case "unknown":
      return { costText: null, isFree: null };
    case "tba":
      return { costText: r.pick(["TBA", "Donations welcome"]), isFree: null };
  }
}

function ticketLinks(r: Random, source: string, slug: string, id: number, v: DemoVenue) {
  const links: Array<{ url: string; seller: string | null; broken: boolean }> = [];
  const kind = LINKS.pick(r);
  if (kind === "missing") return links;
  const seller = sellerOfSource(source) ?? r.pick(SELLERS);
  const main = { url: sellerUrl(seller, slug, id, r), seller, broken: false };
  if (kind === "broken") return [{ ...main, broken: true }];
  if (kind === "unusable") return [{ url: r.pick(UNUSABLE_URLS), seller: null, broken: false }];
  if (kind === "boxOffice")
    return [{ url: `https://${v.slug}.example.com/tickets/${id}`, seller: null, broken: false }];
  if (kind === "brokenFirst") links.push({ url: sellerUrl(r.pick(SELLERS), slug, id, r), seller: null, broken: true });
  links.push(main);
  if (r.chance(0.15)) {
    const other = r.pick(SELLERS);
    links.push({ url: sellerUrl(other, slug, id, r), seller: other, broken: false });
  }
  return links;
}

function categories(r: Random, v: DemoVenue): string[] {
  const primary = r.chance(0.85) ? r.pick(v.kind.categories) : r.pick(CATEGORIES);
  const out = [primary];
  if (r.chance(0.25)) out.push(r.pick(CATEGORIES));
  if (r.chance(0.03)) out.push(r.pick(UNKNOWN_CATEGORIES)); // dropped on sync
  if (r.chance(0.02)) out.push(primary); // repeats are dropped too
  return out;
}

/** The event as first published upstream: active, not a duplicate. */
export function baseEvent(w: DemoWorld, id: number) {
  const r = new Random(w.seed, id);
  const v = w.venues[w.venuePicker.pick(r)];
  const cats = categories(r, v);
  const title = TITLES[cats[0]](r, v.place.city);
  let slug = w.slugs.get(title);
  if (slug === undefined) {
    if (w.slugs.size > 200_000) w.slugs.clear();
    slug = slugify(title);
    w.slugs.set(title, slug);
  }
  const source = r.weighted(v.sources);
  const { startDate, endDate } = schedule(r, w, v, cats[0], title);
  const ticketed = !r.chance(cats[0] === "Community" || cats[0] === "Outdoors" ? 0.5 : 0.05);
  const soldOut = r.chance(0.04);
  const site = WEBSITES.pick(r);
  const website =
    site === "page"
      ? `https://${v.slug}.example.com/events/${slug}-${id}`
      : site === "http"
        ? `http://${v.slug}.example.com/e/${id}`
        : site === "unusable"
          ? r.pick(UNUSABLE_URLS)
          : null;
  return {
    id,
    venueId: v.id,
    title,
    slug: `${slug}-${id}`,
    startDate,
    endDate,
    ...cost(r),
    isSoldOut: soldOut,
    isLowTickets: !soldOut && r.chance(0.06),
    age: AGES.pick(r),
    website,
    websiteBroken: website !== null && r.chance(0.05),
    imageUrl: r.chance(0.6) ? `https://images.example.com/events/${id}.jpg` : null,
    categories: cats,
    source,
    status: "active" as "active" | "cancelled" | "spam" | "inactive",
    duplicateOf: null as number | null,
    ticketed,
    ticketLinks: ticketed || r.chance(0.3) ? ticketLinks(r, source, slug, id, v) : [],
  };
}

/** The event's first record: mostly as published, some cancelled, spam, inactive or duplicates. */
export function firstEvent(w: DemoWorld, id: number): DemoEvent {
  const r = new Random(w.seed, -id);
  const e = baseEvent(w, id);
  const fate = FATES.pick(r);
  if (fate === "spam") return { ...e, title: r.pick(SPAM_TITLES), status: "spam" };
  if (fate === "duplicate" && id > 1) {
    // The same show listed again by another source: same venue, title and time.
    const original = baseEvent(w, r.int(1, id - 1));
    return {
      ...e,
      venueId: original.venueId,
      title: original.title,
      startDate: original.startDate,
      endDate: original.endDate,
      duplicateOf: original.id,
    };
  }
  if (fate === "cancelled" || fate === "inactive") return { ...e, status: fate };
  return e;
}

/** A later version of an event: sold out, moved, cancelled, reclassified as spam or demoted. */
export function updatedEvent(w: DemoWorld, id: number, version: number): DemoEvent {
  const r = new Random(w.seed, 0x40000000 + id * 8 + version);
  const e = firstEvent(w, id);
  const change = CHANGES.pick(r);
  switch (change) {
    case "soldOut":
      return { ...e, isSoldOut: true, isLowTickets: false };
    case "lowTickets":
      return { ...e, isLowTickets: true, isSoldOut: false };
    case "cancelled":
      return { ...e, status: "cancelled" };
    case "spam":
      return { ...e, status: "spam" };
    case "demoted":
      return id > 1 ? { ...e, duplicateOf: r.int(1, id - 1) } : e;
    case "linkBroken":
      return { ...e, ticketLinks: e.ticketLinks.map((l) => ({ ...l, broken: true })) };
    default: {
      const shift = r.pick([-1, 1, 7]) * (r.chance(0.5) ? DAY_MS : 3_600_000);
      const move = (s: string | null) => (s == null ? null : iso(Date.parse(s) + shift));
      return { ...e, startDate: move(e.startDate)!, endDate: move(e.endDate) };
    }
  }
}
