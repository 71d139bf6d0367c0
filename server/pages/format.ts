/**
 * Words and times as the pages show them. `startDate`/`endDate` are UTC; people read the venue's
 * local time (docs/api.md: `timezone` is needed to render local time), so times are formatted in
 * the venue's IANA zone, with the zone's abbreviation. A venue without a usable zone gets UTC,
 * labelled as such, rather than a guess.
 */
import type { ServableEvent } from "../../db/servable-event.ts";

const OPTIONS: Record<"date-time" | "time" | "day", Intl.DateTimeFormatOptions> = {
  "date-time": {
    weekday: "long",
    year: "numeric",
    month: "long",
    day: "numeric",
    hour: "numeric",
    minute: "2-digit",
    timeZoneName: "short",
  },
  time: { hour: "numeric", minute: "2-digit", timeZoneName: "short" },
  day: { year: "numeric", month: "2-digit", day: "2-digit" },
};

/** A formatter per page render: pages are not a hot path, so none is kept between requests. */
function formatter(timeZone: string, kind: keyof typeof OPTIONS): Intl.DateTimeFormat | null {
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone, ...OPTIONS[kind] });
  } catch {
    return null; // not a zone this runtime knows
  }
}

/** The zone when this runtime knows it, else null (times are then shown in UTC). */
export function knownTimeZone(timeZone: string | null): string | null {
  return timeZone && formatter(timeZone, "time") ? timeZone : null;
}

/** E.g. "Tuesday, December 1, 2026 at 8:00 PM PST" (runtimes differ slightly in punctuation). */
export function formatLocalDateTime(ms: number, timeZone: string | null): string {
  const f = (timeZone && formatter(timeZone, "date-time")) || formatter("UTC", "date-time")!;
  return normalizeSpaces(f.format(ms));
}

/** E.g. "8:15 PM PST". */
export function formatLocalTime(ms: number, timeZone: string | null): string {
  const f = (timeZone && formatter(timeZone, "time")) || formatter("UTC", "time")!;
  return normalizeSpaces(f.format(ms));
}

/** ICU puts narrow no-break spaces before AM/PM; plain spaces read and copy the same everywhere. */
function normalizeSpaces(s: string): string {
  return s.replace(/[\u202f\u00a0]/g, " ");
}

/** When the event runs, as a sentence fragment; the end only when it differs from the start. */
export function formatWhen(e: Pick<ServableEvent, "startMs" | "endMs" | "venue">): string {
  const zone = e.venue.timezone;
  const start = formatLocalDateTime(e.startMs, zone);
  if (e.endMs === null || e.endMs <= e.startMs) return start;
  const day = (zone && formatter(zone, "day")) || formatter("UTC", "day")!;
  const sameDay = day.format(e.endMs) === day.format(e.startMs);
  return `${start} – ${sameDay ? formatLocalTime(e.endMs, zone) : formatLocalDateTime(e.endMs, zone)}`;
}

/** Display names of the supported sellers (docs/upstream-records.md HANDOFF_SELLERS). */
const SELLER_NAMES: Record<string, string> = {
  ticketmaster: "Ticketmaster",
  livenation: "Live Nation",
  axs: "AXS",
  eventbrite: "Eventbrite",
  seatgeek: "SeatGeek",
  stubhub: "StubHub",
  vividseats: "Vivid Seats",
  gametime: "Gametime",
  dice: "DICE",
  etix: "Etix",
  seetickets: "See Tickets",
  tixr: "Tixr",
};

export function sellerName(seller: string): string {
  return SELLER_NAMES[seller] ?? seller;
}

/** "in 15 minutes", "in 1 minute", "in less than a minute". */
export function minutesFromNow(targetMs: number, nowMs: number): string {
  const minutes = Math.floor((targetMs - nowMs) / 60_000);
  if (minutes < 1) return "in less than a minute";
  return `in ${minutes} minute${minutes === 1 ? "" : "s"}`;
}

export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
