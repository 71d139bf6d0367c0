/**
 * A hand-written fast path for the record schema of sync/record-schema.ts, because validation is a
 * large share of a bulk sync (measured: valibot ~4 µs a record, this ~0.5 µs). It accepts only
 * records the valibot schema accepts and returns the same output (defaults filled in, unknown
 * keys dropped); anything it is unsure about returns `undefined`, and the caller falls back to
 * valibot, which stays the single source of truth and of error messages. test/sync-records
 * checks the equivalence with fast-check.
 */
import { EVENT_STATUSES, GEOCODE_PRECISIONS } from "../db/contract.ts";
import type { UpstreamRecord } from "./record-schema.ts";

type Json = Record<string, unknown>;

const statuses = new Set<unknown>(EVENT_STATUSES);
const precisions = new Set<unknown>(GEOCODE_PRECISIONS);
const STATE = /^[A-Z]{2}$/;
const SOURCE = /^[a-z0-9._:-]+$/;

const isObject = (x: unknown): x is Json => typeof x === "object" && x !== null && !Array.isArray(x);
const isId = (x: unknown): x is number => typeof x === "number" && Number.isSafeInteger(x) && x >= 1;
const isNullableString = (x: unknown): x is string | null => x === null || typeof x === "string";
const inRange = (x: unknown, limit: number) => typeof x === "number" && !Number.isNaN(x) && x >= -limit && x <= limit;
/** `v.optional(schema, fallback)`: absent → fallback; present → must pass. */
const FAIL = Symbol("fail");
function opt<T>(x: unknown, ok: (x: unknown) => boolean, fallback: T): T | typeof FAIL {
  if (x === undefined) return fallback;
  return ok(x) ? (x as T) : FAIL;
}
const isBool = (x: unknown) => typeof x === "boolean";
const isNullableBool = (x: unknown) => x === null || typeof x === "boolean";

function venue(seq: number, x: unknown): UpstreamRecord | undefined {
  if (!isObject(x)) return undefined;
  const { id, name, city, state, timezone, latitude, longitude, geocodePrecision, visible } = x;
  if (!isId(id) || typeof name !== "string" || typeof city !== "string") return undefined;
  if (typeof state !== "string" || !STATE.test(state) || !isNullableString(timezone)) return undefined;
  if (latitude !== null && !inRange(latitude, 90)) return undefined;
  if (longitude !== null && !inRange(longitude, 180)) return undefined;
  if (geocodePrecision !== null && !precisions.has(geocodePrecision)) return undefined;
  if (typeof visible !== "boolean") return undefined;
  return {
    type: "venue",
    seq,
    venue: { id, name, city, state, timezone, latitude, longitude, geocodePrecision, visible } as never,
  };
}

function ticketLinks(x: unknown): Array<{ url: string; seller: string | null; broken: boolean }> | undefined {
  if (x === undefined) return [];
  if (!Array.isArray(x)) return undefined;
  const out = [];
  for (const l of x) {
    if (!isObject(l) || typeof l.url !== "string") return undefined;
    const seller = opt<string | null>(l.seller, isNullableString, null);
    const broken = opt<boolean>(l.broken, isBool, false);
    if (seller === FAIL || broken === FAIL) return undefined;
    out.push({ url: l.url, seller, broken });
  }
  return out;
}

function event(seq: number, x: unknown, isInstant: (s: string) => boolean): UpstreamRecord | undefined {
  if (!isObject(x)) return undefined;
  // Already-resolved fields are rare (a replica of another deployment): the schema reads them.
  if (x.resolved !== undefined) return undefined;
  const { id, venueId, title, slug, startDate, endDate, source, status } = x;
  if (!isId(id) || !isId(venueId) || typeof title !== "string" || typeof slug !== "string") return undefined;
  if (typeof startDate !== "string" || !isInstant(startDate)) return undefined;
  if (endDate !== null && (typeof endDate !== "string" || !isInstant(endDate))) return undefined;
  if (typeof source !== "string" || !SOURCE.test(source) || !statuses.has(status)) return undefined;
  const costText = opt<string | null>(x.costText, isNullableString, null);
  const isFree = opt<boolean | null>(x.isFree, isNullableBool, null);
  const isSoldOut = opt<boolean>(x.isSoldOut, isBool, false);
  const isLowTickets = opt<boolean>(x.isLowTickets, isBool, false);
  const age = opt<string | null>(x.age, isNullableString, null);
  const website = opt<string | null>(x.website, isNullableString, null);
  const websiteBroken = opt<boolean>(x.websiteBroken, isBool, false);
  const imageUrl = opt<string | null>(x.imageUrl, isNullableString, null);
  const categories = opt<string[]>(x.categories, (c) => Array.isArray(c) && c.every((s) => typeof s === "string"), []);
  const duplicateOf = opt<number | null>(x.duplicateOf, (d) => d === null || isId(d), null);
  const ticketed = opt<boolean>(x.ticketed, isBool, true);
  const links = ticketLinks(x.ticketLinks);
  if (
    costText === FAIL ||
    isFree === FAIL ||
    isSoldOut === FAIL ||
    isLowTickets === FAIL ||
    age === FAIL ||
    website === FAIL ||
    websiteBroken === FAIL ||
    imageUrl === FAIL ||
    categories === FAIL ||
    duplicateOf === FAIL ||
    ticketed === FAIL ||
    links === undefined
  ) {
    return undefined;
  }
  return {
    type: "event",
    seq,
    event: {
      id,
      venueId,
      title,
      slug,
      startDate,
      endDate,
      costText,
      isFree,
      isSoldOut,
      isLowTickets,
      age,
      website,
      websiteBroken,
      imageUrl,
      categories: [...categories],
      source,
      status: status as never,
      duplicateOf,
      ticketed,
      ticketLinks: links,
    },
  };
}

/** The record when it surely passes the schema, else undefined (then ask valibot). */
export function fastRecord(json: unknown, isInstant: (s: string) => boolean): UpstreamRecord | undefined {
  if (!isObject(json)) return undefined;
  const seq = json.seq;
  if (!isId(seq)) return undefined;
  switch (json.type) {
    case "venue":
      return venue(seq, json.venue);
    case "event":
      return event(seq, json.event, isInstant);
    case "delete":
      return (json.entity === "event" || json.entity === "venue") && isId(json.id)
        ? { type: "delete", seq, entity: json.entity, id: json.id }
        : undefined;
    default:
      return undefined;
  }
}
