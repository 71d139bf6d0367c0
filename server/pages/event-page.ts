/**
 * The event page behind `eventUrl` (docs/api.md: the canonical page, for citing and sharing):
 * title, local date and time in the venue's zone, venue and city, cost, categories, the sold-out
 * or low-tickets badge and a tickets link (the service's `ticketUrl` redirect) when there is one.
 */
import type { ServableEvent } from "../../db/servable-event.ts";
import { formatWhen, knownTimeZone } from "./format.ts";
import { html, safeHref } from "./html.ts";
import { messagePage, renderPage } from "./layout.ts";

export interface EventPageLinks {
  eventUrl: string;
  /** `{base_url}/t/{id}`, or null when the event has no safe ticket destination. */
  ticketUrl: string | null;
}

export function renderEventPage(e: ServableEvent, links: EventPageLinks): string {
  const when = formatWhen(e);
  const where = `${e.venue.name}, ${e.venue.city}, ${e.venue.state}`;
  const badges = [
    e.isSoldOut ? html`<li class="badge badge-sold-out">Sold out</li>` : "",
    !e.isSoldOut && e.isLowTickets ? html`<li class="badge badge-low">Few tickets left</li>` : "",
  ].filter(Boolean);
  const main = html`<article aria-labelledby="event-title">
<h1 id="event-title">${e.title}</h1>
${badges.length ? html`<ul class="badges" aria-label="Ticket status">${badges}</ul>` : ""}
<dl class="facts">
<dt>When</dt><dd><time datetime="${e.startDate}">${when}</time></dd>
<dt>Where</dt><dd>${e.venue.name}<br>${e.venue.city}, ${e.venue.state}</dd>
<dt>Price</dt><dd>${e.cost ?? "Not listed"}</dd>
${e.age ? html`<dt>Ages</dt><dd>${e.age}</dd>` : ""}
</dl>
${
  e.categories.length
    ? html`<h2 id="categories">Categories</h2>
<ul class="badges" aria-labelledby="categories">${e.categories.map((c) => html`<li class="badge badge-category">${c}</li>`)}</ul>`
    : ""
}
${
  links.ticketUrl || e.website
    ? html`<div class="actions">
${links.ticketUrl ? html`<a class="button" id="tickets" href="${safeHref(links.ticketUrl)}" rel="nofollow">${e.isSoldOut ? "Check ticket availability" : "Get tickets"}</a>` : ""}
${e.website ? html`<a id="website" href="${safeHref(e.website)}" rel="nofollow noopener">Event website</a>` : ""}
</div>`
    : html`<p class="notice">No ticket link is available for this event.</p>`
}
<p class="muted">${zoneNote(e.venue.timezone)}</p>
</article>`;
  return renderPage({
    title: e.title,
    description: `${e.title} at ${where}. ${when}.`,
    canonical: links.eventUrl,
    main,
    openGraph: { type: "website", title: e.title, description: `${where}. ${when}.`, url: links.eventUrl },
    jsonLd: eventJsonLd(e, links),
  });
}

function zoneNote(timeZone: string | null): string {
  const zone = knownTimeZone(timeZone);
  return zone
    ? `Times are local to the venue (${zone}).`
    : "Times are shown in UTC: the venue's time zone is not known.";
}

/** schema.org/Event, so a shared or cited event URL previews with its facts. */
function eventJsonLd(e: ServableEvent, links: EventPageLinks): Record<string, unknown> {
  return {
    "@context": "https://schema.org",
    "@type": "Event",
    name: e.title,
    url: links.eventUrl,
    startDate: e.startDate,
    ...(e.endDate ? { endDate: e.endDate } : {}),
    location: {
      "@type": "Place",
      name: e.venue.name,
      address: {
        "@type": "PostalAddress",
        addressLocality: e.venue.city,
        addressRegion: e.venue.state,
        addressCountry: "US",
      },
    },
    ...(links.ticketUrl
      ? {
          offers: {
            "@type": "Offer",
            url: links.ticketUrl,
            availability: `https://schema.org/${e.isSoldOut ? "SoldOut" : e.isLowTickets ? "LimitedAvailability" : "InStock"}`,
          },
        }
      : {}),
  };
}

/** 404 for an event that does not exist or is not servable (cancelled, removed, hidden venue). */
export function renderEventNotFound(): string {
  return messagePage(
    "Event not found",
    "This event is not listed. It may have been cancelled or removed, or the address may be wrong.",
  );
}
