/**
 * The query parameters of `GET /v1/events` for the OpenAPI document and the MCP `search_events`
 * tool, read from the valibot schemas the route validates with.
 *
 * Query values arrive as strings, and the route's schemas say so: `string → trim → regex →
 * transform(Number) → minValue …`. @valibot/to-json-schema stops at the first transform, which
 * would publish `limit` as a bare string. So this module walks the same pipes itself and
 * publishes the value after conversion: a number when numeric checks follow the conversion,
 * a boolean for the exact `true`/`false` picklist (CONTRACT §5), and every bound, pattern,
 * enum, default and description as the schema states it.
 */
import * as v from "valibot";
import { AGGREGATOR_VENDORS, LIST, TRIAL, US_STATES } from "../db/contract.ts";
import { LatitudeParam, LongitudeParam, PolygonParam, RadiusParam } from "./params-geo.ts";

/** A JSON Schema object as published (OpenAPI 3.1 uses JSON Schema 2020-12). */
export type JsonSchema = Record<string, unknown>;

type AnySchema = v.GenericSchema & { pipe?: readonly PipeItem[] };
type PipeItem = { kind: string; type: string; requirement?: unknown; options?: unknown; description?: string; metadata?: unknown };

/** One published query parameter. */
export interface QueryParameter {
  name: string;
  in: "query";
  required: false;
  description: string;
  schema: JsonSchema;
  style?: "form";
  explode?: boolean;
}

export interface ParameterSource {
  name: string;
  /** The schema the route validates one raw value with. */
  schema: v.GenericSchema;
  description: string;
  /** The default the route applies when the parameter is absent (absent = no default). */
  default?: unknown;
  /** Repeatable and comma-separated (spec: `source`). */
  repeatable?: boolean;
}

/** A schema as the flat sequence of what it does to a value: nested pipes and wrappers unrolled. */
function flatten(node: AnySchema | PipeItem): PipeItem[] {
  const n = node as AnySchema & PipeItem & { wrapped?: AnySchema; default?: unknown };
  if (n.kind !== "schema") return [n];
  if (n.pipe) return [...flatten(n.pipe[0] as PipeItem), ...n.pipe.slice(1).flatMap((p) => flatten(p))];
  if (n.wrapped) {
    const hasDefault = n.default !== undefined && typeof n.default !== "function";
    return [...(hasDefault ? [{ kind: "default", type: "default", requirement: n.default }] : []), ...flatten(n.wrapped)];
  }
  return [n];
}

/** The JSON Schema of a query parameter's value after the route's conversion. */
export function describeQueryValue(schema: v.GenericSchema): JsonSchema {
  const out: Record<string, unknown> = {};
  let converted = false;
  let numeric = false;
  for (const item of flatten(schema as AnySchema)) {
    const req = item.requirement;
    if (item.kind === "default") out.default = req;
    else if (item.kind === "schema") {
      if (item.type === "picklist") out.enum = [...(item.options as unknown[])];
      if (item.type === "string" || item.type === "picklist") out.type ??= "string";
      if (item.type === "number") out.type = "number";
      if (item.type === "boolean") out.type = "boolean";
    } else if (item.kind === "transformation") {
      if (item.type === "transform") converted = true;
    } else if (item.kind === "metadata") {
      if (item.type === "description") out.description = item.description;
      if (item.type === "metadata") Object.assign(out, (item.metadata as { openapi?: object } | undefined)?.openapi ?? {});
    } else if (item.kind === "validation") {
      switch (item.type) {
        case "min_value": numeric = true; out.minimum = req; break;
        case "max_value": numeric = true; out.maximum = req; break;
        case "gt_value": numeric = true; out.exclusiveMinimum = req; break;
        case "lt_value": numeric = true; out.exclusiveMaximum = req; break;
        case "finite": numeric = true; break;
        case "integer": case "safe_integer": numeric = true; out.type = "integer"; break;
        // Raw-string rules describe the value only until it is converted.
        case "regex": if (!converted) out.pattern = (req as RegExp).source; break;
        case "max_length": if (!converted) out.maxLength = req; break;
        case "min_length": if (!converted) out.minLength = req; break;
      }
    }
  }
  if (numeric && out.type !== "integer") out.type = "number";
  // CONTRACT §5: booleans are exactly `true` or `false`; publish them as booleans.
  if (Array.isArray(out.enum) && out.enum.length === 2 && out.enum.includes("true") && out.enum.includes("false")) {
    delete out.enum;
    out.type = "boolean";
  }
  if (out.type !== "string") {
    delete out.pattern;
    delete out.maxLength;
    delete out.minLength;
  }
  return out;
}

/** An OpenAPI parameter object from a parameter's source. */
export function toQueryParameter(source: ParameterSource): QueryParameter {
  const value = describeQueryValue(source.schema);
  const description = source.description || String(value.description ?? "");
  delete value.description;
  if (source.default !== undefined) value.default = source.default;
  if (source.repeatable) {
    return {
      name: source.name, in: "query", required: false, description,
      schema: { type: "array", items: value },
      style: "form", explode: true,
    };
  }
  return { name: source.name, in: "query", required: false, description, schema: value };
}

// ---- The parameters of GET /v1/events, in the spec table's order ------------------------------
// Geo schemas are the route's own (server/params-geo.ts). The others are described here from
// db/contract.ts until the route's parameter module exports its schemas.
const bool = (code: string) => v.message(v.picklist(["true", "false"]), code);
const isoDateOrTime = v.pipe(
  v.string(),
  v.regex(/^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})?)?$/i),
);

export const LIST_PARAMETER_SOURCES: ParameterSource[] = [
  {
    name: "state",
    schema: v.picklist(US_STATES),
    description: `Venue state, two letters, case-insensitive: one of the ${US_STATES.length} US codes (50 states plus DC). Unrecognized → 400 \`invalid_state\`. An empty value is dropped.`,
  },
  {
    name: "city",
    schema: v.string(),
    description: "Exact, case-sensitive venue city. A misspelt city returns an empty page. An empty value is dropped. Combine with `state` to disambiguate.",
  },
  {
    name: "starts_after",
    schema: isoDateOrTime,
    description: "ISO 8601 date (`YYYY-MM-DD`, midnight UTC) or date-time (no offset = UTC). Window opens at this instant; default now. Events not ended by it are returned, so `startDate` can precede it. Unparsable → 400 `invalid_date`; beyond the plan's lookahead → 403 `lookahead_not_in_plan`.",
  },
  {
    name: "starts_before",
    schema: isoDateOrTime,
    description: `Latest \`startDate\` returned. Default: \`starts_after\` + ${LIST.defaultWindowDays} days (${LIST.defaultGeoWindowDays} for geo queries), capped by the plan's lookahead; clamped to + ${LIST.maxWindowDays} days (${LIST.maxGeoWindowDays} for geo). Not after \`starts_after\` → 400 \`invalid_date_range\`.`,
  },
  {
    name: "source",
    schema: v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9._:-]*$/), v.maxLength(LIST.maxSourceLength)),
    repeatable: true,
    description: "One or more source prefixes (`<vendor>` or `scraper:<vendor>`), repeatable or comma-separated, matched as a prefix; `_` matches any one character. Bad shape → 400 `invalid_source`; a well-formed token naming nothing returns an empty page.",
  },
  {
    name: "exclude_aggregators",
    schema: bool("invalid_exclude_aggregators"),
    default: false,
    description: `When true, omits events sourced from the ${AGGREGATOR_VENDORS.length} major ticketing aggregators (${AGGREGATOR_VENDORS.join(", ")}).`,
  },
  {
    name: "exclude_sold_out",
    schema: bool("invalid_exclude_sold_out"),
    default: false,
    description: "When true, omits events flagged `isSoldOut`.",
  },
  {
    name: "limit",
    schema: v.pipe(v.string(), v.regex(/^\d+$/), v.transform(Number), v.integer(), v.minValue(LIST.minLimit), v.maxValue(LIST.maxLimit)),
    default: LIST.defaultLimit,
    description: `Events per page, ${LIST.minLimit}..${LIST.maxLimit}. Trial pages are clamped to ${TRIAL.maxRowsPerPage} and to the remaining allowance. May change between pages of one traversal.`,
  },
  {
    name: "cursor",
    schema: v.string(),
    description: "Opaque token from `page.nextCursor`. Omitting it restarts at page one. Replayed with changed filters or dates → 400 `invalid_cursor`.",
  },
  { name: "lat", schema: LatitudeParam, description: "" },
  { name: "lng", schema: LongitudeParam, description: "" },
  { name: "radius_miles", schema: RadiusParam, description: "" },
  { name: "polygon", schema: PolygonParam, description: "" },
  {
    name: "include_centroids",
    schema: bool("invalid_include_centroids"),
    default: false,
    description: "When true, a geo filter also admits venues whose `geocodePrecision` is `zip`, `city` or null; without it only `street` and `unknown`. Part of the cursor's filter fingerprint.",
  },
];

/** The OpenAPI parameter objects of GET /v1/events. */
export function listParameters(): QueryParameter[] {
  return LIST_PARAMETER_SOURCES.map(toQueryParameter);
}
