/**
 * A delivered Event as the records the replica applies (docs/upstream-records.md, A replica of
 * another deployment): its venue as a venue record, itself as an event record whose served
 * fields are carried as already resolved (`resolved`), so the replica serves them as delivered.
 * Both are checked by the record schema, the one definition of what a replica may hold; a
 * delivered event that fails it ends the pass with what was wrong.
 */
import * as v from "valibot";
import {
  type EventRecord,
  EventRecord as EventSchema,
  type VenueRecord,
  VenueRecord as VenueSchema,
} from "../record-schema.ts";
import { PassCutShort } from "./errors.ts";

/** The stored `source` of an event when the scope names no source: the public Event has none. */
export const UNKNOWN_SOURCE = "upstream";

/**
 * One stored `source` that every token an event was delivered under matches again as a prefix
 * (`_` matching any one character, docs/api.md, Listing events), and that no other recorded token
 * matches unless the event's real source did: at each position, a literal character of any of
 * the tokens (they agree, all matching the same real source), else `_`, which only a `_` matches.
 */
export function mergedSource(tokens: readonly string[]): string {
  if (tokens.length === 0) return UNKNOWN_SOURCE;
  if (tokens.length === 1) return tokens[0];
  const length = Math.max(...tokens.map((t) => t.length));
  let out = "";
  for (let i = 0; i < length; i++) out += tokens.find((t) => i < t.length && t[i] !== "_")?.[i] ?? "_";
  return out;
}

export interface Delivered {
  venue: VenueRecord;
  event: EventRecord;
}

const issueText = (issues: readonly v.BaseIssue<unknown>[]) => {
  const issue = issues[0];
  const path = issue.path?.map((p) => p.key).join(".") ?? "";
  return path ? `${path}: ${issue.message}` : issue.message;
};

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null;

/**
 * The records of one delivered event (`seq` 0: numbered when applied). `source` and `aggregator`
 * are what the pass knows of them: the public Event carries neither.
 */
export function deliveredRecords(raw: unknown, source: string, aggregator: boolean | null): Delivered {
  const e = isObject(raw) ? raw : {};
  const venue = isObject(e.venue) ? e.venue : {};
  const venueRecord = v.safeParse(VenueSchema, {
    type: "venue",
    seq: 1,
    venue: {
      id: venue.id,
      name: venue.name,
      city: venue.city,
      state: venue.state,
      timezone: venue.timezone,
      latitude: venue.latitude,
      longitude: venue.longitude,
      geocodePrecision: venue.geocodePrecision,
      visible: true,
    },
  });
  if (!venueRecord.success) throw invalid(e.id, `venue.${issueText(venueRecord.issues)}`);
  const eventRecord = v.safeParse(EventSchema, {
    type: "event",
    seq: 1,
    event: {
      id: e.id,
      venueId: venue.id,
      title: e.title,
      slug: e.slug,
      startDate: e.startDate,
      endDate: e.endDate,
      costText: e.cost,
      isFree: e.isFree,
      isSoldOut: e.isSoldOut,
      isLowTickets: e.isLowTickets,
      age: e.age,
      website: e.website,
      websiteBroken: false,
      imageUrl: e.imageUrl,
      categories: e.categories,
      source,
      status: "active",
      duplicateOf: null,
      ticketed: true,
      ticketLinks: [],
      resolved: {
        eventUrl: e.eventUrl,
        ticketUrl: e.ticketUrl,
        cost: e.cost,
        ticketLinkStatus: e.ticketLinkStatus,
        aggregator,
      },
    },
  });
  if (!eventRecord.success) throw invalid(e.id, issueText(eventRecord.issues).replace(/^event\./, ""));
  return { venue: { ...venueRecord.output, seq: 0 }, event: { ...eventRecord.output, seq: 0 } };
}

function invalid(id: unknown, what: string): PassCutShort {
  return new PassCutShort(
    "error",
    `the upstream delivered an event (id ${String(id)}) this replica cannot hold: ${what}`,
  );
}

/** The fields the served venue is made of, to upsert a venue only when a pass sees it change. */
export const venueKey = (r: VenueRecord): string => JSON.stringify(r.venue);
