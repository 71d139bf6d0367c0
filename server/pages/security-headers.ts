/**
 * The security headers of every HTML response Marquee sends, decided here and nowhere else
 * (docs/api.md, Pages): a Content-Security-Policy that runs no script, loads nothing from other
 * hosts and forbids framing (`frame-ancestors 'none'`, with `X-Frame-Options: DENY` for browsers
 * that predate it), `X-Content-Type-Options: nosniff`, and a Referrer-Policy.
 *
 * What a page may vary, and why:
 * - its inline stylesheet's hash (each page family has its own stylesheet);
 * - `form-action`: the developer portal's forms post only to it; the handoff page's Continue form
 *   leaves it out, because browsers apply `form-action` to the redirect that follows the post,
 *   and Continue redirects to the seller;
 * - the Referrer-Policy: `same-origin` on the portal, since under `no-referrer` browsers send
 *   the forms' `Origin` as `null` and its same-origin check would refuse every form;
 *   `strict-origin-when-cross-origin` elsewhere, so a seller sees which site sent the buyer.
 */
import { PAGE_CSS_HASH } from "./styles.ts";

export interface HtmlSecurity {
  /** CSP source of the page's inline stylesheet; default the shared page stylesheet's hash. */
  styleSrc?: string;
  /** CSP `form-action` sources; absent: no `form-action` directive. */
  formAction?: string;
  referrerPolicy?: "strict-origin-when-cross-origin" | "same-origin";
}

export function htmlSecurityHeaders(security: HtmlSecurity = {}): Record<string, string> {
  const formAction = security.formAction ? `; form-action ${security.formAction}` : "";
  return {
    "content-security-policy": `default-src 'none'; style-src ${security.styleSrc ?? PAGE_CSS_HASH}; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'${formAction}`,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": security.referrerPolicy ?? "strict-origin-when-cross-origin",
  };
}
