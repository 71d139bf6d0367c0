/**
 * The query parameters of `GET /v1/events` (docs/api.md, Parameters): one valibot schema
 * per parameter, each validating ONE raw query value and stamped with its error code, plus the
 * defaults and descriptions. The route validates with these and the OpenAPI document and the
 * MCP tool are generated from `LIST_PARAMETERS`, so they are the single source of truth.
 *
 * Schemas read `string → checks → transform → typed value → bounds`, so a JSON Schema of the
 * converted value (to-json-schema `typeMode: "output"`) shows integers, booleans and enums.
 * Rules that span several values (empty values dropped, repeats, comma splitting) live in
 * server/list/parse.ts, which applies these schemas in the documented order.
 */
import * as v from "valibot";
import { AGGREGATOR_VENDORS, LIST, TRIAL, US_STATES } from "../db/contract.ts";
import { parseIsoInstant } from "../db/instant.ts";
import { LatitudeParam, LongitudeParam, PolygonParam, RadiusParam } from "./params-geo.ts";

/** docs/api.md, Listing events: booleans are exactly `true` or `false`. */
const booleanParam = (code: string, description: string) =>
  v.message(
    v.pipe(
      v.picklist(["true", "false"]),
      v.transform((s) => s === "true"),
      v.boolean(),
      v.description(description),
    ),
    code,
  );

/** `YYYY-MM-DD` (midnight UTC) or an RFC 3339 date-time; no offset means UTC (docs/api.md, Listing events). */
export function parseListDate(text: string): number | null {
  return /^\d{4}-\d{2}-\d{2}$/.test(text) ? parseIsoInstant(`${text}T00:00:00Z`) : parseIsoInstant(text);
}

const DATE_SHAPE = /^\d{4}-\d{2}-\d{2}(?:[Tt]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:[Zz]|[+-]\d{2}:\d{2})?)?$/;

const dateParam = (description: string) =>
  v.message(
    v.pipe(
      v.string(),
      v.regex(DATE_SHAPE),
      v.check((s) => parseListDate(s) !== null),
      v.transform((s) => parseListDate(s)!),
      v.number(),
      // Published as the string it is on the wire (server/openapi-params.ts reads this).
      v.metadata({ openapi: { type: "string" } }),
      v.description(description),
    ),
    "invalid_date",
  );

/** docs/api.md, Listing events: a source token; `_` is a one-character wildcard in the match. */
const SOURCE_TOKEN_BODY = `[a-z0-9][a-z0-9._:-]{0,${LIST.maxSourceLength - 1}}`;
export const SOURCE_TOKEN = new RegExp(`^${SOURCE_TOKEN_BODY}$`);

/**
 * The raw values the route accepts, as sent, for the published document: what server/list/parse.ts
 * takes before it trims, drops empty values and splits on commas. JavaScript's `trim` and `\s`
 * remove the same characters, and neither alternative can match a space or a comma, so each
 * pattern matches one way only (no backtracking blow-up in a validator).
 */
export const WIRE_PATTERNS = {
  /** Two letters of one of the 51 codes in either case, spaces around; or nothing but spaces. */
  state: `^\\s*(?:(?:${US_STATES.map((code) => [...code].map((c) => `[${c}${c.toLowerCase()}]`).join("")).join("|")})\\s*)?$`,
  /** Source tokens separated by commas, each with spaces around; empty pieces allowed. */
  source: `^\\s*(?:${SOURCE_TOKEN_BODY}\\s*)?(?:,\\s*(?:${SOURCE_TOKEN_BODY}\\s*)?)*$`,
} as const;

export const StateParam = v.message(
  v.pipe(
    v.string(),
    v.trim(),
    // ASCII letters only: Unicode case mapping turns "ı" into "I" and "ſ" into "S", so a
    // non-ASCII value could otherwise fold into a code (docs/api.md, Parameters).
    v.regex(/^[A-Za-z]{2}$/),
    v.toUpperCase(),
    v.picklist(US_STATES),
    v.description(
      `Venue state, two letters, case-insensitive: one of the ${US_STATES.length} US codes (50 states plus DC): ` +
        `${US_STATES.join(", ")}. An empty or whitespace-only value is dropped.`,
    ),
  ),
  "invalid_state",
);

export const CityParam = v.pipe(
  v.string(),
  v.description(
    "Exact, case-sensitive venue city. A misspelt city returns an empty page. An empty value is dropped. " +
      "Combine with `state` to disambiguate. Repeated, the same city counts once; two different cities " +
      "match nothing (no venue is in both).",
  ),
);

export const StartsAfterParam = dateParam(
  "ISO 8601 date (`YYYY-MM-DD`, midnight UTC) or date-time (no offset means UTC). The window opens at this " +
    "instant; default now. Events that have not ended by it are returned, including earlier-started events " +
    "still running. Beyond the plan's lookahead horizon: 403 `lookahead_not_in_plan`.",
);

export const StartsBeforeParam = dateParam(
  `Latest \`startDate\` returned. Default \`starts_after\` + ${LIST.defaultWindowDays} days ` +
    `(${LIST.defaultGeoWindowDays} for geo queries), capped by the plan's lookahead horizon. An explicit value beyond ` +
    `the horizon gives 403 \`lookahead_not_in_plan\`; otherwise it is clamped to \`starts_after\` + ${LIST.maxWindowDays} ` +
    `days (${LIST.maxGeoWindowDays} for geo). Not after \`starts_after\`: 400 \`invalid_date_range\`.`,
);

export const SourceTokenParam = v.message(
  v.pipe(
    v.string(),
    v.maxLength(LIST.maxSourceLength),
    v.regex(SOURCE_TOKEN),
    v.description(
      "A source prefix: a bare vendor name `<vendor>` or the internal token `scraper:<vendor>`, at most " +
        `${LIST.maxSourceLength} characters of \`a-z 0-9 . _ : -\`, starting with a letter or digit. Repeatable ` +
        "and comma-separated; matched as a prefix, `_` matching any one character. Empty values are dropped.",
    ),
  ),
  "invalid_source",
);

export const ExcludeAggregatorsParam = booleanParam(
  "invalid_exclude_aggregators",
  `When true, omits events sourced from the ${AGGREGATOR_VENDORS.length} major ticketing aggregators ` +
    `(${AGGREGATOR_VENDORS.join(", ")}).`,
);

export const ExcludeSoldOutParam = booleanParam(
  "invalid_exclude_sold_out",
  "When true, omits events flagged `isSoldOut`.",
);

export const LimitParam = v.message(
  v.pipe(
    v.string(),
    v.regex(/^[0-9]+$/),
    v.transform(Number),
    v.number(),
    v.integer(),
    v.minValue(LIST.minLimit),
    v.maxValue(LIST.maxLimit),
    v.description(
      `Events per page, ${LIST.minLimit}..${LIST.maxLimit}, decimal digits only. Trial pages are clamped to ` +
        `${TRIAL.maxRowsPerPage} and to the remaining trial allowance. May change between pages of one traversal.`,
    ),
  ),
  "invalid_limit",
);

export const CursorParam = v.message(
  v.pipe(
    v.string(),
    v.regex(/^[A-Za-z0-9_-]+={0,2}$/),
    v.maxLength(512),
    v.description(
      "Opaque token from `page.nextCursor`; send it with the same filters and dates. Omitting it restarts at " +
        "page one. A changed filter or date gives 400 `invalid_cursor` (`limit` may change).",
    ),
  ),
  "invalid_cursor",
);

export const IncludeCentroidsParam = booleanParam(
  "invalid_include_centroids",
  "When true, a geo filter also admits venues whose `geocodePrecision` is `zip`, `city` or null; without it " +
    "only `street` and `unknown`. Without a geo filter it changes no result, but it is part of the cursor's " +
    "filter fingerprint.",
);

export const LIST_DEFAULTS = {
  limit: LIST.defaultLimit,
  excludeAggregators: false,
  excludeSoldOut: false,
  includeCentroids: false,
} as const;

/** One parameter as published: the schema validates one raw value. */
export interface ListParameter {
  name: string;
  schema: v.GenericSchema;
  description: string;
  default?: unknown;
  /** Taken more than once (`source`, also comma-separated; `city`, see its description). */
  repeatable?: boolean;
  /** The pattern of a raw value as sent, when the route accepts more than the schema's own checks (WIRE_PATTERNS). */
  wirePattern?: string;
}

const described = (schema: v.GenericSchema): string => {
  const pipe = (schema as { pipe?: Array<{ type: string; description?: string }> }).pipe ?? [];
  return pipe.find((p) => p.type === "description")?.description ?? "";
};

/** Every parameter of `GET /v1/events`, in docs/api.md table's order. */
export const LIST_PARAMETERS: ListParameter[] = [
  { name: "state", schema: StateParam, description: described(StateParam), wirePattern: WIRE_PATTERNS.state },
  { name: "city", schema: CityParam, description: described(CityParam), repeatable: true },
  { name: "starts_after", schema: StartsAfterParam, description: described(StartsAfterParam) },
  { name: "starts_before", schema: StartsBeforeParam, description: described(StartsBeforeParam) },
  {
    name: "source",
    schema: SourceTokenParam,
    description: described(SourceTokenParam),
    repeatable: true,
    wirePattern: WIRE_PATTERNS.source,
  },
  {
    name: "exclude_aggregators",
    schema: ExcludeAggregatorsParam,
    description: described(ExcludeAggregatorsParam),
    default: LIST_DEFAULTS.excludeAggregators,
  },
  {
    name: "exclude_sold_out",
    schema: ExcludeSoldOutParam,
    description: described(ExcludeSoldOutParam),
    default: LIST_DEFAULTS.excludeSoldOut,
  },
  { name: "limit", schema: LimitParam, description: described(LimitParam), default: LIST_DEFAULTS.limit },
  { name: "cursor", schema: CursorParam, description: described(CursorParam) },
  { name: "lat", schema: LatitudeParam, description: described(LatitudeParam) },
  { name: "lng", schema: LongitudeParam, description: described(LongitudeParam) },
  { name: "radius_miles", schema: RadiusParam, description: described(RadiusParam) },
  { name: "polygon", schema: PolygonParam, description: described(PolygonParam) },
  {
    name: "include_centroids",
    schema: IncludeCentroidsParam,
    description: described(IncludeCentroidsParam),
    default: LIST_DEFAULTS.includeCentroids,
  },
];

/**
 * The parameters a current cursor's fingerprint covers (docs/api.md, Pagination): every
 * filter, dates as sent, `include_centroids` included; `limit` and `cursor` excluded.
 */
export const FINGERPRINTED_PARAMS = LIST_PARAMETERS.map((p) => p.name).filter((n) => n !== "limit" && n !== "cursor");
