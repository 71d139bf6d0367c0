/**
 * Served fields derived at sync time (docs/upstream-records.md): cost, website and ticket destinations,
 * categories, vendor, normalized instants; and the URL fast path against the WHATWG parser.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  deriveCategories,
  deriveCost,
  deriveInstant,
  deriveTicketing,
  deriveWebsite,
  safeHttpUrl,
  vendorOf,
} from "../sync/derive.ts";

/** The definition: what the URL parser says. */
function parsed(raw: string): string | null {
  try {
    const url = new URL(raw.trim());
    if (url.protocol !== "http:" && url.protocol !== "https:") return null;
    return url.username || url.password ? null : url.href;
  } catch {
    return null;
  }
}

describe("derived fields", () => {
  it("cost follows the contract's table", () => {
    expect(deriveCost(" Free ", true)).toBe("Free");
    expect(deriveCost(null, true)).toBe("Free");
    expect(deriveCost("FREE ADMISSION", false)).toBe(null); // stale free text
    expect(deriveCost(" $25 ", false)).toBe("$25");
    expect(deriveCost("", false)).toBe(null);
    expect(deriveCost("no cover", null)).toBe("Free");
    expect(deriveCost("$0", null)).toBe("Free");
    expect(deriveCost("0", null)).toBe("Free");
    expect(deriveCost("$10 suggested", null)).toBe("$10 suggested");
    expect(deriveCost(null, null)).toBe(null);
  });

  it("website and ticket destinations drop broken, non-http and credentialed URLs", () => {
    expect(deriveWebsite("https://venue.example.com/e/1", false)).toBe("https://venue.example.com/e/1");
    expect(deriveWebsite("https://venue.example.com/e/1", true)).toBe(null);
    expect(deriveWebsite("HTTPS://Venue.Example.com", false)).toBe("https://venue.example.com/");
    for (const bad of [
      "javascript:alert(1)",
      "ftp://x.com/a",
      "www.example.com",
      "https://u:p@x.com/",
      "mailto:a@b.c",
      "",
    ]) {
      expect(deriveWebsite(bad, false)).toBe(null);
    }
    const e = (links: Array<{ url: string; seller: string | null; broken: boolean }>, ticketed = true) =>
      ({ ticketLinks: links, ticketed }) as Parameters<typeof deriveTicketing>[0];
    expect(deriveTicketing(e([]), "https://w.example.com/")).toEqual({
      status: "missing",
      destination: "https://w.example.com/",
    });
    expect(deriveTicketing(e([]), null)).toEqual({ status: "missing", destination: null });
    expect(deriveTicketing(e([{ url: "https://a.example.com/", seller: "axs", broken: true }]), null)).toEqual({
      status: "unavailable",
      destination: null,
    });
    expect(
      deriveTicketing(e([{ url: "https://a.example.com/", seller: "axs", broken: true }]), "https://w.example.com/"),
    ).toEqual({ status: "available", destination: "https://w.example.com/" });
    expect(
      deriveTicketing(
        e([
          { url: "nope", seller: null, broken: false },
          { url: "https://b.example.com/t", seller: "dice", broken: false },
        ]),
        null,
      ),
    ).toEqual({ status: "available", destination: "https://b.example.com/t" });
    expect(
      deriveTicketing(e([{ url: "https://b.example.com/t", seller: "dice", broken: false }], false), null),
    ).toEqual({ status: "available", destination: null });
  });

  it("categories keep the taxonomy's values in order without repeats; vendor strips scraper:", () => {
    expect(deriveCategories(["Music", "Concerts", "Comedy", "Music", "music"])).toEqual(["Music", "Comedy"]);
    expect(vendorOf("scraper:fillmore-sf")).toBe("fillmore-sf");
    expect(vendorOf("songkick:us")).toBe("songkick");
    expect(vendorOf("scraper:ticketmaster:resale")).toBe("ticketmaster");
  });

  it("instants are stored as UTC with seconds, keeping milliseconds only when given", () => {
    expect(deriveInstant("2030-01-01T20:00:00Z")).toEqual({
      ms: Date.UTC(2030, 0, 1, 20),
      iso: "2030-01-01T20:00:00Z",
    });
    expect(deriveInstant("2030-01-01T20:00-05:00").iso).toBe("2030-01-02T01:00:00Z");
    expect(deriveInstant("2030-01-01T20:00:00.5Z").iso).toBe("2030-01-01T20:00:00.500Z");
    expect(deriveInstant("2030-01-01t20:00:00z").iso).toBe("2030-01-01T20:00:00Z");
  });
});

describe("the URL fast path", () => {
  it("agrees with the WHATWG parser on URL-like strings", () => {
    const piece = fc.constantFrom(
      "http://",
      "https://",
      "HTTP://",
      "ftp://",
      "a",
      "Z",
      "0",
      "9",
      "-",
      ".",
      "..",
      "/",
      "/./",
      "/../",
      "%2e",
      "%2E",
      "%41",
      "%",
      "?",
      "#",
      "@",
      ":",
      ":443",
      ":80",
      "u:p@",
      "xn--",
      "xn--abc",
      "'",
      '"',
      " ",
      "\t",
      "\\",
      "|",
      "^",
      "`",
      "{",
      "<",
      "é",
      "~",
      "!",
      "$",
      "&",
      "(",
      ")",
      "*",
      "+",
      ",",
      ";",
      "=",
      "_",
      "example.com",
      "127.0.0.1",
      "0x7f",
      "1.2",
      "[::1]",
      "com",
      "x",
    );
    const candidate = fc
      .tuple(fc.constantFrom("http://", "https://", ""), fc.array(piece, { maxLength: 12 }))
      .map(([s, p]) => s + p.join(""));
    fc.assert(
      fc.property(candidate, (raw) => safeHttpUrl(raw) === parsed(raw)),
      { numRuns: 20_000 },
    );
  });

  it("takes the fast path on the usual seller and venue URLs", () => {
    for (const url of [
      "https://www.ticketmaster.com/event/0B005F3BA1C2D3E4",
      "https://www.eventbrite.com/e/improv-jam-tickets-700000000001",
      "https://the-lyric-park.example.com/events/new-york-harvest-festival-34105?ref=feed#tickets",
    ]) {
      expect(safeHttpUrl(url)).toBe(url);
      expect(parsed(url)).toBe(url);
    }
  });
});
