/**
 * Key format and the bearer credential (docs/api.md, Plans and access, server/keys.ts): the checksum rejects
 * mistyped keys without a lookup, and the Authorization header is read as RFC 6750 writes it.
 */
import { describe, expect, it } from "vitest";
import { bearerToken, generateKey, parseKey } from "../server/keys.ts";

// The field's value as a Request's headers give it.
const req = (authorization?: string) =>
  new Request("http://x/", { headers: authorization === undefined ? {} : { authorization } }).headers.get(
    "authorization",
  );

describe("keys", () => {
  it("accepts generated keys of every kind and refuses any changed character", () => {
    for (const kind of ["live", "builder", "legacy"] as const) {
      const key = generateKey(kind);
      expect(parseKey(key)).toBe(kind);
      const i = key.length - 10;
      const changed = key.slice(0, i) + (key[i] === "a" ? "b" : "a") + key.slice(i + 1);
      expect(parseKey(changed)).toBeNull();
    }
    expect(parseKey("mq_live_short")).toBeNull();
  });

  it("reads the token of a Bearer credential and nothing else", () => {
    const key = generateKey("live");
    expect(bearerToken(req(`Bearer ${key}`))).toBe(key);
    expect(bearerToken(req(`bearer ${key}`))).toBe(key); // the scheme is case-insensitive
    expect(bearerToken(req(`Bearer   ${key}`))).toBe(key);
    expect(bearerToken(req(`Bearer ${key}  `))).toBe(key); // trailing whitespace is not part of it
    for (const bad of [
      undefined,
      "",
      "Bearer",
      "Bearer ",
      `Basic ${key}`,
      `Bearer ${key} extra`,
      `Bearer\t${key}`,
      `Bearerx ${key}`,
    ]) {
      expect(bearerToken(req(bad))).toBeNull();
    }
  });
});
