/**
 * Served fields derived from upstream records (docs/upstream-records.md, Derived fields). Computed once at apply time.
 */
import { CATEGORIES, FREE_COST_TEXTS, UNNAMED_AGGREGATOR } from "../db/contract.ts";
import { isoUtc, parseIsoInstant } from "../db/instant.ts";
import type { EventRecord, ResolvedFields } from "./record-schema.ts";

const categorySet = new Set<string>(CATEGORIES);
const freeTexts = new Set<string>(FREE_COST_TEXTS);

export function deriveCost(costText: string | null, isFree: boolean | null): string | null {
  const text = costText?.trim() ?? "";
  const saysFree = freeTexts.has(text.toLowerCase());
  if (isFree === true) return "Free";
  if (isFree === false) return saysFree || text === "" ? null : text;
  if (saysFree) return "Free";
  return text === "" ? null : text;
}

/**
 * URLs the WHATWG parser returns unchanged: lowercase http(s), a plain lowercase host whose last
 * label starts with a letter (no IP forms, no port, no credentials), a path, and only characters
 * the parser never escapes or rewrites. Such a URL is its own href, so the parse (a microsecond
 * or two, several per event in a bulk sync) can be skipped. test/sync-derive checks it against
 * the parser.
 */
const PLAIN_HTTP_URL = /^https?:\/\/(?:[a-z0-9-]+\.)*[a-z][a-z0-9-]*\/[A-Za-z0-9\-_.~!$&()*+,;=:@%/?#]*$/;
const NEEDS_PARSER = /\/\.|%2e|:\/\/(?:[^/]*\.)?xn--/i; // dot segments; punycode labels the parser checks

/** An absolute http(s) URL without credentials, else null. */
export function safeHttpUrl(raw: string | null | undefined): string | null {
  if (!raw) return null;
  if (PLAIN_HTTP_URL.test(raw) && !NEEDS_PARSER.test(raw)) return raw;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return null;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  if (url.username || url.password) return null;
  return url.href;
}

export function deriveWebsite(website: string | null, broken: boolean): string | null {
  return broken ? null : safeHttpUrl(website);
}

export function deriveCategories(categories: readonly string[]): string[] {
  const out: string[] = [];
  for (const c of categories) if (categorySet.has(c) && !out.includes(c)) out.push(c);
  return out;
}

/** Vendor = the part after an optional `scraper:` and before the next `:`. */
export function vendorOf(source: string): string {
  const rest = source.startsWith("scraper:") ? source.slice("scraper:".length) : source;
  const colon = rest.indexOf(":");
  return colon === -1 ? rest : rest.slice(0, colon);
}

export interface TicketDerivation {
  status: "available" | "unavailable" | "missing";
  destination: string | null;
}

export function deriveTicketing(e: EventRecord["event"], website: string | null): TicketDerivation {
  const links = e.ticketLinks ?? [];
  // The first usable destination: a link that is not broken and is a safe URL, else the website.
  let usable: string | null = null;
  for (const link of links) {
    if (link.broken) continue;
    usable = safeHttpUrl(link.url);
    if (usable !== null) break;
  }
  usable ??= website;
  const status = links.length === 0 ? "missing" : usable !== null ? "available" : "unavailable";
  return { status, destination: e.ticketed === false ? null : usable };
}

/**
 * An event another deployment resolved already (docs/upstream-records.md, Already-resolved
 * fields): its ticket status as delivered, and the upstream's `ticketUrl` as the destination, so
 * this service's redirect and handoffs continue there. An unsafe URL is no destination.
 */
export function resolvedTicketing(r: ResolvedFields): TicketDerivation {
  return { status: r.ticketLinkStatus, destination: safeHttpUrl(r.ticketUrl) };
}

/**
 * The stored vendor: from `source`, unless the event was delivered with what an aggregator walk
 * learnt of it (docs/upstream-records.md, Already-resolved fields).
 */
export function deriveVendor(source: string, resolved: ResolvedFields | undefined): string {
  if (resolved?.aggregator === true) return UNNAMED_AGGREGATOR;
  if (resolved?.aggregator === false) return "";
  return vendorOf(source);
}

/**
 * The stored form of an upstream date: ms and 'YYYY-MM-DDTHH:MM:SSZ'. A string already in that
 * form (20 characters, T and Z in place, and valid, as the record schema checked) is kept as is.
 */
export function deriveInstant(s: string): { ms: number; iso: string } {
  const ms = parseIsoInstant(s)!;
  return { ms, iso: s.length === 20 && s[10] === "T" && s[19] === "Z" ? s : isoUtc(ms) };
}
