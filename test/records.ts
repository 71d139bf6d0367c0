/**
 * Builders for upstream records in tests (docs/upstream-records.md), with sensible defaults and rising seq.
 */
let seq = 0;
/** Sequence numbers only ever rise within one test process, across suites. */
export const nextSeq = () => ++seq;

export function venueRecord(id: number, fields: Record<string, unknown> = {}) {
  return {
    type: "venue",
    seq: nextSeq(),
    venue: {
      id,
      name: `Venue ${id}`,
      city: "San Francisco",
      state: "CA",
      timezone: "America/Los_Angeles",
      latitude: 37.784,
      longitude: -122.433,
      geocodePrecision: "street",
      visible: true,
      ...fields,
    },
  };
}

export function eventRecord(id: number, venueId: number, startDate: string, fields: Record<string, unknown> = {}) {
  return {
    type: "event",
    seq: nextSeq(),
    event: {
      id,
      venueId,
      title: `Event ${id}`,
      slug: `event-${id}`,
      startDate,
      endDate: null,
      costText: "$25",
      isFree: false,
      isSoldOut: false,
      isLowTickets: false,
      age: null,
      website: `https://example.com/e/${id}`,
      websiteBroken: false,
      imageUrl: null,
      categories: ["Music"],
      source: "scraper:fillmore",
      status: "active",
      duplicateOf: null,
      ticketed: true,
      ticketLinks: [{ url: `https://www.ticketmaster.com/event/${id}`, seller: "ticketmaster", broken: false }],
      ...fields,
    },
  };
}

export function deleteRecord(entity: "event" | "venue", id: number) {
  return { type: "delete", seq: nextSeq(), entity, id };
}
