/**
 * Upstream record schema (CONTRACT §3), validated with valibot at the edge of the sync path.
 */
import * as v from "valibot";
import { EVENT_STATUSES, GEOCODE_PRECISIONS } from "../db/contract.ts";
import { fastRecord } from "./fast-records.ts";

const id = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(Number.MAX_SAFE_INTEGER));
const seq = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(Number.MAX_SAFE_INTEGER));
const nullableString = v.nullable(v.string());
const isoDate = v.pipe(
  v.string(),
  v.check((s) => parseIsoInstant(s) !== null, "not an RFC 3339 date-time"),
);

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * The common form `YYYY-MM-DDTHH:MM:SSZ` by digit arithmetic (a bulk sync parses millions);
 * undefined for any other shape, which the general parser below handles.
 */
function parseCanonicalInstant(s: string): number | null | undefined {
  if (s.length !== 20 || s.charCodeAt(19) !== 90 /* Z */ || s.charCodeAt(10) !== 84 /* T */) return undefined;
  if (s[4] !== "-" || s[7] !== "-" || s[13] !== ":" || s[16] !== ":") return undefined;
  const num = (from: number, to: number) => {
    let n = 0;
    for (let i = from; i < to; i++) {
      const d = s.charCodeAt(i) - 48;
      if (d < 0 || d > 9) return -1;
      n = n * 10 + d;
    }
    return n;
  };
  const y = num(0, 4), mo = num(5, 7), d = num(8, 10), h = num(11, 13), mi = num(14, 16), sec = num(17, 19);
  if (y < 1000 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59) {
    return y < 1000 ? undefined : null;
  }
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  if (d > (mo === 2 && leap ? 29 : DAYS_IN_MONTH[mo - 1])) return null;
  return Date.UTC(y, mo - 1, d, h, mi, sec);
}

/** Parses an RFC 3339 date-time (no offset = UTC). Returns ms since epoch or null. */
export function parseIsoInstant(s: string): number | null {
  const fast = parseCanonicalInstant(s);
  if (fast !== undefined) return fast;
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?$/i.exec(s);
  if (!m) return null;
  const [, y, mo, d, h, mi, sec = "00", frac = "", zone = "Z"] = m;
  const ms = Date.UTC(+y, +mo - 1, +d, +h, +mi, +sec, frac ? Math.floor(Number(frac) * 1000) : 0);
  const check = new Date(ms);
  if (check.getUTCFullYear() !== +y || check.getUTCMonth() !== +mo - 1 || check.getUTCDate() !== +d) return null;
  if (+h > 23 || +mi > 59 || +sec > 59) return null;
  if (zone.toUpperCase() === "Z") return ms;
  const sign = zone[0] === "-" ? -1 : 1;
  const [zh, zm] = zone.slice(1).split(":").map(Number);
  if (zh > 23 || zm > 59) return null;
  return ms - sign * (zh * 60 + zm) * 60_000;
}

export const VenueRecord = v.object({
  type: v.literal("venue"),
  seq,
  venue: v.object({
    id,
    name: v.string(),
    city: v.string(),
    state: v.pipe(v.string(), v.regex(/^[A-Z]{2}$/)),
    timezone: nullableString,
    latitude: v.nullable(v.pipe(v.number(), v.minValue(-90), v.maxValue(90))),
    longitude: v.nullable(v.pipe(v.number(), v.minValue(-180), v.maxValue(180))),
    geocodePrecision: v.nullable(v.picklist(GEOCODE_PRECISIONS)),
    visible: v.boolean(),
  }),
});

export const TicketLink = v.object({
  url: v.string(),
  seller: v.optional(nullableString, null),
  broken: v.optional(v.boolean(), false),
});

export const EventRecord = v.object({
  type: v.literal("event"),
  seq,
  event: v.object({
    id,
    venueId: id,
    title: v.string(),
    slug: v.string(),
    startDate: isoDate,
    endDate: v.nullable(isoDate),
    costText: v.optional(nullableString, null),
    isFree: v.optional(v.nullable(v.boolean()), null),
    isSoldOut: v.optional(v.boolean(), false),
    isLowTickets: v.optional(v.boolean(), false),
    age: v.optional(nullableString, null),
    website: v.optional(nullableString, null),
    websiteBroken: v.optional(v.boolean(), false),
    imageUrl: v.optional(nullableString, null),
    categories: v.optional(v.array(v.string()), []),
    source: v.pipe(v.string(), v.regex(/^[a-z0-9._:-]+$/)),
    status: v.picklist(EVENT_STATUSES),
    duplicateOf: v.optional(v.nullable(id), null),
    ticketed: v.optional(v.boolean(), true),
    ticketLinks: v.optional(v.array(TicketLink), []),
  }),
});

export const DeleteRecord = v.object({
  type: v.literal("delete"),
  seq,
  entity: v.picklist(["event", "venue"]),
  id,
});

export const UpstreamRecord = v.variant("type", [VenueRecord, EventRecord, DeleteRecord]);
export type UpstreamRecord = v.InferOutput<typeof UpstreamRecord>;
export type VenueRecord = v.InferOutput<typeof VenueRecord>;
export type EventRecord = v.InferOutput<typeof EventRecord>;

export class RecordError extends Error {
  constructor(
    readonly line: number,
    readonly detail: string,
  ) {
    super(`line ${line}: ${detail}`);
  }
}

const isInstant = (s: string) => parseIsoInstant(s) !== null;

/** Parses and validates one NDJSON line. Throws RecordError naming the line. */
export function parseRecordLine(text: string, line: number): UpstreamRecord {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new RecordError(line, "not valid JSON");
  }
  const fast = fastRecord(json, isInstant);
  if (fast) return fast;
  const result = v.safeParse(UpstreamRecord, json);
  if (!result.success) {
    const issue = result.issues[0];
    const path = issue.path?.map((p) => p.key).join(".") ?? "";
    // "Invalid key: Expected "seq" but received undefined" says less than "seq: missing".
    const detail = issue.received === "undefined" && issue.path?.length ? "missing" : issue.message;
    throw new RecordError(line, `${path ? path + ": " : ""}${detail}`);
  }
  return result.output;
}

/** parseRecordLine, plus the stream's order (CONTRACT §3): each seq above the one before it. */
export function parseNextRecord(text: string, line: number, previousSeq: number): UpstreamRecord {
  const record = parseRecordLine(text, line);
  if (record.seq <= previousSeq) throw new RecordError(line, `seq ${record.seq} does not increase (previous ${previousSeq})`);
  return record;
}
