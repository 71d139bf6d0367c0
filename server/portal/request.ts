/**
 * Reading a developer-portal request: whether it wants JSON, its session cookie, its body (an
 * HTML form or JSON), and the two checks every state-changing request passes before it changes
 * anything (docs/api.md, "Developer portal"):
 *
 * - a sent `Origin` must be this service's own: a cross-site page can make a browser post a form
 *   here, and the browser says so in `Origin`;
 * - the session's CSRF token must come with the request, as the `csrf_token` form field or the
 *   `X-CSRF-Token` header. A cross-site page cannot read it, so it cannot send it.
 */
import { timingSafeEqual } from "node:crypto";
import { PORTAL } from "../../db/contract.ts";

/**
 * JSON when the client asks for it and not for HTML (browsers always ask for HTML), or sends JSON
 * and accepts anything: HTML forms never send JSON.
 */
export function wantsJson(req: Request): boolean {
  const accept = req.headers.get("accept") ?? "";
  if (accept.includes("text/html")) return false;
  if (accept.includes("application/json")) return true;
  const type = req.headers.get("content-type") ?? "";
  return type.toLowerCase().startsWith("application/json") && (accept === "" || accept.includes("*/*"));
}

export function sessionCookie(req: Request): string | null {
  const header = req.headers.get("cookie");
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === PORTAL.sessionCookie) return part.slice(eq + 1).trim();
  }
  return null;
}

/** `Set-Cookie` for a new session, or (value null) one that makes the browser forget it. */
export function sessionSetCookie(baseUrl: string, value: string | null): string {
  const parts = [
    `${PORTAL.sessionCookie}=${value ?? ""}`,
    "Path=/",
    "HttpOnly",
    "SameSite=Lax",
    `Max-Age=${value === null ? 0 : Math.floor(PORTAL.sessionTtlMs / 1000)}`,
  ];
  // A session id sent over plain HTTP could be read on the way; an https service never does.
  if (baseUrl.startsWith("https:")) parts.push("Secure");
  return parts.join("; ");
}

/**
 * True when the request carries no `Origin`, or one naming this service: the configured base
 * URL, or the URL the request reached (the same service behind a different name). `null` and
 * any other origin are cross-site.
 */
export function sameOrigin(req: Request, url: URL, baseUrl: string): boolean {
  const origin = req.headers.get("origin");
  if (origin === null) return true;
  return origin === new URL(baseUrl).origin || origin === url.origin;
}

export type PortalBody = Record<string, unknown>;

/**
 * The request body as fields: an HTML form or a JSON object; an empty body is no fields.
 * Undefined when the body is neither (the caller answers 400).
 */
export async function readBody(req: Request): Promise<PortalBody | undefined> {
  const type = (req.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  const text = await req.text();
  if (type === "application/x-www-form-urlencoded") return Object.fromEntries(new URLSearchParams(text));
  if (text.trim() === "") return {};
  if (type !== "application/json") return undefined;
  try {
    const body = JSON.parse(text);
    return body && typeof body === "object" && !Array.isArray(body) ? body : undefined;
  } catch {
    return undefined;
  }
}

/** The CSRF token the request presents: the header, else the form field. */
export function presentedCsrfToken(req: Request, body: PortalBody | undefined): string | null {
  const header = req.headers.get("x-csrf-token");
  if (header) return header;
  const field = body?.csrf_token;
  return typeof field === "string" ? field : null;
}

export function csrfTokenMatches(expected: string, presented: string | null): boolean {
  if (presented === null) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}
