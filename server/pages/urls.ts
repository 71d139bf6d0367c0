/**
 * The service URLs the API hands out and the pages answer (CONTRACT §3, §7). The events list
 * emits the same shapes: `eventUrl` = `{base_url}/events/{id}/{slug}`, `ticketUrl` =
 * `{base_url}/t/{id}`, `handoff_url` = `{base_url}/handoffs/{handoff_id}`.
 */

/** The slug is percent-encoded so that any upstream slug still makes one valid path segment. */
export function eventUrlFor(baseUrl: string, e: { id: number; slug: string }): string {
  return `${baseUrl}/events/${e.id}/${encodeURIComponent(e.slug)}`;
}

export function ticketUrlFor(baseUrl: string, eventId: number): string {
  return `${baseUrl}/t/${eventId}`;
}

export function handoffUrlFor(baseUrl: string, handoffId: string): string {
  return `${baseUrl}/handoffs/${handoffId}`;
}

/** A path id: decimal digits without a leading zero, within safe integers; else null (404). */
export function parsePathId(raw: string | undefined): number | null {
  if (!raw || !/^[1-9]\d{0,15}$/.test(raw)) return null;
  const n = Number(raw);
  return Number.isSafeInteger(n) ? n : null;
}

/** Handoff ids are `ho_` + 22 base62 characters (about 131 random bits). */
export const HANDOFF_ID_PATTERN = /^ho_[0-9A-Za-z]{22}$/;

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

export function newHandoffId(): string {
  let out = "ho_";
  while (out.length < 25) {
    // Rejection sampling (bytes 248..255 dropped) keeps every character equally likely.
    for (const b of crypto.getRandomValues(new Uint8Array(32))) if (b < 248 && out.length < 25) out += BASE62[b % 62];
  }
  return out;
}
