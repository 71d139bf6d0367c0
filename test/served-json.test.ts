/** The served JSON apply stores (db/served-json.ts) and the base URL a page puts in. */
import { expect, it } from "vitest";
import { jsonBase, type ServedColumns, servedJson, withBase } from "../db/served-json.ts";

const row: ServedColumns = {
  id: 7,
  title: 'A "title" with \u0001 and ,"ticketUrl":"\u0001',
  slug: "a slug",
  start_date: "2030-01-01T20:00:00Z",
  end_date: null,
  cost: "$5",
  is_free: 0,
  is_sold_out: 0,
  is_low_tickets: 1,
  age: null,
  ticket_destination: "https://tickets.example/7",
  event_url: null,
  ticket_url: null,
  website: null,
  ticket_link_status: "available",
  image_url: null,
  categories: '["Music"]',
};

/** The stored text for one base URL, closed as a page closes it with a venue, and parsed. */
const served = (r: ServedColumns, baseUrl: string) =>
  JSON.parse(`${withBase(servedJson(r), jsonBase(baseUrl))}null}`) as Record<string, unknown>;

it("puts the base URL where the page and the redirect start, whatever characters it holds", () => {
  for (const base of ["http://127.0.0.1:8080", "https://events.example/api$&$1$$", 'https://x.example/"q"\\']) {
    const e = served(row, base);
    expect(e.eventUrl).toBe(`${base}/events/7/a%20slug`);
    expect(e.ticketUrl).toBe(`${base}/t/7`);
    expect(e.title).toBe(row.title);
  }
});

it("serves another deployment's URLs as they are, and no redirect without a destination", () => {
  const other = served(
    { ...row, event_url: "https://up.example/events/7/x", ticket_url: "https://up.example/t/7" },
    "http://here",
  );
  expect([other.eventUrl, other.ticketUrl]).toEqual(["https://up.example/events/7/x", "https://up.example/t/7"]);
  expect(served({ ...row, ticket_destination: null }, "http://here").ticketUrl).toBeNull();
});
