/**
 * The HTML pages and redirects: event pages (`eventUrl`), ticket redirects (`ticketUrl`), and the
 * handoff confirmation page with its Continue lifecycle (docs/api.md, Ticket handoffs) on the test clock.
 * Runs in-process and against the Bun server.
 */
import { beforeAll, expect, it } from "vitest";
import { type Client, describeMatrix } from "./harness.ts";
import { eventRecord, venueRecord } from "./records.ts";

const NOW = "2030-03-01T12:00:00.000Z";
const tm = (id: number) => ({
  url: `https://www.ticketmaster.com/event/${id}?aff=mq`,
  seller: "ticketmaster",
  broken: false,
});
const text = (html: string) => html.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ");

async function newHandoff(c: Client, eventId: number): Promise<{ id: string; path: string; eventUrl: string }> {
  const res = await c.postJson(
    "/v1/ticket-handoffs",
    { event_id: eventId },
    { authorization: `Bearer ${await c.keyFor()}` },
  );
  expect(res.status).toBe(201);
  const body = (await res.json()) as { handoff_id: string; handoff_url: string; event_url: string };
  return { id: body.handoff_id, path: new URL(body.handoff_url).pathname, eventUrl: body.event_url };
}

const cont = (c: Client, path: string) =>
  c.fetch(`${path}/continue`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: "",
  });

async function stored(c: Client, id: string) {
  return (await (await c.get(`/_test/handoffs/${id}`)).json()) as { redeemedMs: number | null; clicks: number };
}

function expectAccessiblePage(res: Response, html: string) {
  expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
  expect(res.headers.get("x-request-id")).toBeTruthy();
  expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
  expect(html).toMatch(/^<!doctype html>\n<html lang="en">/);
  expect(html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
  expect(html).toContain('<main id="main"');
  expect(html.match(/<h1[ >]/g)).toHaveLength(1);
  // No JavaScript: the only script element is the JSON-LD data block of event pages.
  expect(html.replace(/<script type="application\/ld\+json">[^<]*<\/script>/, "")).not.toMatch(/<script/i);
}

describeMatrix("event pages and ticket redirects", (use) => {
  beforeAll(async () => {
    const c = use();
    await c.setClock(NOW);
    await c.records([
      venueRecord(1, { name: "The Fillmore", city: "San Francisco", timezone: "America/Los_Angeles" }),
      venueRecord(2, { visible: false }),
      venueRecord(3, { name: "Nowhere Hall", timezone: null }),
      eventRecord(300, 1, "2030-03-10T04:00:00Z", {
        title: `Rock <script>alert("x")</script> & "Friends"`,
        slug: "rock-friends",
        costText: "$25 - $40",
        categories: ["Music", "Nightlife"],
        isLowTickets: true,
        age: "21+",
        ticketLinks: [tm(300)],
      }),
      eventRecord(301, 1, "2030-03-10T04:00:00Z", {
        isSoldOut: true,
        ticketLinks: [tm(301)],
        costText: null,
        isFree: null,
      }),
      eventRecord(302, 1, "2030-03-10T04:00:00Z", { ticketed: false }),
      eventRecord(303, 1, "2030-03-10T04:00:00Z", { ticketLinks: [{ ...tm(303), broken: true }], website: null }),
      eventRecord(304, 1, "2030-03-10T04:00:00Z", { status: "cancelled" }),
      eventRecord(305, 2, "2030-03-10T04:00:00Z"),
      eventRecord(306, 3, "2030-03-10T04:00:00Z"),
    ]);
  });

  it("renders an event page with local time, venue, cost, categories, badge and a tickets link", async () => {
    const c = use();
    const res = await c.get("/events/300/rock-friends");
    expect(res.status).toBe(200);
    const html = await res.text();
    expectAccessiblePage(res, html);
    expect(html).toContain("Rock &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &quot;Friends&quot;");
    expect(html).not.toContain("<script>alert");
    const t = text(html);
    // 04:00 UTC on March 10 is 8:00 PM Pacific Standard Time on March 9.
    expect(t).toMatch(/Saturday, March 9, 2030(,| at) 8:00 PM PST/);
    expect(t).toContain("The Fillmore San Francisco, CA");
    expect(t).toContain("$25 - $40");
    expect(t).toContain("Music");
    expect(t).toContain("Nightlife");
    expect(t).toContain("Few tickets left");
    expect(t).toContain("21+");
    expect(html).toContain(`href="${c.target.baseUrl}/t/300"`);
    expect(html).toContain(`<link rel="canonical" href="${c.target.baseUrl}/events/300/rock-friends">`);
    expect(res.headers.get("cache-control")).toBe("public, max-age=60");
  });

  it("serves the page without a slug and under an old slug, naming the canonical URL", async () => {
    const c = use();
    for (const path of ["/events/300", "/events/300/old-slug"]) {
      const res = await c.get(path);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain(`<link rel="canonical" href="${c.target.baseUrl}/events/300/rock-friends">`);
    }
  });

  it("shows the sold-out badge, an unknown price as not listed, and UTC when the zone is unknown", async () => {
    const c = use();
    const soldOut = text(await (await c.get("/events/301/event-301")).text());
    expect(soldOut).toContain("Sold out");
    expect(soldOut).not.toContain("Few tickets left");
    expect(soldOut).toContain("Price Not listed");
    expect(soldOut).toContain("Check ticket availability");
    const noZone = text(await (await c.get("/events/306/event-306")).text());
    expect(noZone).toMatch(/March 10, 2030(,| at) 4:00 AM UTC/);
  });

  it("offers no tickets link when the event has no safe destination or is not ticketed", async () => {
    const c = use();
    for (const id of [302]) {
      const html = await (await c.get(`/events/${id}/event-${id}`)).text();
      expect(html).not.toContain(`/t/${id}`);
    }
    const noLink = await (await c.get("/events/303/event-303")).text();
    expect(noLink).toContain("No ticket link is available");
  });

  it("answers 404 pages for events that are not servable and for malformed ids", async () => {
    const c = use();
    for (const path of [
      "/events/304/event-304",
      "/events/305",
      "/events/999",
      "/events/abc",
      "/events/0",
      "/events/0300",
    ]) {
      const res = await c.get(path);
      expect(res.status, path).toBe(404);
      const html = await res.text();
      expectAccessiblePage(res, html);
      expect(html).toContain("Event not found");
    }
  });

  it("HEAD answers like GET without a body", async () => {
    const c = use();
    for (const [path, status] of [
      ["/events/300/rock-friends", 200],
      ["/events/304", 404],
      ["/t/300", 302],
    ] as const) {
      const get = await c.get(path);
      const head = await c.fetch(path, { method: "HEAD" });
      expect(head.status).toBe(status);
      expect(get.status).toBe(status);
      expect(head.headers.get("content-type")).toBe(get.headers.get("content-type"));
      expect(await head.text()).toBe("");
    }
  });

  it("redirects ticketUrl to the first usable destination, 404 page otherwise", async () => {
    const c = use();
    const res = await c.get("/t/300");
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("https://www.ticketmaster.com/event/300?aff=mq");
    // A sold-out event keeps its working link (docs/api.md, The Event object: ticketLinkStatus stays available).
    expect((await c.get("/t/301")).headers.get("location")).toBe("https://www.ticketmaster.com/event/301?aff=mq");
    for (const id of [302, 303, 304, 305, 999]) {
      const r = await c.get(`/t/${id}`);
      expect(r.status, String(id)).toBe(404);
      expect(r.headers.get("content-type")).toBe("text/html; charset=utf-8");
    }
  });
});

describeMatrix("handoff confirmation page and Continue", (use) => {
  beforeAll(async () => {
    const c = use();
    await c.setClock(NOW);
    await c.records([
      venueRecord(1, { name: "The Fillmore", timezone: "America/Los_Angeles" }),
      eventRecord(400, 1, "2030-03-10T04:00:00Z", { title: "Night & Day", slug: "night-day", ticketLinks: [tm(400)] }),
      eventRecord(401, 1, "2030-03-10T04:00:00Z", { ticketLinks: [tm(401)] }),
    ]);
  });

  it("shows event, venue, local start time, seller and expiry; viewing records nothing", async () => {
    const c = use();
    const h = await newHandoff(c, 400);
    for (let i = 0; i < 3; i++) {
      const res = await c.get(h.path);
      expect(res.status).toBe(200);
      const html = await res.text();
      expectAccessiblePage(res, html);
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(html).toContain('<meta name="robots" content="noindex, nofollow">');
      const t = text(html);
      expect(t).toContain("Night &amp; Day");
      expect(t).toContain("The Fillmore");
      expect(t).toMatch(/Saturday, March 9, 2030(,| at) 8:00 PM PST/);
      expect(t).toContain("Ticketmaster");
      expect(t).toContain("www.ticketmaster.com");
      expect(t).toMatch(/expires in 15 minutes ?, at 4:15 AM PST/);
      expect(t).toContain("Nothing has been bought or held");
      expect(html).toContain(`<form class="actions" method="post" action="${c.target.baseUrl}${h.path}/continue">`);
      expect(html).toContain(`href="${h.eventUrl}"`);
    }
    expect((await c.fetch(h.path, { method: "HEAD" })).status).toBe(200);
    expect(await stored(c, h.id)).toMatchObject({ redeemedMs: null, clicks: 0 });
  });

  it("first Continue 303s to the seller and records one click; again 409; the page then says so", async () => {
    const c = use();
    const h = await newHandoff(c, 400);
    const first = await cont(c, h.path);
    expect(first.status).toBe(303);
    expect(first.headers.get("location")).toBe("https://www.ticketmaster.com/event/400?aff=mq");
    expect(await stored(c, h.id)).toMatchObject({ clicks: 1 });

    const again = await cont(c, h.path);
    expect(again.status).toBe(409);
    expect(again.headers.get("location")).toBeNull();
    const html = await again.text();
    expectAccessiblePage(again, html);
    expect(html).toContain("You already continued to the seller");
    expect(html).toContain(`href="${h.eventUrl}"`);

    const view = await c.get(h.path);
    expect(view.status).toBe(200);
    expect(await view.text()).not.toContain("<form");
    // Still 409 after expiry: a redeemed handoff stays redeemed.
    await c.advance(16 * 60);
    expect((await cont(c, h.path)).status).toBe(409);
    expect(await stored(c, h.id)).toMatchObject({ clicks: 1 });
    await c.setClock(NOW);
  });

  it("after expires_at a never-continued handoff is a 410 page linking event_url, and records nothing", async () => {
    const c = use();
    await c.setClock(NOW);
    const h = await newHandoff(c, 400);
    await c.advance(15 * 60 - 1);
    expect((await c.get(h.path)).status).toBe(200);
    await c.advance(1);
    const view = await c.get(h.path);
    expect(view.status).toBe(410);
    const res = await cont(c, h.path);
    expect(res.status).toBe(410);
    const html = await res.text();
    expectAccessiblePage(res, html);
    expect(html).toContain("This ticket link has expired");
    expect(html).toContain(`href="${h.eventUrl}"`);
    expect(await stored(c, h.id)).toMatchObject({ redeemedMs: null, clicks: 0 });
    await c.setClock(NOW);
  });

  it("re-validates the seller link at Continue: a cancelled event gives a 410 page and no click", async () => {
    const c = use();
    await c.setClock(NOW);
    const h = await newHandoff(c, 401);
    await c.records([eventRecord(401, 1, "2030-03-10T04:00:00Z", { status: "cancelled", ticketLinks: [tm(401)] })]);
    expect((await c.get(h.path)).status).toBe(410);
    const res = await cont(c, h.path);
    expect(res.status).toBe(410);
    expect(await res.text()).toContain("no longer available");
    expect(await stored(c, h.id)).toMatchObject({ redeemedMs: null, clicks: 0 });
  });

  it("handoff_unavailable at Continue: a 503 page with Retry-After, then Continue works", async () => {
    const c = use();
    const h = await newHandoff(c, 400);
    await c.fault("handoff_unavailable", 1);
    const res = await cont(c, h.path);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("60");
    expect(await stored(c, h.id)).toMatchObject({ redeemedMs: null, clicks: 0 });
    expect((await cont(c, h.path)).status).toBe(303);
  });

  it("a GET of the Continue URL (reload, prefetch) goes back to the confirmation page and records nothing", async () => {
    const c = use();
    await c.setClock(NOW);
    const h = await newHandoff(c, 400);
    const res = await c.get(`${h.path}/continue`);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`${c.target.baseUrl}${h.path}`);
    expect((await c.fetch(`${h.path}/continue`, { method: "HEAD" })).status).toBe(303);
    expect(await stored(c, h.id)).toMatchObject({ redeemedMs: null, clicks: 0 });
  });

  it("unknown and malformed handoff ids are 404 pages", async () => {
    const c = use();
    for (const path of [
      "/handoffs/ho_AAAAAAAAAAAAAAAAAAAAAA",
      "/handoffs/nope",
      "/handoffs/ho_AAAAAAAAAAAAAAAAAAAAAA/continue",
    ]) {
      const res = path.endsWith("/continue") ? await cont(c, path.slice(0, -"/continue".length)) : await c.get(path);
      expect(res.status, path).toBe(404);
      expect(await res.text()).toContain("Ticket link not found");
    }
  });
});
