/**
 * The HTML pages and redirects the API links to (docs/upstream-records.md; docs/api.md, Ticket handoffs):
 *
 *   GET|HEAD /events/{id}[/{slug}]    event page (`eventUrl`); 404 page unless servable now
 *   GET|HEAD /t/{id}                  302 to the event's ticket destination (`ticketUrl`); 404 page otherwise
 *   GET|HEAD /handoffs/{id}           handoff confirmation page (`handoff_url`); records nothing
 *   POST     /handoffs/{id}/continue  first time 303 to the seller + one click; again 409; expired 410
 *   GET|HEAD /handoffs/{id}/continue  303 back to the confirmation page (Continue is POST only)
 *
 * HEAD answers exactly like GET without a body. Every page reads live rows, not the snapshot.
 */

import { HANDOFF } from "../../db/contract.ts";
import type { Handoff } from "../../db/handoffs.ts";
import { readServableEvent, type ServableEvent } from "../../db/servable-event.ts";
import { isStorageFailure, storageFailureCause } from "../../db/storage-failure.ts";
import type { AppContext } from "../context.ts";
import { handle, type RequestScope } from "../handle.ts";
import type { Logger } from "../log.ts";
import { renderEventNotFound, renderEventPage } from "../pages/event-page.ts";
import {
  renderHandoffConfirmation,
  renderHandoffExpired,
  renderHandoffNotFound,
  renderHandoffRedeemed,
  renderHandoffWithdrawn,
  renderServerError,
  renderTemporarilyUnavailable,
} from "../pages/handoff-page.ts";
import { pageResponse } from "../pages/layout.ts";
import { eventUrlFor, HANDOFF_ID_PATTERN, handoffUrlFor, parsePathId, servedTicketUrl } from "../pages/urls.ts";
import type { RouteTable } from "../route-table.ts";
import { supportedSellerLink } from "./handoffs.ts";

const RETRY_AFTER = { "retry-after": String(HANDOFF.retryAfterS) };

/**
 * Continue's answer when the ledger cannot redeem (a storage failure; test mode's
 * `handoff_unavailable` fault, docs/api.md, Test mode): a 503 page, nothing recorded.
 */
export const handoffUnavailablePage = () => pageResponse(503, renderTemporarilyUnavailable(), { headers: RETRY_AFTER });
/** Event pages change only when a sync lands; a minute of caching is harmless. */
const EVENT_PAGE_CACHE = "public, max-age=60";

type PageHandler = (scope: RequestScope, head: boolean) => Response | Promise<Response>;

/** `handle` (request id) plus HTML error pages: a storage failure is a 503 page, anything else a 500 page. */
function page(log: Logger, fn: PageHandler) {
  return handle(async (scope) => {
    const head = scope.req.method === "HEAD";
    try {
      return await fn(scope, head);
    } catch (err) {
      // A locked, full, failing or read-only ledger: nothing was recorded, Continue works again later.
      if (isStorageFailure(err)) {
        log.error(`handoff storage unavailable: ${storageFailureCause(err)}`, { requestId: scope.requestId });
        return pageResponse(503, renderTemporarilyUnavailable(), { head, headers: RETRY_AFTER });
      }
      log.error("unexpected error", {
        requestId: scope.requestId,
        method: scope.method,
        path: scope.path,
        error: err instanceof Error ? (err.stack ?? err.message) : String(err),
      });
      return pageResponse(500, renderServerError(scope.requestId), { head });
    }
  });
}

function getAndHead(app: RouteTable, log: Logger, path: string, fn: PageHandler): void {
  const handler = page(log, fn);
  app.get(path, handler);
  app.head(path, handler);
}

const param = (scope: RequestScope, name: string) => scope.event?.context.params?.[name];

export function pageRoutes(app: RouteTable, ctx: AppContext): void {
  const base = ctx.config.baseUrl;
  const eventUrlOf = (e: ServableEvent | undefined, h: Handoff) =>
    e ? eventUrlFor(base, e) : `${base}/events/${h.eventId}`;

  const eventPage: PageHandler = (scope, head) => {
    const id = parsePathId(param(scope, "id"));
    const e = id === null ? undefined : readServableEvent(ctx.replica, id);
    if (!e) return pageResponse(404, renderEventNotFound(), { head });
    // Any slug (or none) serves the page; the canonical link names the current one.
    const body = renderEventPage(e, {
      eventUrl: eventUrlFor(base, e),
      ticketUrl: servedTicketUrl(base, e),
    });
    return pageResponse(200, body, { head, cacheControl: EVENT_PAGE_CACHE });
  };
  getAndHead(app, ctx.log, "/events/:id", eventPage);
  getAndHead(app, ctx.log, "/events/:id/:slug", eventPage);

  getAndHead(app, ctx.log, "/t/:id", (scope, head) => {
    const id = parsePathId(param(scope, "id"));
    const e = id === null ? undefined : readServableEvent(ctx.replica, id);
    // ticket_destination is null for non-ticketed events and when no safe destination exists.
    if (!e?.ticketDestination) return pageResponse(404, renderEventNotFound(), { head });
    return new Response(null, { status: 302, headers: { location: e.ticketDestination, "cache-control": "no-store" } });
  });

  getAndHead(app, ctx.log, "/handoffs/:id", async (scope, head) => {
    const h = await readHandoffParam(scope);
    if (!h) return pageResponse(404, renderHandoffNotFound(), { head });
    const now = ctx.clock.now();
    const e = readServableEvent(ctx.replica, h.eventId);
    const eventUrl = eventUrlOf(e, h);
    if (h.redeemedMs !== null) return pageResponse(200, renderHandoffRedeemed(h, eventUrl), { head });
    if (now >= h.expiresMs) return pageResponse(410, renderHandoffExpired(eventUrl), { head });
    if (!e || !stillOffered(e, h)) return pageResponse(410, renderHandoffWithdrawn(eventUrl), { head });
    const view = { handoff: h, event: e, handoffUrl: handoffUrlFor(base, h.id), eventUrl, nowMs: now };
    return pageResponse(200, renderHandoffConfirmation(view), { head });
  });

  // Continue changes state, so it is POST only; a GET here (a reload, a prefetch) goes back to the page.
  getAndHead(app, ctx.log, "/handoffs/:id/continue", async (scope, head) => {
    const h = await readHandoffParam(scope);
    if (!h) return pageResponse(404, renderHandoffNotFound(), { head });
    return new Response(null, {
      status: 303,
      headers: { location: handoffUrlFor(base, h.id), "cache-control": "no-store" },
    });
  });

  app.post(
    "/handoffs/:id/continue",
    page(ctx.log, async (scope) => {
      const h = await readHandoffParam(scope);
      if (!h) return pageResponse(404, renderHandoffNotFound());
      const now = ctx.clock.now();
      const e = readServableEvent(ctx.replica, h.eventId);
      const eventUrl = eventUrlOf(e, h);
      if (h.redeemedMs !== null) return pageResponse(409, renderHandoffRedeemed(h, eventUrl));
      if (now >= h.expiresMs) return pageResponse(410, renderHandoffExpired(eventUrl));
      if (!e || !stillOffered(e, h)) return pageResponse(410, renderHandoffWithdrawn(eventUrl));
      // The checks above are advisory; the ledger's one atomic step decides, once, under concurrency.
      const r = await ctx.ledger.redeemHandoff(h.id, now);
      switch (r.outcome) {
        case "redeemed":
          return new Response(null, {
            status: 303,
            headers: { location: r.handoff.sellerUrl, "cache-control": "no-store" },
          });
        case "already_redeemed":
          return pageResponse(409, renderHandoffRedeemed(r.handoff, eventUrl));
        case "expired":
          return pageResponse(410, renderHandoffExpired(eventUrl));
        case "missing":
          return pageResponse(404, renderHandoffNotFound());
      }
    }),
  );

  async function readHandoffParam(scope: RequestScope): Promise<Handoff | undefined> {
    const id = param(scope, "id");
    return id && HANDOFF_ID_PATTERN.test(id) ? ctx.ledger.readHandoff(id) : undefined;
  }
}

/**
 * Continue re-validates the stored seller link against live rows: the event must still be
 * servable and still list that URL as a working link of a supported seller. The handoff does not
 * re-check sold-out or sales-ended: those were checked at creation, and the seller has the final
 * word on inventory.
 */
function stillOffered(e: ServableEvent, h: Handoff): boolean {
  if (!e.ticketed) return false;
  // An event of another deployment has one destination, its upstream's ticketUrl; others one per link.
  const offers = e.ticketUrl ? [e] : e.ticketLinks.filter((l) => !l.broken).map((l) => ({ ...e, ticketLinks: [l] }));
  return offers.some((offer) => {
    const link = supportedSellerLink(offer);
    return link !== null && link.url === h.sellerUrl && link.seller === h.seller;
  });
}
