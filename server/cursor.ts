/**
 * Cursor tokens (docs/api.md, Pagination). A token is opaque
 * base64url; the version is the first field of the decoded text:
 *
 *   v1:<startMs>:<id>                                   legacy: position only
 *   v2:<startMs>:<id>:<afterMs>:<beforeMs>:<fp>:<mac>   current: pins the effective window and
 *                                                       a fingerprint of the filters as sent
 *
 * `fp` is a SHA-256 digest of every fingerprinted parameter's raw values and `mac` an HMAC-SHA256
 * (ctx.secret) of everything before it, both truncated to 128 bits. A token whose text is not
 * exactly what this module would write (altered, re-padded, forged) is `invalid_cursor`.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { PagePosition } from "../db/events-query.ts";
import { ApiError } from "./errors.ts";
import { FINGERPRINTED_PARAMS } from "./params.ts";

export type Cursor =
  | { version: 1; position: PagePosition }
  | { version: 2; position: PagePosition; afterMs: number; beforeMs: number; fingerprint: string };

export interface PinnedWindow {
  afterMs: number;
  beforeMs: number;
  fingerprint: string;
}

const DIGEST_CHARS = 22; // 16 bytes in base64url
const INT = "(-?\\d{1,16})";
const V1 = new RegExp(`^v1:${INT}:(\\d{1,16})$`);
const V2 = new RegExp(
  `^v2:${INT}:(\\d{1,16}):${INT}:${INT}:([A-Za-z0-9_-]{${DIGEST_CHARS}}):([A-Za-z0-9_-]{${DIGEST_CHARS}})$`,
);
const BASE64URL = /^[A-Za-z0-9_-]+$/;

const invalid = () =>
  new ApiError(
    "invalid_cursor",
    "The cursor is not valid. Send `page.nextCursor` unchanged, or omit `cursor` to start again.",
  );

const digest = (text: string) => createHash("sha256").update(text).digest("base64url").slice(0, DIGEST_CHARS);

function sign(secret: string, body: string): string {
  // Domain-separated from the handoff signatures that share the secret.
  return createHmac("sha256", secret)
    .update("marquee.cursor\n")
    .update(body)
    .digest("base64url")
    .slice(0, DIGEST_CHARS);
}

/** A digest of every fingerprinted parameter as sent: absent ≠ empty, order of repeats kept. */
export function filterFingerprint(query: URLSearchParams): string {
  return digest(JSON.stringify(FINGERPRINTED_PARAMS.map((name) => query.getAll(name))));
}

export function encodeCursor(secret: string, position: PagePosition, pinned: PinnedWindow): string {
  const body = `v2:${position.startMs}:${position.id}:${pinned.afterMs}:${pinned.beforeMs}:${pinned.fingerprint}`;
  return Buffer.from(`${body}:${sign(secret, body)}`).toString("base64url");
}

/** Legacy position-only token, as earlier versions minted them (docs/api.md, Pagination). */
export function encodeLegacyCursor(position: PagePosition): string {
  return Buffer.from(`v1:${position.startMs}:${position.id}`).toString("base64url");
}

const safeInt = (s: string) => {
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : null;
};

/** Decodes and verifies shape and HMAC (stage 6). Throws `invalid_cursor`. */
export function decodeCursor(secret: string, token: string): Cursor {
  // Earlier encoders may have padded; the current one never does.
  const bare = token.replace(/={1,2}$/, "");
  if (!BASE64URL.test(bare)) throw invalid();
  const bytes = Buffer.from(bare, "base64url");
  if (bytes.toString("base64url") !== bare) throw invalid();
  const text = bytes.toString("utf8");

  const v1 = V1.exec(text);
  if (v1) {
    const startMs = safeInt(v1[1]);
    const id = safeInt(v1[2]);
    if (startMs === null || id === null) throw invalid();
    return { version: 1, position: { startMs, id } };
  }

  const v2 = V2.exec(text);
  if (!v2 || bare !== token) throw invalid();
  const [, start, id, after, before, fingerprint, mac] = v2;
  const body = text.slice(0, text.length - DIGEST_CHARS - 1);
  const expected = Buffer.from(sign(secret, body));
  if (!timingSafeEqual(expected, Buffer.from(mac))) throw invalid();
  const fields = [start, id, after, before].map(safeInt);
  if (fields.some((f) => f === null)) throw invalid();
  const [startMs, eventId, afterMs, beforeMs] = fields as number[];
  // Anything this module did not write is refused, even when signed (e.g. "007").
  if (`v2:${startMs}:${eventId}:${afterMs}:${beforeMs}:${fingerprint}` !== body) throw invalid();
  return { version: 2, position: { startMs, id: eventId }, afterMs, beforeMs, fingerprint };
}

/** Stage 8: a current token must be replayed with exactly the filters it was minted with. */
export function assertCursorMatches(cursor: Cursor | null, fingerprint: string): void {
  if (cursor?.version === 2 && cursor.fingerprint !== fingerprint) {
    throw new ApiError(
      "invalid_cursor",
      "The cursor was issued for different filters or dates. Send the same parameters as the first page, or omit `cursor`.",
    );
  }
}
