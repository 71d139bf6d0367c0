/**
 * Unit tests of the page building blocks: escaping by construction, safe hrefs, JSON-LD data
 * blocks, local-time formatting in the venue's zone (incl. DST and unknown zones), handoff ids.
 */
import { describe, expect, it } from "vitest";
import { formatLocalDateTime, formatWhen, knownTimeZone, minutesFromNow } from "../server/pages/format.ts";
import { escapeHtml, html, jsonScriptData, safeHref } from "../server/pages/html.ts";
import { eventUrlFor, HANDOFF_ID_PATTERN, newHandoffId, parsePathId } from "../server/pages/urls.ts";

const flat = (s: string) => s.replace(/\s+/g, " ");

describe("html escaping", () => {
  it("escapes every interpolated value and nests html fragments verbatim", () => {
    const evil = `<img src=x onerror="alert('1')">&`;
    const inner = html`<b>${evil}</b>`;
    const out = html`<p title="${evil}">${inner}${[html`<i>${"<"}</i>`, "&"]}${null}${undefined}${false}${0}</p>`.value;
    expect(out).toBe(
      '<p title="&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;">' +
        "<b>&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;</b><i>&lt;</i>&amp;0</p>",
    );
    expect(escapeHtml(`"'<>&`)).toBe("&quot;&#39;&lt;&gt;&amp;");
  });

  it("allows only http(s) URLs and local paths in hrefs", () => {
    expect(safeHref("https://a.example/x?y=1")).toBe("https://a.example/x?y=1");
    expect(safeHref("/events/1/x")).toBe("/events/1/x");
    for (const bad of [
      "javascript:alert(1)",
      "JaVaScRiPt:alert(1)",
      "data:text/html,x",
      "//evil.example",
      "not a url",
    ]) {
      expect(safeHref(bad)).toBe("#");
    }
  });

  it("keeps JSON-LD from closing its script element", () => {
    const out = jsonScriptData({ name: "</script><script>alert(1)</script>\u2028" }).value;
    expect(out).not.toContain("<");
    expect(JSON.parse(out)).toEqual({ name: "</script><script>alert(1)</script>\u2028" });
  });
});

describe("local times", () => {
  it("formats in the venue's zone, across DST, with the zone's abbreviation", () => {
    expect(flat(formatLocalDateTime(Date.parse("2030-01-02T04:00:00Z"), "America/Los_Angeles"))).toMatch(
      /^Tuesday, January 1, 2030(,| at) 8:00 PM PST$/,
    );
    expect(flat(formatLocalDateTime(Date.parse("2030-07-02T03:00:00Z"), "America/New_York"))).toMatch(
      /^Monday, July 1, 2030(,| at) 11:00 PM EDT$/,
    );
    expect(flat(formatLocalDateTime(Date.parse("2030-07-02T03:00:00Z"), "Pacific/Honolulu"))).toMatch(/5:00 PM HST$/);
  });

  it("falls back to UTC for a missing or unknown zone", () => {
    expect(knownTimeZone("Mars/Olympus_Mons")).toBeNull();
    expect(knownTimeZone(null)).toBeNull();
    expect(knownTimeZone("America/Chicago")).toBe("America/Chicago");
    expect(formatLocalDateTime(Date.parse("2030-01-02T04:00:00Z"), "Mars/Olympus_Mons")).toMatch(/4:00 AM UTC$/);
    expect(formatLocalDateTime(Date.parse("2030-01-02T04:00:00Z"), null)).toMatch(/4:00 AM UTC$/);
  });

  it("shows an end time on the same local day as a time, otherwise as a date", () => {
    const venue = { id: 1, name: "V", city: "C", state: "CA", timezone: "America/Los_Angeles" };
    const start = Date.parse("2030-01-02T04:00:00Z");
    expect(formatWhen({ startMs: start, endMs: null, venue })).not.toContain("–");
    expect(formatWhen({ startMs: start, endMs: start + 3 * 3600_000, venue })).toMatch(/8:00 PM PST – 11:00 PM PST$/);
    expect(formatWhen({ startMs: start, endMs: start + 5 * 3600_000, venue })).toMatch(/– Wednesday, January 2, 2030/);
  });

  it("says how long until expiry in whole minutes", () => {
    expect(minutesFromNow(15 * 60_000, 0)).toBe("in 15 minutes");
    expect(minutesFromNow(61_000, 0)).toBe("in 1 minute");
    expect(minutesFromNow(59_000, 0)).toBe("in less than a minute");
  });
});

describe("service URLs and ids", () => {
  it("percent-encodes slugs into one path segment", () => {
    expect(eventUrlFor("http://x", { id: 5, slug: "a b/c?d" })).toBe("http://x/events/5/a%20b%2Fc%3Fd");
  });

  it("accepts canonical decimal path ids only", () => {
    expect(parsePathId("42")).toBe(42);
    for (const bad of [undefined, "", "0", "042", "-1", "1e3", "4.2", "99999999999999999"])
      expect(parsePathId(bad)).toBeNull();
  });

  it("mints distinct opaque handoff ids of the documented shape", () => {
    const ids = new Set(Array.from({ length: 1000 }, newHandoffId));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(HANDOFF_ID_PATTERN);
  });
});
