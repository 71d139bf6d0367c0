/**
 * A row of the upstream tables as the record it stands for (docs/upstream-records.md,
 * "PostgreSQL tables"): the same fields in snake_case, checked by the same schema as an NDJSON line,
 * so a row and the line with the same fields are served alike. Values come either from JSON
 * (the initial copy: row_to_json) or from the replication stream (the client's type parsers:
 * Date, boolean, arrays, parsed jsonb, bigint as a string); both shapes are read here.
 */
import * as v from "valibot";
import { isoUtc, parseIsoInstant } from "../../db/instant.ts";
import { fastRecord } from "../fast-records.ts";
import { UpstreamRecord } from "../records.ts";
import type { UpstreamTable } from "./schema.ts";

export type Row = Record<string, unknown>;

export type RowOutcome = { record: UpstreamRecord } | { reason: string };

/** bigint columns: JSON gives numbers, the stream's parser strings. */
function int(value: unknown): unknown {
  if (typeof value === "string" && /^-?\d+$/.test(value)) return Number(value);
  return value;
}

/** timestamptz: a Date from the stream, ISO text from JSON; kept as the record's string form. */
function instant(value: unknown): unknown {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? "invalid" : isoUtc(value.getTime());
  return value;
}

/** jsonb arrives parsed from the stream and as JSON within JSON from the copy; text only if cast. */
function json(value: unknown): unknown {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

function venueRecord(row: Row, seq: number): unknown {
  return {
    type: "venue",
    seq,
    venue: {
      id: int(row.id),
      name: row.name,
      city: row.city,
      state: row.state,
      timezone: row.timezone,
      latitude: row.latitude,
      longitude: row.longitude,
      geocodePrecision: row.geocode_precision,
      visible: row.visible,
    },
  };
}

function eventRecord(row: Row, seq: number): unknown {
  return {
    type: "event",
    seq,
    event: {
      id: int(row.id),
      venueId: int(row.venue_id),
      title: row.title,
      slug: row.slug,
      startDate: instant(row.start_date),
      endDate: instant(row.end_date),
      costText: row.cost_text,
      isFree: row.is_free,
      isSoldOut: row.is_sold_out,
      isLowTickets: row.is_low_tickets,
      age: row.age,
      website: row.website,
      websiteBroken: row.website_broken,
      imageUrl: row.image_url,
      categories: json(row.categories),
      source: row.source,
      status: row.status,
      duplicateOf: int(row.duplicate_of),
      ticketed: row.ticketed,
      ticketLinks: json(row.ticket_links),
    },
  };
}

const isInstant = (s: string) => parseIsoInstant(s) !== null;

/** The record a row stands for, or why it breaks the record rules (the field and the rule). */
export function recordOfRow(table: UpstreamTable, row: Row, seq: number): RowOutcome {
  // Not Object.entries: its arrays, one a column, were 3 % of the initial copy's CPU profile.
  for (const column in row) {
    // A value the stream left out: PostgreSQL does not resend an unchanged out-of-line (TOAST) value.
    if (row[column] === undefined)
      return { reason: `${column}: unchanged large value not sent; set REPLICA IDENTITY FULL on the table` };
  }
  const candidate = table === "venues" ? venueRecord(row, seq) : eventRecord(row, seq);
  // The NDJSON path's fast check first; valibot decides (and words the reason) when it is unsure.
  const fast = fastRecord(candidate, isInstant);
  if (fast) return { record: fast };
  const result = v.safeParse(UpstreamRecord, candidate);
  if (result.success) return { record: result.output };
  const issue = result.issues[0];
  const path =
    issue.path
      ?.slice(1)
      .map((p) => p.key)
      .join(".") ?? "";
  return { reason: `${path ? `${path}: ` : ""}${issue.message}` };
}

/** The id of a row or of a deleted row's key, as a number (NaN when it has none). */
export function idOfRow(row: Row): number {
  return Number(int(row.id));
}
