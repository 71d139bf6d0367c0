/**
 * POST /v1/ticket-handoffs (docs/api.md; docs/api.md, Plans and access; docs/api.md, Ticket handoffs). Order of checks, first failure wins:
 *
 *   1 key: known and unrevoked (401 invalid_api_key; 503 handoff_unavailable when the ledger
 *     cannot answer) → 2 handoff limit: 10 counted attempts a minute per account (429, 503
 *     rate_limit_unavailable) — after authentication and before validation, so an invalid
 *     authenticated request spends a slot → 3 the key creates handoffs: a builder key, or a paid
 *     live key (401 invalid_api_key, the slot spent) → 4 input: Content-Type, size (413), JSON,
 *     exactly `{event_id}` (400) → 5 event servable now, read from live rows (404 event_unavailable) →
 *     6 ticketing: ticketed, not sold out, sales not ended, a supported seller link (409
 *     ticket_link_unavailable with event_url) → 7 store (503 handoff_unavailable) → 201.
 *
 * Creation buys, holds and clicks nothing; the click is recorded only by Continue on the
 * confirmation page (server/routes/pages.ts).
 */

import * as v from "valibot";
import type { Account } from "../../db/accounts.ts";
import { HANDOFF, HANDOFF_SELLERS, type HandoffErrorCode } from "../../db/contract.ts";
import { isoUtc } from "../../db/instant.ts";
import { readServableEvent, type ServableEvent } from "../../db/servable-event.ts";
import { isLedgerBusy, isStorageFailure, storageFailureCause } from "../../db/storage-failure.ts";
import { safeHttpUrl } from "../../sync/derive.ts";
import type { KeyIdentity } from "../access.ts";
import type { AppContext } from "../context.ts";
import { ApiError, isApiError } from "../errors.ts";
import { handle, json, type RequestScope } from "../handle.ts";
import { createsHandoffs } from "../limits/grant.ts";
import { eventUrlFor, handoffUrlFor, newHandoffId } from "../pages/urls.ts";
import type { RouteTable } from "../route-table.ts";
import { TicketHandoffRequest } from "../schemas.ts";

const SELLERS = new Set<string>(HANDOFF_SELLERS);
const RETRY_AFTER = { "retry-after": String(HANDOFF.retryAfterS) };

function fail(
  code: HandoffErrorCode,
  message: string,
  options: { status?: number; eventUrl?: string; retry?: boolean } = {},
) {
  return new ApiError(code, message, {
    envelope: "handoff",
    status: options.status,
    eventUrl: options.eventUrl,
    headers: options.retry ? RETRY_AFTER : {},
  });
}

const invalidKey = () =>
  fail(
    "invalid_api_key",
    "A site-issued builder key or the live key of a paid plan is required as 'Authorization: Bearer <key>'.",
  );
const invalidRequest = (message: string, status = 400) => fail("invalid_request", message, { status });
const handoffUnavailable = () =>
  fail("handoff_unavailable", "Handoffs are temporarily unavailable. Retry after the Retry-After delay.", {
    retry: true,
  });
const limitUnavailable = () =>
  fail("rate_limit_unavailable", "The handoff limit could not be confirmed. Retry after the Retry-After delay.", {
    retry: true,
  });
const limitExceeded = () =>
  fail("rate_limit_exceeded", `More than ${HANDOFF.creationsPerMinute} handoffs a minute for this account.`, {
    retry: true,
  });
const eventUnavailable = () =>
  fail("event_unavailable", "The event is not available: it is not listed, was removed or was cancelled.");
const BODY_SHAPE = `The body must be exactly {"event_id": <integer 1..${HANDOFF.maxEventId}>} with no other fields.`;
const NO_SELLER = "No supported ticket seller has a working link for this event.";

/** The ledger cannot store (a full disk, an I/O error, a read-only file): logged, then 503 (docs/api.md, Ticket handoffs). */
function storageUnavailable(ctx: AppContext, err: unknown): ApiError {
  ctx.log.error(`handoff storage unavailable: ${storageFailureCause(err)}`);
  return handoffUnavailable();
}

export function handoffRoutes(app: RouteTable, ctx: AppContext): void {
  app.post(
    "/v1/ticket-handoffs",
    handle((scope) => createTicketHandoff(ctx, scope), "handoff"),
  );
  if (ctx.config.testMode) {
    // docs/api.md, Test mode style read for tests: the stored handoff and how many clicks it recorded.
    app.get(
      "/_test/handoffs/:id",
      handle(async ({ event }) => {
        const id = event.context.params?.id ?? "";
        const h = await ctx.ledger.readHandoff(id);
        if (!h) throw new ApiError("not_found");
        return json({ ...h, clicks: await ctx.ledger.countHandoffClicks(id) });
      }),
    );
  }
}

async function createTicketHandoff(ctx: AppContext, scope: RequestScope): Promise<Response> {
  const req = scope.req;
  const identity = await authenticateHandoffKey(ctx, req);
  // For the request's record (docs/operations.md, Logs and metrics).
  scope.accountId = identity.accountId;
  scope.keyId = identity.keyId;
  await admitAttempt(ctx, identity.accountId);
  await assertCreatesHandoffs(ctx, identity);
  const eventId = await readEventId(req);
  const now = ctx.clock.now();
  const event = readServableEvent(ctx.replica, eventId);
  if (!event) throw eventUnavailable();
  const eventUrl = eventUrlFor(ctx.config.baseUrl, event);
  const link = handoffLink(event, now);
  if ("reason" in link) throw fail("ticket_link_unavailable", link.reason, { eventUrl });

  const handoff = {
    id: newHandoffId(),
    accountId: identity.accountId,
    keyId: identity.keyId,
    eventId: event.id,
    seller: link.seller,
    sellerUrl: link.url,
    createdMs: now,
    expiresMs: now + HANDOFF.lifetimeMs,
  };
  try {
    // A handoff lives 15 minutes and is recreated at will: stored without an fsync (server/ledger/sqlite.ts).
    await ctx.ledger.insertHandoff(handoff);
  } catch (err) {
    if (isStorageFailure(err)) throw storageUnavailable(ctx, err);
    throw err;
  }
  const handoffUrl = handoffUrlFor(ctx.config.baseUrl, handoff.id);
  return json(
    {
      handoff_id: handoff.id,
      event_id: event.id,
      event_url: eventUrl,
      handoff_url: handoffUrl,
      expires_at: isoUtc(handoff.expiresMs), // same form as the events' dates
      booking_mode: "external_checkout",
      requires_user_action: true,
    },
    201,
    { "cache-control": "no-store", location: handoffUrl },
  );
}

/** Stage 1: a known, unrevoked key of any kind; which kinds may create handoffs is stage 3. */
async function authenticateHandoffKey(ctx: AppContext, req: Request): Promise<KeyIdentity> {
  let identity: KeyIdentity;
  try {
    identity = await ctx.access.authenticate(req);
  } catch (err) {
    if (isApiError(err) && err.code === "invalid_api_key") throw invalidKey();
    // Any other failure to read the key is the API's "authentication temporarily unavailable".
    if (isApiError(err) || isStorageFailure(err)) throw handoffUnavailable();
    throw err;
  }
  return identity;
}

/**
 * Stage 3: a builder key, or a paid live key (server/limits/grant.ts `createsHandoffs`). After
 * the limit, so a refused key spends its slot like any authenticated attempt (docs/api.md,
 * Ticket handoffs). Only a live key needs its account read.
 */
async function assertCreatesHandoffs(ctx: AppContext, identity: KeyIdentity): Promise<void> {
  let account: Account | undefined;
  if (identity.kind === "live") {
    try {
      account = await ctx.access.account(identity.accountId);
    } catch (err) {
      if (isApiError(err) || isStorageFailure(err)) throw handoffUnavailable();
      throw err;
    }
  }
  if (!createsHandoffs(identity.kind, account)) throw invalidKey();
}

/** Stage 2: the shared per-account handoff limit (also spent by the MCP tool, which calls this route). */
async function admitAttempt(ctx: AppContext, accountId: number): Promise<void> {
  let admitted: boolean;
  try {
    admitted = await ctx.ledger.admitHandoffAttempt(accountId, ctx.clock.now());
  } catch (err) {
    // A lock held past the busy timeout: the count could not be confirmed in time. Any other
    // storage failure: the ledger cannot store handoffs at all.
    if (isLedgerBusy(err)) throw limitUnavailable();
    if (isStorageFailure(err)) throw storageUnavailable(ctx, err);
    throw err;
  }
  if (!admitted) throw limitExceeded();
}

/** Stage 3: the body, read bounded (Content-Length is not trusted), then validated. */
async function readEventId(req: Request): Promise<number> {
  if (!isJsonContentType(req.headers.get("content-type")))
    throw invalidRequest("Content-Type must be application/json.");
  const bytes = await readBounded(req, HANDOFF.maxBodyBytes);
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw invalidRequest("The body is not valid UTF-8 JSON.");
  }
  // The same strict schema the OpenAPI document publishes: exactly one field, no overrides.
  const parsed = v.safeParse(TicketHandoffRequest, body);
  if (!parsed.success) throw invalidRequest(BODY_SHAPE);
  return parsed.output.event_id;
}

/** `application/json`, optionally with `charset=utf-8`; nothing else. */
export function isJsonContentType(header: string | null): boolean {
  return header !== null && /^\s*application\/json\s*(;\s*charset\s*=\s*("utf-8"|utf-8)\s*)?$/i.test(header);
}

const tooLarge = () => invalidRequest(`The body is larger than ${HANDOFF.maxBodyBytes} bytes.`, 413);

async function readBounded(req: Request, max: number): Promise<Uint8Array> {
  const declared = req.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared.trim()) && Number(declared) > max) throw tooLarge();
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}

export type HandoffLink = { seller: string; url: string } | { reason: string };

/**
 * Stage 5, also re-checked by Continue: the first ticket link that is not broken, is an absolute
 * http(s) URL and names a supported seller (docs/upstream-records.md HANDOFF_SELLERS). Sales have ended when
 * the event's end (endDate, else startDate) is before now (docs/api.md, Ticket handoffs).
 */
export function handoffLink(e: ServableEvent, nowMs: number): HandoffLink {
  if (!e.ticketed) return { reason: "Tickets are not sold for this event." };
  if (e.isSoldOut) return { reason: "The event is sold out." };
  if ((e.endMs ?? e.startMs) < nowMs) return { reason: "Ticket sales have ended: the event is over." };
  const link = supportedSellerLink(e);
  return link ?? { reason: NO_SELLER };
}

export function supportedSellerLink(e: ServableEvent): { seller: string; url: string } | null {
  // An event of another deployment: the seller is behind its upstream's ticketUrl, which the
  // handoff continues to; the upstream's host is the seller shown (docs/api.md, Ticket handoffs).
  if (e.ticketUrl) return { seller: new URL(e.ticketUrl).host, url: e.ticketUrl };
  for (const l of e.ticketLinks) {
    const seller = l.seller?.trim().toLowerCase() ?? "";
    const url = l.broken ? null : safeHttpUrl(l.url);
    if (url && SELLERS.has(seller)) return { seller, url };
  }
  return null;
}

/**
 * The answer of a test-mode fault of `code` on `POST /v1/ticket-handoffs` (docs/api.md, Test mode):
 * the error the route itself raises for it, with its message and headers. Nothing is counted or
 * stored. `ticket_link_unavailable` carries the `event_url` of the event the body names (its
 * canonical page when it is listed), and the reason the route would give for it.
 */
export async function handoffRefusal(ctx: AppContext, code: HandoffErrorCode, req: Request): Promise<ApiError> {
  switch (code) {
    case "invalid_request":
      return invalidRequest(BODY_SHAPE);
    case "invalid_api_key":
      return invalidKey();
    case "event_unavailable":
      return eventUnavailable();
    case "rate_limit_exceeded":
      return limitExceeded();
    case "rate_limit_unavailable":
      return limitUnavailable();
    case "handoff_unavailable":
      return handoffUnavailable();
    case "internal_error":
      return new ApiError("internal_error", undefined, { envelope: "handoff" });
    case "ticket_link_unavailable": {
      const eventId = await namedEventId(req);
      const event = eventId === null ? undefined : readServableEvent(ctx.replica, eventId);
      const link = event ? handoffLink(event, ctx.clock.now()) : null;
      const eventUrl = event
        ? eventUrlFor(ctx.config.baseUrl, event)
        : eventId === null
          ? undefined
          : `${ctx.config.baseUrl}/events/${eventId}`;
      return fail("ticket_link_unavailable", link && "reason" in link ? link.reason : NO_SELLER, { eventUrl });
    }
  }
}

/** The `event_id` a body names, when it is JSON naming one within range; else null. */
async function namedEventId(req: Request): Promise<number | null> {
  try {
    const body = JSON.parse(new TextDecoder().decode(await readBounded(req, HANDOFF.maxBodyBytes)));
    const id = body?.event_id;
    return Number.isInteger(id) && id >= 1 && id <= HANDOFF.maxEventId ? id : null;
  } catch {
    return null;
  }
}
