/**
 * Generated from the Marquee OpenAPI document by openapi-typescript. Do not edit:
 * run `bun test/client-types.ts`.
 */

export interface paths {
    "/v1/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List upcoming events
         * @description Events ordered by `startDate` ascending, then `id`. Sold-out events are included and flagged (`isSoldOut`).
         *     Page with `page.nextCursor` until `page.hasMore` is false; `data: []` with `hasMore: true` is normal.
         *     Not a changes-since feed: upsert by event `id`.
         */
        get: operations["listEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/ticket-handoffs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create a ticket handoff
         * @description Creates a short-lived handoff that leads a user to an external ticket seller's checkout.
         *     Limited to 10 creations a minute per account, counted after authentication and before validation.
         *     It never buys or holds tickets, checks live inventory, guarantees prices, or reports a purchase.
         */
        post: operations["createTicketHandoff"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * This document
         * @description Public, no key. The OpenAPI 3.1 description, generated from the constants the server enforces.
         */
        get: operations["getOpenApiDocument"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/docs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * API reference page
         * @description Public, no key. This document rendered as a self-contained HTML page.
         */
        get: operations["getReferencePage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/mcp": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * MCP tools: search_events, create_ticket_handoff
         * @description Model Context Protocol over Streamable HTTP, stateless (no session id). Send the bearer key on every request.
         *     `search_events` takes the query parameters of `GET /v1/events` and returns the same page; `create_ticket_handoff` takes `event_id` and returns the same handoff.
         *     Each call spends the same limits as the REST request it stands for. REST errors come back as tool results with `isError: true` and the REST `status` and `error.code`.
         */
        post: operations["postMcpMessage"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/developers/keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The account's keys (developer portal)
         * @description The signed-in account, its keys (never their values) and the session's CSRF token. Send `Accept: application/json`; without it the same URL is the HTML keys page.
         *     Sign in by opening a one-time link `/developers/sign-in?token=…` from `marquee accounts sign-in-link ID`: it works once, within 15 minutes, and answers 303 to this page with the session cookie (12 hours). A used or expired link is a 410 page.
         */
        get: operations["listDeveloperKeys"];
        put?: never;
        /**
         * Create a key
         * @description Creates a key: `live` for an account with a paid plan, `builder` otherwise. The full key is in this response only, served `Cache-Control: no-store`; only its SHA-256 digest is kept.
         *     Ceilings: at most the account's key limit of active keys (default 10; revoked keys do not count), else 409 `key_limit_reached`; at most 10 keys created per account in any rolling 60 minutes, else 429 `key_issuance_rate_limited` with `Retry-After`. The key limit is checked first. A refused request creates nothing.
         *     Needs the session's CSRF token and, when `Origin` is sent, this service's origin.
         */
        post: operations["createDeveloperKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/developers/keys/{id}/revoke": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Revoke a key
         * @description Revokes one of the account's keys: from this moment `/v1/events`, `/v1/ticket-handoffs` and `/mcp` refuse it (401 `invalid_api_key`). Revoking a revoked key changes nothing and answers the same.
         *     A browser (HTML) first gets a confirmation page (200); its form posts again with `confirm=yes`, which revokes and answers 303 to the keys page.
         */
        post: operations["revokeDeveloperKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/developers/sign-out": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Sign out
         * @description Ends the session and clears its cookie. Needs the session's CSRF token.
         */
        post: operations["signOutDeveloper"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** Venue */
        Venue: {
            id: number;
            name: string;
            /** @description Matched exactly and case-sensitively by the `city` filter. */
            city: string;
            /** @description Two-letter code. */
            state: string;
            /** @description IANA zone, needed to render local time because startDate/endDate are UTC. null if unresolved. */
            timezone: string | null;
            latitude: number | null;
            longitude: number | null;
            /** @description Only `street` identifies the building. `zip` and `city` are centroids that can be miles from the door; `unknown` is a source-supplied unclassified point; treat null as cautiously as `unknown`. */
            geocodePrecision: ("street" | "zip" | "city" | "unknown") | null;
            /** @description Great-circle miles from the query's lat/lng, rounded to 0.01. Set only on radius queries; null otherwise. */
            distanceMiles: number | null;
        };
        /** Event */
        Event: {
            id: number;
            title: string;
            slug: string;
            /**
             * Format: uri
             * @description Canonical event page on the service. Use it for citing and sharing.
             */
            eventUrl: string;
            /**
             * Format: date-time
             * @description UTC start.
             */
            startDate: string;
            /** @description UTC end, or null. */
            endDate: string | null;
            /** @description Resolved display cost: `Free` when admission resolves to free. null does NOT imply free admission. */
            cost: string | null;
            /** @description true = explicitly free; false = known non-free; null = no trustworthy admission evidence. */
            isFree: boolean | null;
            /** @description True when the source reports sold out. */
            isSoldOut: boolean;
            /** @description True when the source reports limited remaining tickets. */
            isLowTickets: boolean;
            /** @description Free text. */
            age: string | null;
            /** @description Service-issued ticket redirect; null when no safe destination exists or the event is not ticketed. */
            ticketUrl: string | null;
            /** @description Sanitized external event website, with confirmed-broken links removed. */
            website: string | null;
            /**
             * @description `available` (a safe destination can be served), `unavailable` (stored candidates unusable), `missing` (none supplied).
             * @enum {string}
             */
            ticketLinkStatus: "available" | "unavailable" | "missing";
            imageUrl: string | null;
            /** @description Zero or more values of the 21-category taxonomy. */
            categories: ("Music" | "Comedy" | "Theater" | "Dance" | "Festivals" | "Sports" | "Food & Drink" | "Arts" | "Film" | "Family" | "Community" | "Nightlife" | "Classes & Workshops" | "Literature" | "Fitness" | "Outdoors" | "Tours" | "Charity" | "Business & Networking" | "Holiday" | "Other")[];
            /** @description Always an object on /v1/events. */
            venue: components["schemas"]["Venue"] | null;
        };
        /** PageInfo */
        PageInfo: {
            /** @description Opaque token continuing from the last snapshot row of the page (not the last delivered row). */
            nextCursor: string | null;
            /** @description False when the window is exhausted. Page on this, never on data.length. */
            hasMore: boolean;
            /** @description Rows delivered on this page; not a total match count. */
            count: number;
        };
        /** Page */
        Page: {
            data: components["schemas"]["Event"][];
            page: components["schemas"]["PageInfo"];
        };
        /** TicketHandoffRequest */
        TicketHandoffRequest: {
            event_id: number;
        };
        /** TicketHandoff */
        TicketHandoff: {
            /** @description Opaque reference. Not an order or reservation id. */
            handoff_id: string;
            event_id: number;
            /**
             * Format: uri
             * @description Canonical event page.
             */
            event_url: string;
            /**
             * Format: uri
             * @description Short-lived confirmation page. Opening or previewing it records no affiliate click.
             */
            handoff_url: string;
            /**
             * Format: date-time
             * @description The handoff lives 15 minutes.
             */
            expires_at: string;
            /** @constant */
            booking_mode: "external_checkout";
            /** @constant */
            requires_user_action: true;
        };
        /** ListError400 */
        ListError400: {
            error: {
                /** @enum {string} */
                code: "unsupported_pagination" | "invalid_limit" | "invalid_date" | "invalid_date_range" | "invalid_cursor" | "invalid_state" | "invalid_source" | "invalid_exclude_aggregators" | "invalid_exclude_sold_out" | "invalid_include_centroids" | "invalid_coordinates" | "invalid_radius" | "invalid_polygon" | "conflicting_geo_filters";
                /** @description Prose; may change. Branch on `code`. */
                message: string;
                /** @description Equals the x-request-id header. */
                requestId: string;
            };
        };
        /** ListError401 */
        ListError401: {
            error: {
                /** @enum {string} */
                code: "invalid_api_key";
                /** @description Prose; may change. Branch on `code`. */
                message: string;
                /** @description Equals the x-request-id header. */
                requestId: string;
            };
        };
        /** ListError402 */
        ListError402: {
            error: {
                /** @enum {string} */
                code: "subscription_required" | "trial_expired" | "trial_exhausted";
                /** @description Prose; may change. Branch on `code`. */
                message: string;
                /** @description Equals the x-request-id header. */
                requestId: string;
            };
        };
        /** ListError403 */
        ListError403: {
            error: {
                /** @enum {string} */
                code: "email_verification_required" | "feature_not_in_plan" | "lookahead_not_in_plan" | "account_not_provisioned";
                /** @description Prose; may change. Branch on `code`. */
                message: string;
                /** @description Equals the x-request-id header. */
                requestId: string;
            };
        };
        /** ListError429 */
        ListError429: {
            error: {
                /** @enum {string} */
                code: "trial_capacity_reserved" | "rate_limited" | "row_budget_exhausted";
                /** @description Prose; may change. Branch on `code`. */
                message: string;
                /** @description Equals the x-request-id header. */
                requestId: string;
            };
        };
        /** ListError431 */
        ListError431: {
            error: {
                /** @enum {string} */
                code: "request_header_too_large";
                /** @description Prose; may change. Branch on `code`. */
                message: string;
                /** @description Equals the x-request-id header. */
                requestId: string;
            };
        };
        /** ListError500 */
        ListError500: {
            error: {
                /** @enum {string} */
                code: "internal_error";
                /** @description Prose; may change. Branch on `code`. */
                message: string;
                /** @description Equals the x-request-id header. */
                requestId: string;
            };
        };
        /** ListError503 */
        ListError503: {
            error: {
                /** @enum {string} */
                code: "rate_limit_unavailable" | "policy_unavailable" | "trial_unavailable";
                /** @description Prose; may change. Branch on `code`. */
                message: string;
                /** @description Equals the x-request-id header. */
                requestId: string;
            };
        };
        /** HandoffError400 */
        HandoffError400: {
            error: {
                /** @enum {string} */
                code: "invalid_request";
                /** @description Prose; may change. Branch on `code`. */
                message: string;
            };
            /** @description Also in the X-Request-Id header. */
            request_id: string;
        };
        /** HandoffError401 */
        HandoffError401: {
            error: {
                /** @enum {string} */
                code: "invalid_api_key";
                /** @description Prose; may change. Branch on `code`. */
                message: string;
            };
            /** @description Also in the X-Request-Id header. */
            request_id: string;
        };
        /** HandoffError404 */
        HandoffError404: {
            error: {
                /** @enum {string} */
                code: "event_unavailable";
                /** @description Prose; may change. Branch on `code`. */
                message: string;
            };
            /** @description Also in the X-Request-Id header. */
            request_id: string;
        };
        /** HandoffError409 */
        HandoffError409: {
            error: {
                /** @enum {string} */
                code: "ticket_link_unavailable";
                /** @description Prose; may change. Branch on `code`. */
                message: string;
            };
            /** @description Also in the X-Request-Id header. */
            request_id: string;
            /** Format: uri */
            event_url: string;
        };
        /** HandoffError413 */
        HandoffError413: {
            error: {
                /** @enum {string} */
                code: "invalid_request";
                /** @description Prose; may change. Branch on `code`. */
                message: string;
            };
            /** @description Also in the X-Request-Id header. */
            request_id: string;
        };
        /** HandoffError429 */
        HandoffError429: {
            error: {
                /** @enum {string} */
                code: "rate_limit_exceeded";
                /** @description Prose; may change. Branch on `code`. */
                message: string;
            };
            /** @description Also in the X-Request-Id header. */
            request_id: string;
        };
        /** HandoffError431 */
        HandoffError431: {
            error: {
                /** @enum {string} */
                code: "invalid_request";
                /** @description Prose; may change. Branch on `code`. */
                message: string;
            };
            /** @description Also in the X-Request-Id header. */
            request_id: string;
        };
        /** HandoffError500 */
        HandoffError500: {
            error: {
                /** @enum {string} */
                code: "internal_error";
                /** @description Prose; may change. Branch on `code`. */
                message: string;
            };
            /** @description Also in the X-Request-Id header. */
            request_id: string;
        };
        /** HandoffError503 */
        HandoffError503: {
            error: {
                /** @enum {string} */
                code: "rate_limit_unavailable" | "handoff_unavailable";
                /** @description Prose; may change. Branch on `code`. */
                message: string;
            };
            /** @description Also in the X-Request-Id header. */
            request_id: string;
        };
        DeveloperKey: {
            id: number;
            /** @enum {string} */
            kind: "live" | "builder" | "legacy";
            /** @description The owner's name for the key, or null. */
            label: string | null;
            /** @description Display prefix: the kind and the first random characters. Tells keys apart; never the key. */
            prefix: string;
            /**
             * Format: date-time
             * @description When the key was created.
             */
            createdAt: string;
            /** @description When it was revoked; null while active. */
            revokedAt: string | null;
            /** @enum {string} */
            status: "active" | "revoked";
        };
        CreatedDeveloperKey: {
            id: number;
            /** @enum {string} */
            kind: "live" | "builder" | "legacy";
            /** @description The owner's name for the key, or null. */
            label: string | null;
            prefix: string;
            /** @description The full key. In this response only: it is never shown again. */
            key: string;
            /**
             * Format: date-time
             * @description When the key was created.
             */
            createdAt: string;
        };
        DeveloperTrial: {
            /** @enum {string} */
            state: "not_started" | "active" | "expired" | "exhausted";
            rowsUsed: number;
            rowLimit: number;
            /** @description null until the first request starts the trial. */
            expiresAt: string | null;
            /** @description Whole days left, rounded up; null until the trial starts. */
            daysLeft: number | null;
        };
        DeveloperRowBudget: {
            limit: number;
            /** @description Rows delivered in the rolling window. */
            used: number;
            windowHours: number;
        };
        DeveloperAccount: {
            id: number;
            email: string;
            /** @enum {string} */
            plan: "none" | "basic" | "business" | "enterprise" | "legacy";
            /** @description The tier requests are served as; null without a plan. */
            tier: string | null;
            /** @description False when a paid plan still lacks its access policy (requests answer 403). */
            provisioned: boolean;
            /**
             * @description The kind of key created here: `live` with a paid plan, `builder` otherwise.
             * @enum {string}
             */
            keyKind: "live" | "builder" | "legacy";
            /** @description Active keys the account may hold. */
            keyLimit: number;
            activeKeys: number;
            /** @description Keys created here in the last rolling hour. */
            keysCreatedThisHour: number;
            issuancePerHour: number;
            /** @description The REST trial of an account without a plan; null otherwise. */
            trial: components["schemas"]["DeveloperTrial"] | null;
            /** @description The rolling row budget of a row-metered plan; null otherwise. */
            rowBudget: components["schemas"]["DeveloperRowBudget"] | null;
        };
        DeveloperKeys: {
            account: components["schemas"]["DeveloperAccount"];
            keys: components["schemas"]["DeveloperKey"][];
            /** @description Send it as `X-CSRF-Token` on every POST of this session. */
            csrfToken: string;
        };
        RevokedDeveloperKey: {
            id: number;
            /** @enum {string} */
            status: "revoked";
        };
        CreateDeveloperKeyRequest: {
            label?: string | null;
        };
        /** PortalError400 */
        PortalError400: {
            error: {
                /** @enum {string} */
                code: "invalid_request";
                /** @description Prose; may change. Branch on `code`. */
                message: string;
                /** @description Equals the x-request-id header. */
                requestId: string;
            };
        };
        /** PortalError401 */
        PortalError401: {
            error: {
                /** @enum {string} */
                code: "invalid_session";
                /** @description Prose; may change. Branch on `code`. */
                message: string;
                /** @description Equals the x-request-id header. */
                requestId: string;
            };
        };
        /** PortalError403 */
        PortalError403: {
            error: {
                /** @enum {string} */
                code: "invalid_csrf_token";
                /** @description Prose; may change. Branch on `code`. */
                message: string;
                /** @description Equals the x-request-id header. */
                requestId: string;
            };
        };
        /** PortalError404 */
        PortalError404: {
            error: {
                /** @enum {string} */
                code: "not_found";
                /** @description Prose; may change. Branch on `code`. */
                message: string;
                /** @description Equals the x-request-id header. */
                requestId: string;
            };
        };
        /** PortalError409 */
        PortalError409: {
            error: {
                /** @enum {string} */
                code: "key_limit_reached";
                /** @description Prose; may change. Branch on `code`. */
                message: string;
                /** @description Equals the x-request-id header. */
                requestId: string;
            };
        };
        /** PortalError429 */
        PortalError429: {
            error: {
                /** @enum {string} */
                code: "key_issuance_rate_limited";
                /** @description Prose; may change. Branch on `code`. */
                message: string;
                /** @description Equals the x-request-id header. */
                requestId: string;
            };
        };
        /** PortalError500 */
        PortalError500: {
            error: {
                /** @enum {string} */
                code: "internal_error";
                /** @description Prose; may change. Branch on `code`. */
                message: string;
                /** @description Equals the x-request-id header. */
                requestId: string;
            };
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    listEvents: {
        parameters: {
            query?: {
                /** @description Venue state, two letters, case-insensitive: one of the 51 US codes (50 states plus DC): AL, AK, AZ, AR, CA, CO, CT, DE, DC, FL, GA, HI, ID, IL, IN, IA, KS, KY, LA, ME, MD, MA, MI, MN, MS, MO, MT, NE, NV, NH, NJ, NM, NY, NC, ND, OH, OK, OR, PA, RI, SC, SD, TN, TX, UT, VT, VA, WA, WV, WI, WY. An empty or whitespace-only value is dropped. */
                state?: string;
                /** @description Exact, case-sensitive venue city. A misspelt city returns an empty page. An empty value is dropped. Combine with `state` to disambiguate. Repeated, the same city counts once; two different cities match nothing (no venue is in both). */
                city?: string | string[];
                /** @description ISO 8601 date (`YYYY-MM-DD`, midnight UTC) or date-time (no offset means UTC). The window opens at this instant; default now. Events that have not ended by it are returned, including earlier-started events still running. Beyond the plan's lookahead horizon: 403 `lookahead_not_in_plan`. */
                starts_after?: string;
                /** @description Latest `startDate` returned. Default `starts_after` + 90 days (30 for geo queries), capped by the plan's lookahead horizon. An explicit value beyond the horizon gives 403 `lookahead_not_in_plan`; otherwise it is clamped to `starts_after` + 365 days (90 for geo). Not after `starts_after`: 400 `invalid_date_range`. */
                starts_before?: string;
                /** @description A source prefix: a bare vendor name `<vendor>` or the internal token `scraper:<vendor>`, at most 64 characters of `a-z 0-9 . _ : -`, starting with a letter or digit. Repeatable and comma-separated; matched as a prefix, `_` matching any one character. Empty values are dropped. */
                source?: string | string[];
                /** @description When true, omits events sourced from the 8 major ticketing aggregators (ticketmaster, livenation, axs, eventbrite, seatgeek, stubhub, vividseats, gametime). */
                exclude_aggregators?: boolean;
                /** @description When true, omits events flagged `isSoldOut`. */
                exclude_sold_out?: boolean;
                /** @description Events per page, 1..100, decimal digits only. Trial pages are clamped to 25 and to the remaining trial allowance. May change between pages of one traversal. */
                limit?: number;
                /** @description Opaque token from `page.nextCursor`; send it with the same filters and dates. Omitting it restarts at page one. A changed filter or date gives 400 `invalid_cursor` (`limit` may change). */
                cursor?: string;
                /** @description Circle centre latitude, -90..90. Requires `lng` and `radius_miles`. */
                lat?: number;
                /** @description Circle centre longitude, -180..180. Requires `lat` and `radius_miles`. */
                lng?: number;
                /** @description Circle radius in statute miles, greater than 0 and at most 25. */
                radius_miles?: number;
                /** @description 3 to 32 `lat,lng` vertices separated by `;`, in ring order (latitude first); bounding box at most 50 miles across its diagonal. */
                polygon?: string;
                /** @description When true, a geo filter also admits venues whose `geocodePrecision` is `zip`, `city` or null; without it only `street` and `unknown`. Without a geo filter it changes no result, but it is part of the cursor's filter fingerprint. */
                include_centroids?: boolean;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of events, ordered by startDate then id. */
            200: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    /** @description Request-rate capacity of the bucket that admitted the request; 401, 402, 431, 500 and 503 policy_unavailable report the published 60. */
                    "X-RateLimit-Limit": number;
                    /** @description Never cache list pages. */
                    "Cache-Control": "private, no-store";
                    /** @description Whole request units left. Absence means unknown, not zero. */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix seconds when the bucket is full again. */
                    "X-RateLimit-Reset"?: number;
                    /** @description Rolling 24-hour delivered-row budget of the account. */
                    "X-RowBudget-Limit"?: number;
                    /** @description Rows left in the rolling 24-hour budget. */
                    "X-RowBudget-Remaining"?: number;
                    /** @description Present on trial responses. */
                    "X-DataApi-Access"?: "trial";
                    /** @description Total trial rows (1000). */
                    "X-Trial-RowBudget-Limit"?: number;
                    /** @description Trial rows left, net of in-flight requests. */
                    "X-Trial-RowBudget-Remaining"?: number;
                    /** @description UTC end of the trial. */
                    "X-Trial-Expires-At"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Page"];
                };
            };
            /** @description Bad request: `unsupported_pagination`, `invalid_limit`, `invalid_date`, `invalid_date_range`, `invalid_cursor`, `invalid_state`, `invalid_source`, `invalid_exclude_aggregators`, `invalid_exclude_sold_out`, `invalid_include_centroids`, `invalid_coordinates`, `invalid_radius`, `invalid_polygon`, `conflicting_geo_filters`. */
            400: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    /** @description Request-rate capacity of the bucket that admitted the request; 401, 402, 431, 500 and 503 policy_unavailable report the published 60. */
                    "X-RateLimit-Limit": number;
                    /** @description Present on trial responses. */
                    "X-DataApi-Access"?: "trial";
                    /** @description Total trial rows (1000). */
                    "X-Trial-RowBudget-Limit"?: number;
                    /** @description Trial rows left, net of in-flight requests. */
                    "X-Trial-RowBudget-Remaining"?: number;
                    /** @description UTC end of the trial. */
                    "X-Trial-Expires-At"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ListError400"];
                };
            };
            /** @description Missing or invalid API key: `invalid_api_key`. */
            401: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    /** @description Request-rate capacity of the bucket that admitted the request; 401, 402, 431, 500 and 503 policy_unavailable report the published 60. */
                    "X-RateLimit-Limit": number;
                    /** @description Bearer challenge. */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ListError401"];
                };
            };
            /** @description Payment required: `subscription_required`, `trial_expired`, `trial_exhausted`. */
            402: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    /** @description Request-rate capacity of the bucket that admitted the request; 401, 402, 431, 500 and 503 policy_unavailable report the published 60. */
                    "X-RateLimit-Limit": number;
                    /** @description Present on trial responses. */
                    "X-DataApi-Access"?: "trial";
                    /** @description Total trial rows (1000). */
                    "X-Trial-RowBudget-Limit"?: number;
                    /** @description Trial rows left, net of in-flight requests. */
                    "X-Trial-RowBudget-Remaining"?: number;
                    /** @description UTC end of the trial. */
                    "X-Trial-Expires-At"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ListError402"];
                };
            };
            /** @description Forbidden by plan or account: `email_verification_required`, `feature_not_in_plan`, `lookahead_not_in_plan`, `account_not_provisioned`. */
            403: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    /** @description Request-rate capacity of the bucket that admitted the request; 401, 402, 431, 500 and 503 policy_unavailable report the published 60. */
                    "X-RateLimit-Limit": number;
                    /** @description Present on trial responses. */
                    "X-DataApi-Access"?: "trial";
                    /** @description Total trial rows (1000). */
                    "X-Trial-RowBudget-Limit"?: number;
                    /** @description Trial rows left, net of in-flight requests. */
                    "X-Trial-RowBudget-Remaining"?: number;
                    /** @description UTC end of the trial. */
                    "X-Trial-Expires-At"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ListError403"];
                };
            };
            /** @description Too many requests: `trial_capacity_reserved`, `rate_limited`, `row_budget_exhausted`. */
            429: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    /** @description Request-rate capacity of the bucket that admitted the request; 401, 402, 431, 500 and 503 policy_unavailable report the published 60. */
                    "X-RateLimit-Limit": number;
                    /** @description Delta-seconds until a retry can succeed. */
                    "Retry-After": number;
                    /** @description Whole request units left. Absence means unknown, not zero. */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix seconds when the bucket is full again. */
                    "X-RateLimit-Reset"?: number;
                    /** @description Rolling 24-hour delivered-row budget of the account. */
                    "X-RowBudget-Limit"?: number;
                    /** @description Rows left in the rolling 24-hour budget. */
                    "X-RowBudget-Remaining"?: number;
                    /** @description Present on trial responses. */
                    "X-DataApi-Access"?: "trial";
                    /** @description Total trial rows (1000). */
                    "X-Trial-RowBudget-Limit"?: number;
                    /** @description Trial rows left, net of in-flight requests. */
                    "X-Trial-RowBudget-Remaining"?: number;
                    /** @description UTC end of the trial. */
                    "X-Trial-Expires-At"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ListError429"];
                };
            };
            /** @description Request head too large: `request_header_too_large`. */
            431: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    /** @description Request-rate capacity of the bucket that admitted the request; 401, 402, 431, 500 and 503 policy_unavailable report the published 60. */
                    "X-RateLimit-Limit": number;
                    /** @description Present on trial responses. */
                    "X-DataApi-Access"?: "trial";
                    /** @description Total trial rows (1000). */
                    "X-Trial-RowBudget-Limit"?: number;
                    /** @description Trial rows left, net of in-flight requests. */
                    "X-Trial-RowBudget-Remaining"?: number;
                    /** @description UTC end of the trial. */
                    "X-Trial-Expires-At"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ListError431"];
                };
            };
            /** @description Unexpected error: `internal_error`. */
            500: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    /** @description Request-rate capacity of the bucket that admitted the request; 401, 402, 431, 500 and 503 policy_unavailable report the published 60. */
                    "X-RateLimit-Limit": number;
                    /** @description Present on trial responses. */
                    "X-DataApi-Access"?: "trial";
                    /** @description Total trial rows (1000). */
                    "X-Trial-RowBudget-Limit"?: number;
                    /** @description Trial rows left, net of in-flight requests. */
                    "X-Trial-RowBudget-Remaining"?: number;
                    /** @description UTC end of the trial. */
                    "X-Trial-Expires-At"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ListError500"];
                };
            };
            /** @description Temporarily unavailable: `rate_limit_unavailable`, `policy_unavailable`, `trial_unavailable`. */
            503: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    /** @description Request-rate capacity of the bucket that admitted the request; 401, 402, 431, 500 and 503 policy_unavailable report the published 60. */
                    "X-RateLimit-Limit": number;
                    /** @description Delta-seconds until a retry can succeed. */
                    "Retry-After": number;
                    /** @description Present on trial responses. */
                    "X-DataApi-Access"?: "trial";
                    /** @description Total trial rows (1000). */
                    "X-Trial-RowBudget-Limit"?: number;
                    /** @description Trial rows left, net of in-flight requests. */
                    "X-Trial-RowBudget-Remaining"?: number;
                    /** @description UTC end of the trial. */
                    "X-Trial-Expires-At"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ListError503"];
                };
            };
        };
    };
    createTicketHandoff: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description JSON, at most 1024 bytes, with exactly one field. */
        requestBody: {
            content: {
                "application/json": components["schemas"]["TicketHandoffRequest"];
            };
        };
        responses: {
            /** @description The handoff was created. Nothing is bought, held or clicked. */
            201: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TicketHandoff"];
                };
            };
            /** @description Bad request: `invalid_request`. */
            400: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HandoffError400"];
                };
            };
            /** @description Missing or invalid API key: `invalid_api_key`. */
            401: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    /** @description Bearer challenge. */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HandoffError401"];
                };
            };
            /** @description Event not available: `event_unavailable`. */
            404: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HandoffError404"];
                };
            };
            /** @description Conflict: `ticket_link_unavailable`. */
            409: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HandoffError409"];
                };
            };
            /** @description Request body too large: `invalid_request`. */
            413: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HandoffError413"];
                };
            };
            /** @description Too many requests: `rate_limit_exceeded`. */
            429: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    /** @description Seconds until a retry can succeed (60). */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HandoffError429"];
                };
            };
            /** @description Request head too large: `invalid_request`. */
            431: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HandoffError431"];
                };
            };
            /** @description Unexpected error: `internal_error`. */
            500: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HandoffError500"];
                };
            };
            /** @description Temporarily unavailable: `rate_limit_unavailable`, `handoff_unavailable`. */
            503: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    /** @description Seconds until a retry can succeed (60). */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HandoffError503"];
                };
            };
        };
    };
    getOpenApiDocument: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The OpenAPI document. */
            200: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, never>;
                };
            };
        };
    };
    getReferencePage: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The reference page. */
            200: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
        };
    };
    postMcpMessage: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": Record<string, never> | Record<string, never>[];
            };
        };
        responses: {
            /** @description JSON-RPC response(s). */
            200: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, never> | Record<string, never>[];
                };
            };
            /** @description Notifications only: accepted, no body. */
            202: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing or invalid API key: `invalid_api_key`. */
            401: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    /** @description Request-rate capacity of the bucket that admitted the request; 401, 402, 431, 500 and 503 policy_unavailable report the published 60. */
                    "X-RateLimit-Limit": number;
                    /** @description Bearer challenge. */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ListError401"];
                };
            };
            /** @description A request the transport refuses (malformed JSON-RPC, wrong Accept or Content-Type, GET or DELETE). */
            "4XX": {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, never> | Record<string, never>[];
                };
            };
        };
    };
    listDeveloperKeys: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The account and its keys. */
            200: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeveloperKeys"];
                    "text/html": string;
                };
            };
            /** @description `invalid_session`: No live session: sign in with a one-time link. */
            401: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PortalError401"];
                    "text/html": string;
                };
            };
            /** @description `internal_error`: Unexpected error. Safe to retry. */
            500: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PortalError500"];
                    "text/html": string;
                };
            };
        };
    };
    createDeveloperKey: {
        parameters: {
            query?: never;
            header?: {
                /** @description The session's CSRF token (`csrfToken` of `GET /developers/keys`). HTML forms send it as the `csrf_token` field instead. */
                "X-CSRF-Token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description JSON or an HTML form. `label`: optional, at most 64 characters. */
        requestBody?: {
            content: {
                "application/json": components["schemas"]["CreateDeveloperKeyRequest"];
                "application/x-www-form-urlencoded": {
                    /** @description The session's CSRF token, as the keys page's forms carry it. */
                    csrf_token?: string;
                    /** @description Optional. */
                    label?: string;
                };
            };
        };
        responses: {
            /** @description The new key, shown this once. */
            201: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CreatedDeveloperKey"];
                    "text/html": string;
                };
            };
            /** @description `invalid_request`: The body is not JSON or a form, or `label` is not a string of at most 64 characters. */
            400: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PortalError400"];
                    "text/html": string;
                };
            };
            /** @description `invalid_session`: No live session: sign in with a one-time link. */
            401: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PortalError401"];
                    "text/html": string;
                };
            };
            /** @description `invalid_csrf_token`: A cross-site `Origin`, or the session's CSRF token missing or wrong. Nothing changed. */
            403: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PortalError403"];
                    "text/html": string;
                };
            };
            /** @description `key_limit_reached`: The account already holds its limit of active keys. Revoke one first. Nothing was created. */
            409: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PortalError409"];
                    "text/html": string;
                };
            };
            /** @description `key_issuance_rate_limited`: 10 keys were created in the last hour. Nothing was created. */
            429: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    /** @description Seconds until the oldest creation of the last hour leaves the window. */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PortalError429"];
                    "text/html": string;
                };
            };
            /** @description `internal_error`: Unexpected error. Safe to retry. */
            500: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PortalError500"];
                    "text/html": string;
                };
            };
        };
    };
    revokeDeveloperKey: {
        parameters: {
            query?: never;
            header?: {
                /** @description The session's CSRF token (`csrfToken` of `GET /developers/keys`). HTML forms send it as the `csrf_token` field instead. */
                "X-CSRF-Token"?: string;
            };
            path: {
                /** @description The key's id. */
                id: number;
            };
            cookie?: never;
        };
        /** @description JSON clients send none. The HTML confirmation form posts `confirm=yes`. */
        requestBody?: {
            content: {
                "application/x-www-form-urlencoded": {
                    /** @description The session's CSRF token, as the keys page's forms carry it. */
                    csrf_token?: string;
                    /** @description `yes` revokes; anything else shows the confirmation page. */
                    confirm?: string;
                };
            };
        };
        responses: {
            /** @description JSON: the key is revoked. HTML: the confirmation step; nothing changed yet. */
            200: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RevokedDeveloperKey"];
                    "text/html": string;
                };
            };
            /** @description HTML, confirmed: revoked; see the keys page. */
            303: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description `invalid_session`: No live session: sign in with a one-time link. */
            401: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PortalError401"];
                    "text/html": string;
                };
            };
            /** @description `invalid_csrf_token`: A cross-site `Origin`, or the session's CSRF token missing or wrong. Nothing changed. */
            403: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PortalError403"];
                    "text/html": string;
                };
            };
            /** @description `not_found`: The account has no key with this id (another account's keys are not found either). */
            404: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PortalError404"];
                    "text/html": string;
                };
            };
            /** @description `internal_error`: Unexpected error. Safe to retry. */
            500: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PortalError500"];
                    "text/html": string;
                };
            };
        };
    };
    signOutDeveloper: {
        parameters: {
            query?: never;
            header?: {
                /** @description The session's CSRF token (`csrfToken` of `GET /developers/keys`). HTML forms send it as the `csrf_token` field instead. */
                "X-CSRF-Token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description JSON clients send none. */
        requestBody?: {
            content: {
                "application/x-www-form-urlencoded": {
                    /** @description The session's CSRF token, as the keys page's forms carry it. */
                    csrf_token?: string;
                };
            };
        };
        responses: {
            /** @description HTML: the signed-out page. */
            200: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    /** @description Clears `mq_session`. */
                    "Set-Cookie": string;
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            /** @description JSON clients: signed out. */
            204: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    /** @description Clears `mq_session`. */
                    "Set-Cookie": string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description `invalid_csrf_token`: A cross-site `Origin`, or the session's CSRF token missing or wrong. Nothing changed. */
            403: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PortalError403"];
                    "text/html": string;
                };
            };
            /** @description `internal_error`: Unexpected error. Safe to retry. */
            500: {
                headers: {
                    /** @description Identifies the request; equals `requestId` in error bodies. */
                    "x-request-id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PortalError500"];
                    "text/html": string;
                };
            };
        };
    };
}
