/**
 * The contract's constants: limits, horizons, windows, taxonomies and error codes.
 * Validation, the ledger, the pages and the OpenAPI document all read these, so they cannot drift.
 * It lives in db/ because db/ is the lowest layer: db/, sync/ and server/ may all import it.
 */

export const SPEC_VERSION = "1.7.1";

export const DAY_MS = 86_400_000;
export const MINUTE_MS = 60_000;

/** The list parameters' limits (docs/api.md, Parameters). */
export const LIST = {
  defaultLimit: 25,
  minLimit: 1,
  maxLimit: 100,
  defaultWindowDays: 90,
  defaultGeoWindowDays: 30,
  maxWindowDays: 365,
  maxGeoWindowDays: 90,
  maxRadiusMiles: 25,
  minPolygonVertices: 3,
  maxPolygonVertices: 32,
  maxPolygonDiagonalMiles: 50,
  geoCandidateVenues: 2000,
  maxSourceLength: 64,
} as const;

/** Parameters that signal offset pagination: always 400 `unsupported_pagination`. */
export const UNSUPPORTED_PAGINATION_PARAMS = ["page", "offset", "next_cursor", "nextCursor"] as const;

/** The 50 states plus DC. */
export const US_STATES = [
  "AL",
  "AK",
  "AZ",
  "AR",
  "CA",
  "CO",
  "CT",
  "DE",
  "DC",
  "FL",
  "GA",
  "HI",
  "ID",
  "IL",
  "IN",
  "IA",
  "KS",
  "KY",
  "LA",
  "ME",
  "MD",
  "MA",
  "MI",
  "MN",
  "MS",
  "MO",
  "MT",
  "NE",
  "NV",
  "NH",
  "NJ",
  "NM",
  "NY",
  "NC",
  "ND",
  "OH",
  "OK",
  "OR",
  "PA",
  "RI",
  "SC",
  "SD",
  "TN",
  "TX",
  "UT",
  "VT",
  "VA",
  "WA",
  "WV",
  "WI",
  "WY",
] as const;

/** docs/upstream-records.md: the 21-category taxonomy, in display order. */
export const CATEGORIES = [
  "Music",
  "Comedy",
  "Theater",
  "Dance",
  "Festivals",
  "Sports",
  "Food & Drink",
  "Arts",
  "Film",
  "Family",
  "Community",
  "Nightlife",
  "Classes & Workshops",
  "Literature",
  "Fitness",
  "Outdoors",
  "Tours",
  "Charity",
  "Business & Networking",
  "Holiday",
  "Other",
] as const;

/** docs/upstream-records.md: vendors that `exclude_aggregators=true` omits. */
export const AGGREGATOR_VENDORS = [
  "ticketmaster",
  "livenation",
  "axs",
  "eventbrite",
  "seatgeek",
  "stubhub",
  "vividseats",
  "gametime",
] as const;

/**
 * The stored vendor of an event known only to come from some aggregator: a replica of another
 * deployment learns that, not which one (docs/upstream-records.md, Already-resolved fields). A real
 * vendor never holds a parenthesis, so the mark names none.
 */
export const UNNAMED_AGGREGATOR = "(aggregator)";

/** Stored vendors `exclude_aggregators=true` omits: the eight, and the unnamed one. */
export const AGGREGATOR_VENDOR_VALUES = [...AGGREGATOR_VENDORS, UNNAMED_AGGREGATOR] as const;

/** docs/upstream-records.md: sellers a ticket handoff may send a user to. */
export const HANDOFF_SELLERS = [...AGGREGATOR_VENDORS, "dice", "etix", "seetickets", "tixr"] as const;

export const GEOCODE_PRECISIONS = ["street", "zip", "city", "unknown"] as const;
/** Without `include_centroids` a geo filter admits only these, null excluded too (docs/api.md, Geo search). */
export const PRECISE_GEOCODES = ["street", "unknown"] as const;

export const EVENT_STATUSES = ["active", "cancelled", "spam", "inactive"] as const;

/** docs/upstream-records.md: `costText` values that mean free admission (compared trimmed, case-insensitive). */
export const FREE_COST_TEXTS = ["free", "free admission", "free entry", "no cover", "$0", "0"] as const;

/** Events lasting longer than this are "long" in the serving snapshot (see db/snapshot.ts). */
export const LONG_EVENT_MS = DAY_MS;

// ---- Service URLs (docs/upstream-records.md; docs/api.md, Ticket handoffs): the shapes the API hands out and the pages answer ------

/**
 * `eventUrl`. The slug is percent-encoded so any upstream slug still makes one path segment. An
 * event of another deployment keeps the page its upstream delivered (`eventUrl` given).
 */
export function eventUrlFor(baseUrl: string, e: { id: number; slug: string; eventUrl?: string | null }): string {
  return e.eventUrl ?? `${baseUrl}/events/${e.id}/${encodeURIComponent(e.slug)}`;
}

/** `ticketUrl`: a service URL that 302-redirects to the event's first ticket destination. */
export function ticketUrlFor(baseUrl: string, eventId: number): string {
  return `${baseUrl}/t/${eventId}`;
}

/**
 * The `ticketUrl` served: the upstream's own when another deployment delivered it
 * (docs/upstream-records.md, Already-resolved fields), else this service's redirect when the
 * event has a destination, else null.
 */
export function servedTicketUrl(
  baseUrl: string,
  e: { id: number; ticketDestination: string | null; ticketUrl: string | null },
): string | null {
  return e.ticketUrl ?? (e.ticketDestination === null ? null : ticketUrlFor(baseUrl, e.id));
}

// ---- Access (docs/api.md, Plans and access) -------------------------------------------------------------------

export const PLANS = ["none", "basic", "business", "enterprise", "legacy"] as const;
export type Plan = (typeof PLANS)[number];
export const KEY_KINDS = ["live", "builder", "legacy"] as const;
export type KeyKind = (typeof KEY_KINDS)[number];
export const POLICY_STATES = ["ok", "missing", "stale", "foreign"] as const;
export type PolicyState = (typeof POLICY_STATES)[number];

export interface Tier {
  horizonDays: number | null;
  polygons: boolean;
  rowBudget24h: number | null;
}

export const TIERS: Record<Exclude<Plan, "none">, Tier> = {
  basic: { horizonDays: 30, polygons: false, rowBudget24h: 100_000 },
  business: { horizonDays: 90, polygons: true, rowBudget24h: 500_000 },
  enterprise: { horizonDays: null, polygons: true, rowBudget24h: null }, // budget per account
  legacy: { horizonDays: null, polygons: true, rowBudget24h: null },
};

export const TRIAL = {
  days: 7,
  rows: 1000,
  maxRowsPerPage: 25,
  horizonDays: 30,
  polygons: false,
  ratePerMinute: 60,
  capacityRetryAfterS: 5,
} as const;

export const RATE = {
  publishedLimit: 60,
  capacity: 60,
  refillPerSecond: 1,
  geoCost: 5,
} as const;

/**
 * Access bookkeeping docs/api.md leaves to the implementation (docs/api.md, Plans and access).
 */
export const ACCESS = {
  /** A row reservation not settled by then is void, so a crashed request cannot hold rows forever. */
  reservationTtlMs: 30_000,
  /** The row allowance is an exact rolling 24 hours (docs/api.md, Row budgets). */
  rowBudgetWindowMs: DAY_MS,
  /** Retry-After when requests in flight hold the rest of a row budget (not yet delivered). */
  budgetHeldRetryAfterS: 1,
  /** Request-path ledger writes give up after this, answering 503 rather than hanging. */
  ledgerBusyTimeoutMs: 1500,
  /**
   * Entries in each per-process cache of keys and accounts (a few hundred bytes each). Clients
   * cycling through more keys than this miss on every request: two ledger reads each.
   */
  cacheEntries: 50_000,
} as const;

export const HANDOFF = {
  lifetimeMs: 15 * MINUTE_MS,
  creationsPerMinute: 10,
  maxBodyBytes: 1024,
  retryAfterS: 60,
  maxEventId: 2147483647,
} as const;

// ---- The developer portal (docs/api.md, "Developer portal") -----------------------------

/**
 * Owners manage their own keys at `/developers/keys`. The ceilings keep a leaked session from
 * minting keys without bound; the lifetimes keep a forwarded link or a forgotten browser short-lived.
 */
export const PORTAL = {
  /** A sign-in link works once, within this long of being issued. */
  signInLinkTtlMs: 15 * MINUTE_MS,
  /** A session lasts this long from sign-in, then the owner asks for a new link. */
  sessionTtlMs: 12 * 60 * MINUTE_MS,
  sessionCookie: "mq_session",
  /** Active (unrevoked) keys an account may hold unless the operator sets its own `key_limit`. */
  defaultKeyLimit: 10,
  /** Keys an owner may create per account in any rolling window of `issuanceWindowMs`. */
  issuancePerWindow: 10,
  issuanceWindowMs: 60 * MINUTE_MS,
  maxLabelLength: 64,
  /** Random base62 characters of sign-in tokens, session ids and CSRF tokens (about 190 bits). */
  tokenChars: 32,
} as const;

/** Portal error codes (list envelope) with their status. */
export const PORTAL_ERRORS = {
  invalid_request: 400,
  invalid_session: 401,
  invalid_csrf_token: 403,
  not_found: 404,
  key_limit_reached: 409,
  key_issuance_rate_limited: 429,
  internal_error: 500,
} as const;
export type PortalErrorCode = keyof typeof PORTAL_ERRORS;

// ---- The HTTP layer (docs/api.md, What the HTTP layer refuses) -----------------------------

export const HTTP_LIMITS = {
  /** A request head (its URL and header fields) longer than this answers 431 in the envelope. */
  maxHeadBytes: 16 * 1024,
  /**
   * What Bun's own parser reads of a head before it answers a bare 431 itself: set above
   * `maxHeadBytes` (bin/find-bun.js BUN_SERVE_ARGS) so the heads between reach Marquee's envelope.
   */
  parserHeadBytes: 512 * 1024,
} as const;

// ---- Errors (docs/api.md) -----------------------------------------------------------------

/** Every list-endpoint error code with its status (docs/api.md, Errors). */
export const LIST_ERRORS = {
  invalid_api_key: 401,
  subscription_required: 402,
  trial_expired: 402,
  trial_exhausted: 402,
  email_verification_required: 403,
  feature_not_in_plan: 403,
  lookahead_not_in_plan: 403,
  account_not_provisioned: 403,
  trial_capacity_reserved: 429,
  rate_limited: 429,
  row_budget_exhausted: 429,
  unsupported_pagination: 400,
  invalid_limit: 400,
  invalid_date: 400,
  invalid_date_range: 400,
  invalid_cursor: 400,
  invalid_state: 400,
  invalid_source: 400,
  invalid_exclude_aggregators: 400,
  invalid_exclude_sold_out: 400,
  invalid_include_centroids: 400,
  invalid_coordinates: 400,
  invalid_radius: 400,
  invalid_polygon: 400,
  conflicting_geo_filters: 400,
  rate_limit_unavailable: 503,
  policy_unavailable: 503,
  trial_unavailable: 503,
  internal_error: 500,
  not_found: 404,
  request_header_too_large: 431,
} as const;
export type ListErrorCode = keyof typeof LIST_ERRORS;

/**
 * Codes of requests no route takes (unknown paths and methods, malformed URLs): in the list
 * envelope, but never an answer of `GET /v1/events` itself. Every route may answer
 * `request_header_too_large` (docs/api.md, What the HTTP layer refuses), the list endpoint included.
 */
export const UNROUTED_ERRORS: readonly ListErrorCode[] = ["not_found"];

/** Ticket-handoff error codes. `invalid_request` is 400 or 413 (body too large). */
export const HANDOFF_ERRORS = {
  invalid_request: 400,
  invalid_api_key: 401,
  event_unavailable: 404,
  ticket_link_unavailable: 409,
  rate_limit_exceeded: 429,
  rate_limit_unavailable: 503,
  handoff_unavailable: 503,
  internal_error: 500,
} as const;
export type HandoffErrorCode = keyof typeof HANDOFF_ERRORS;

/**
 * Codes `/_test/faults` can inject (docs/api.md, Test mode): every code of the list and handoff
 * error tables that `GET /v1/events` or `POST /v1/ticket-handoffs` answers (not `not_found`, which
 * no route answers, nor the HTTP layer's 431), plus `delay` (the real answer, late) and `reset`
 * (the connection closed without an answer).
 */
export type ListFaultCode = Exclude<ListErrorCode, "not_found" | "request_header_too_large">;
export const LIST_FAULT_CODES = (Object.keys(LIST_ERRORS) as ListErrorCode[]).filter(
  (code): code is ListFaultCode => code !== "not_found" && code !== "request_header_too_large",
);
export const HANDOFF_FAULT_CODES = Object.keys(HANDOFF_ERRORS) as HandoffErrorCode[];
export const FAULT_BEHAVIOURS = ["delay", "reset"] as const;
export type FaultCode = ListFaultCode | HandoffErrorCode | (typeof FAULT_BEHAVIOURS)[number];
export const FAULT_CODES: readonly FaultCode[] = [
  ...new Set<FaultCode>([...LIST_FAULT_CODES, ...HANDOFF_FAULT_CODES, ...FAULT_BEHAVIOURS]),
];

/** Test-mode faults (docs/api.md, Test mode): bounds of a fault's uses and of a delay. */
export const TEST_FAULTS = { maxTimes: 1_000_000, maxDelayMs: 300_000 } as const;

/** Retry-After seconds for 503s of the list endpoint. */
export const UNAVAILABLE_RETRY_AFTER_S = {
  rate_limit_unavailable: 1,
  policy_unavailable: 1,
  trial_unavailable: 5,
} as const;

// ---- Sync and demo data (docs/operations.md, The program; docs/upstream-records.md) ----------------------------------------------------

export const SYNC = {
  /** Records per transaction: big enough to amortize commits, small enough to resume cheaply. */
  batchSize: 20_000,
  /** Bytes read from a file source at a time. */
  readChunkBytes: 4 * 1024 * 1024,
  /** `sync --follow` on a file: how often it looks for appended lines. */
  followPollMs: 250,
  /** `sync --follow` on an http(s) source: how often it asks the server for appended lines. */
  httpFollowPollMs: 2000,
  /** `sync --follow`: least time between snapshot refreshes while records keep arriving. */
  followSnapshotMs: 5000,
  /** Page cache while a sync runs (random index inserts of a bulk load need it). */
  bulkCacheKiB: 256 * 1024,
  /** `marquee sync` waits this long for a server's write (e.g. a snapshot refresh) to finish. */
  cliBusyTimeoutMs: 120_000,
} as const;

/**
 * A replica of another deployment (`sync --from-api`, docs/upstream-records.md, A replica of
 * another deployment): how it walks the upstream's list endpoint.
 */
export const API_SYNC = {
  /** Rows asked per page, and on a trial (the most a trial page holds). */
  pageLimit: LIST.maxLimit,
  trialPageLimit: TRIAL.maxRowsPerPage,
  /** The default window a request without `starts_before` reads, and the longest one it may name. */
  defaultWindowDays: LIST.defaultWindowDays,
  defaultGeoWindowDays: LIST.defaultGeoWindowDays,
  maxWindowDays: LIST.maxWindowDays,
  maxGeoWindowDays: LIST.maxGeoWindowDays,
  /**
   * Windows after the first start this long before the last one ended (as this machine's clock
   * reckons it), so a difference between the two clocks up to this leaves no gap.
   */
  windowOverlapMs: 60 * MINUTE_MS,
  /** How far ahead a pass reads when the account has no lookahead horizon. */
  boundDays: 730,
  /** `--interval`: seconds between the starts of two passes of `--follow`. */
  intervalS: 300,
  /** `--budget-reserve`: the share of the row budget (or trial allowance) a pass leaves unspent. */
  budgetReserve: 0.1,
  /** Attempts of one request answered 500 or not at all, and 503s in a row, before the pass stops. */
  errorAttempts: 3,
  unavailableAttempts: 5,
  /** First wait before retrying a 500 or a failed connection; doubles with each attempt. */
  errorBackoffMs: 1000,
  /** Longest wait for the rate bucket to refill by X-RateLimit-Reset (clocks may disagree). */
  maxResetWaitMs: 60_000,
  /** Events applied per transaction by `marquee sync`. */
  batchEvents: 1000,
  /**
   * By a serving process: about a page, so no request waits long behind a transaction on the
   * thread that answers it.
   */
  serveBatchEvents: 100,
} as const;

export const DEMO = {
  events: 50_000,
  seed: "marquee",
  /** Fixed default anchor day, so the same seed writes the same bytes on any day. */
  anchor: "2026-12-01",
  eventsPerVenue: 25,
  maxEvents: 20_000_000,
} as const;
