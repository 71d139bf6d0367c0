/**
 * Cursor tokens (server/cursor.ts): round trips, forgery and alteration, legacy tokens, and the
 * filter fingerprint (docs/api.md, Pagination).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeCursor, encodeCursor, encodeLegacyCursor, filterFingerprint } from "../server/cursor.ts";
import { ApiError } from "../server/errors.ts";

const SECRET = "test-secret";
const pinned = {
  afterMs: 1_893_456_000_000,
  beforeMs: 1_901_232_000_000,
  fingerprint: filterFingerprint(new URLSearchParams("state=CA")),
};
const position = { startMs: 1_893_528_000_000, id: 4242 };

function codeOf(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (e) {
    return e instanceof ApiError ? e.code : "not an ApiError";
  }
}

const b64 = (s: string) => Buffer.from(s).toString("base64url");

describe("cursor tokens", () => {
  it("round-trips a current token and pins window and fingerprint", () => {
    const token = encodeCursor(SECRET, position, pinned);
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Buffer.from(token, "base64url").toString().startsWith("v2:")).toBe(true);
    expect(decodeCursor(SECRET, token)).toEqual({ version: 2, position, ...pinned });
  });

  it("round-trips any position, including the before-everything position", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
        fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
        (startMs, id) => {
          const token = encodeCursor(SECRET, { startMs, id }, pinned);
          expect(decodeCursor(SECRET, token)).toMatchObject({ position: { startMs, id } });
        },
      ),
      { numRuns: 200 },
    );
  });

  it("refuses a token signed with another secret", () => {
    expect(codeOf(() => decodeCursor("other", encodeCursor(SECRET, position, pinned)))).toBe("invalid_cursor");
  });

  it("refuses every single-character alteration of a current token", () => {
    const token = encodeCursor(SECRET, position, pinned);
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    fc.assert(
      fc.property(fc.nat(token.length - 1), fc.constantFrom(...alphabet), (i, ch) => {
        fc.pre(token[i] !== ch);
        const altered = token.slice(0, i) + ch + token.slice(i + 1);
        expect(codeOf(() => decodeCursor(SECRET, altered))).toBe("invalid_cursor");
      }),
      { numRuns: 400 },
    );
    expect(codeOf(() => decodeCursor(SECRET, `${token}A`))).toBe("invalid_cursor");
    expect(codeOf(() => decodeCursor(SECRET, token.slice(0, -1)))).toBe("invalid_cursor");
    expect(codeOf(() => decodeCursor(SECRET, `${token}=`))).toBe("invalid_cursor");
  });

  it("refuses a forged payload whose fields were changed and re-encoded", () => {
    const text = Buffer.from(encodeCursor(SECRET, position, pinned), "base64url").toString();
    const forged = text.replace(`:${position.id}:`, ":1:");
    expect(codeOf(() => decodeCursor(SECRET, b64(forged)))).toBe("invalid_cursor");
    const widened = text.replace(`:${pinned.beforeMs}:`, `:${pinned.beforeMs + 86_400_000}:`);
    expect(codeOf(() => decodeCursor(SECRET, b64(widened)))).toBe("invalid_cursor");
  });

  it("accepts legacy v1 tokens as a position only", () => {
    expect(decodeCursor(SECRET, encodeLegacyCursor(position))).toEqual({ version: 1, position });
    expect(decodeCursor(SECRET, b64("v1:-5:0"))).toEqual({ version: 1, position: { startMs: -5, id: 0 } });
    // Earlier encoders may have padded.
    const padded = Buffer.from("v1:1:12").toString("base64");
    expect(padded.endsWith("=")).toBe(true);
    expect(decodeCursor(SECRET, padded.replace(/\+/g, "-").replace(/\//g, "_"))).toEqual({
      version: 1,
      position: { startMs: 1, id: 12 },
    });
  });

  it.each([
    ["empty", ""],
    ["not base64url", "a+b/c"],
    ["junk", b64("hello")],
    ["v1 without id", b64("v1:1")],
    ["v1 non-numeric", b64("v1:abc:1")],
    ["v1 negative id", b64("v1:1:-2")],
    ["v1 trailing", b64("v1:1:2:3")],
    ["v1 unsafe integer", b64("v1:99999999999999999:1")],
    ["v3", b64("v3:1:2")],
    ["v2 unsigned", b64("v2:1:2")],
    ["non-canonical base64 (same bytes, other padding bits)", `${b64("v1:1:12").slice(0, -1)}h`],
  ])("refuses %s", (_name, token) => {
    expect(codeOf(() => decodeCursor(SECRET, token))).toBe("invalid_cursor");
  });
});

describe("filter fingerprint", () => {
  const fp = (qs: string) => filterFingerprint(new URLSearchParams(qs));

  it("covers every filter as sent, and not limit, cursor or unknown parameters", () => {
    const base = fp("state=CA&source=a,b");
    expect(fp("source=a,b&state=CA")).toBe(base);
    expect(fp("state=CA&source=a,b&limit=5&cursor=x&foo=1")).toBe(base);
    for (const changed of [
      "state=ca&source=a,b",
      "state=CA&source=b,a",
      "state=CA&source=a&source=b",
      "state=CA&source=a,b&city=",
      "state=CA&source=a,b&include_centroids=false",
      "state=CA&source=a,b&exclude_sold_out=false",
      "state=CA&source=a,b&exclude_aggregators=false",
      "state=CA&source=a,b&starts_after=2030-01-01",
      "state=CA&source=a,b&starts_before=2030-01-01",
      "state=CA&source=a,b&lat=1&lng=1&radius_miles=1",
      "state=CA&source=a,b&polygon=1,1;1,2;2,2",
      "state=CA",
      "state=CA&source=a,b&source=",
    ]) {
      expect(fp(changed), changed).not.toBe(base);
    }
  });

  it("tells dates apart as sent, even when they denote the same instant", () => {
    expect(fp("starts_after=2030-01-01")).not.toBe(fp("starts_after=2030-01-01T00:00:00Z"));
  });
});
