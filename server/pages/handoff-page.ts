/**
 * The handoff confirmation page behind `handoff_url` and the pages its Continue can lead to
 * (docs/api.md, Ticket handoffs). The confirmation page says what the user is about to do — leave for a named
 * seller's checkout for a named event — and that nothing has been bought or held (docs/api.md "POST
 * /v1/ticket-handoffs": the service never buys, holds or checks inventory). Continue is a plain
 * form POST, so it works without JavaScript and link previews (which only GET) record nothing.
 */
import type { Handoff } from "../../db/handoffs.ts";
import type { ServableEvent } from "../../db/servable-event.ts";
import { formatLocalTime, formatWhen, hostOf, minutesFromNow, sellerName } from "./format.ts";
import { html, type SafeHtml, safeHref } from "./html.ts";
import { messagePage, renderPage } from "./layout.ts";

export interface HandoffView {
  handoff: Handoff;
  event: ServableEvent;
  handoffUrl: string;
  eventUrl: string;
  nowMs: number;
}

const backToEvent = (eventUrl: string) => html`<p><a href="${safeHref(eventUrl)}">Go to the event page</a></p>`;

function eventFacts(v: HandoffView): SafeHtml {
  const e = v.event;
  return html`<dl class="facts">
<dt>Event</dt><dd><a href="${safeHref(v.eventUrl)}">${e.title}</a></dd>
<dt>When</dt><dd><time datetime="${e.startDate}">${formatWhen(e)}</time></dd>
<dt>Where</dt><dd>${e.venue.name}<br>${e.venue.city}, ${e.venue.state}</dd>
<dt>Seller</dt><dd>${sellerName(v.handoff.seller)} <span class="muted">(${hostOf(v.handoff.sellerUrl)})</span></dd>
</dl>`;
}

/** Active: the confirmation page with the Continue button. */
export function renderHandoffConfirmation(v: HandoffView): string {
  const seller = sellerName(v.handoff.seller);
  const expiresAt = new Date(v.handoff.expiresMs).toISOString();
  return renderPage({
    title: `Continue to ${seller}`,
    noindex: true,
    main: html`<h1>Continue to ${seller} for tickets</h1>
<p>You are about to leave Marquee for ${seller}'s checkout for this event:</p>
${eventFacts(v)}
<p class="notice">Nothing has been bought or held. ${seller} sets prices and availability, and they can change.</p>
<form class="actions" method="post" action="${safeHref(`${v.handoffUrl}/continue`)}">
<button class="button" id="continue" type="submit">Continue to ${seller}</button>
<a href="${safeHref(v.eventUrl)}">Back to the event</a>
</form>
<p class="muted" id="expiry">This link works once and expires <time datetime="${expiresAt}">${minutesFromNow(v.handoff.expiresMs, v.nowMs)}</time>, at ${formatLocalTime(v.handoff.expiresMs, v.event.venue.timezone)}.</p>`,
  });
}

/** Redeemed: shown on a later visit (200) and on a repeated Continue (409). */
export function renderHandoffRedeemed(handoff: Handoff, eventUrl: string): string {
  const seller = sellerName(handoff.seller);
  return messagePage(
    "You already continued to the seller",
    `This link already took you to ${seller} once and does not send you there again. Check the ${seller} tab or window you opened, or start again from the event page.`,
    backToEvent(eventUrl),
  );
}

/** Expired before anyone continued (410). */
export function renderHandoffExpired(eventUrl: string): string {
  return messagePage(
    "This ticket link has expired",
    "Ticket links from Marquee work for 15 minutes. Start again from the event page to get a new one.",
    backToEvent(eventUrl),
  );
}

/** The event or its seller link went away after the handoff was made (410). */
export function renderHandoffWithdrawn(eventUrl: string): string {
  return messagePage(
    "This ticket link is no longer available",
    "The event or its ticket seller link has changed since this link was made, so it no longer leads anywhere.",
    backToEvent(eventUrl),
  );
}

export function renderHandoffNotFound(): string {
  return messagePage(
    "Ticket link not found",
    "This ticket link does not exist. Check that you copied the whole address.",
  );
}

/** The ledger could not be read or written in time (503, Retry-After). */
export function renderTemporarilyUnavailable(): string {
  return messagePage("Temporarily unavailable", "We could not complete this just now. Please try again in a minute.");
}

export function renderServerError(requestId: string): string {
  return messagePage(
    "Something went wrong",
    `An unexpected error occurred. It is safe to try again. Reference: ${requestId}.`,
  );
}
