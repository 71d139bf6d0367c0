/**
 * Instants as upstream records and API parameters write them (RFC 3339; no offset means UTC) and
 * as Marquee serves them (UTC `YYYY-MM-DDTHH:MM:SSZ`). Here, below sync/ and server/, because
 * both parse and print them the same way (docs/upstream-records.md; docs/api.md, Date window).
 */

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * The common form `YYYY-MM-DDTHH:MM:SSZ` by digit arithmetic (a bulk sync parses millions);
 * undefined for any other shape, which the general parser below handles.
 */
function parseCanonicalInstant(s: string): number | null | undefined {
  if (s.length !== 20 || s.charCodeAt(19) !== 90 /* Z */ || s.charCodeAt(10) !== 84 /* T */) return undefined;
  if (s[4] !== "-" || s[7] !== "-" || s[13] !== ":" || s[16] !== ":") return undefined;
  const num = (from: number, to: number) => {
    let n = 0;
    for (let i = from; i < to; i++) {
      const d = s.charCodeAt(i) - 48;
      if (d < 0 || d > 9) return -1;
      n = n * 10 + d;
    }
    return n;
  };
  const y = num(0, 4),
    mo = num(5, 7),
    d = num(8, 10),
    h = num(11, 13),
    mi = num(14, 16),
    sec = num(17, 19);
  if (y < 1000 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59) {
    return y < 1000 ? undefined : null;
  }
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  if (d > (mo === 2 && leap ? 29 : DAYS_IN_MONTH[mo - 1])) return null;
  return Date.UTC(y, mo - 1, d, h, mi, sec);
}

/** Parses an RFC 3339 date-time (no offset = UTC). Returns ms since epoch or null. */
export function parseIsoInstant(s: string): number | null {
  const fast = parseCanonicalInstant(s);
  if (fast !== undefined) return fast;
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?$/i.exec(s);
  if (!m) return null;
  const [, y, mo, d, h, mi, sec = "00", frac = "", zone = "Z"] = m;
  const ms = Date.UTC(+y, +mo - 1, +d, +h, +mi, +sec, frac ? Math.floor(Number(frac) * 1000) : 0);
  const check = new Date(ms);
  if (check.getUTCFullYear() !== +y || check.getUTCMonth() !== +mo - 1 || check.getUTCDate() !== +d) return null;
  if (+h > 23 || +mi > 59 || +sec > 59) return null;
  if (zone.toUpperCase() === "Z") return ms;
  const sign = zone[0] === "-" ? -1 : 1;
  const [zh, zm] = zone.slice(1).split(":").map(Number);
  if (zh > 23 || zm > 59) return null;
  return ms - sign * (zh * 60 + zm) * 60_000;
}

/** Normalizes an instant to 'YYYY-MM-DDTHH:MM:SSZ' (or with .sss when it has millis). */
export function isoUtc(ms: number): string {
  const s = new Date(ms).toISOString();
  return s.endsWith(".000Z") ? `${s.slice(0, -5)}Z` : s;
}
