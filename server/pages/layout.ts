/**
 * The page shell every HTML page shares and the response it goes out in.
 *
 * Accessibility: `lang`, a skip link, banner/main/contentinfo landmarks, one `h1` per page (the
 * page body supplies it). Responsive: viewport meta and fluid CSS (server/pages/styles.ts).
 * No JavaScript anywhere; the CSP forbids scripts outright, allows only the inline stylesheet by
 * hash and forbids framing (the handoff page's Continue button must not be clickjacked).
 */
import { html, jsonScriptData, SafeHtml } from "./html.ts";
import { type HtmlSecurity, htmlSecurityHeaders } from "./security-headers.ts";
import { PAGE_CSS } from "./styles.ts";

export interface PageShell {
  title: string;
  main: SafeHtml;
  description?: string;
  /** Absolute canonical URL (event pages). */
  canonical?: string;
  /** Handoff and error pages are short-lived or per-user: keep them out of search indexes. */
  noindex?: boolean;
  /** schema.org data for link previews and search (event pages). */
  jsonLd?: unknown;
  openGraph?: Record<string, string>;
}

export function renderPage(p: PageShell): string {
  const og = Object.entries(p.openGraph ?? {}).map(([k, v]) => html`<meta property="og:${k}" content="${v}">\n`);
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${p.title} · Marquee</title>
${p.description ? html`<meta name="description" content="${p.description}">\n` : ""}${p.canonical ? html`<link rel="canonical" href="${p.canonical}">\n` : ""}${p.noindex ? html`<meta name="robots" content="noindex, nofollow">\n` : ""}${og}<style>${new SafeHtml(PAGE_CSS)}</style>
${p.jsonLd ? html`<script type="application/ld+json">${jsonScriptData(p.jsonLd)}</script>\n` : ""}</head>
<body>
<a class="skip" href="#main">Skip to main content</a>
<header class="site"><p class="brand">Marquee</p></header>
<main id="main" tabindex="-1">
${p.main}
</main>
<footer class="site"><p>Marquee lists live events and links to the sellers who sell tickets for them. It does not sell tickets itself.</p></footer>
</body>
</html>
`.value;
}

export interface PageResponseOptions {
  /** Defaults to `no-store`. */
  cacheControl?: string;
  headers?: Record<string, string>;
  /** What the page narrows in the shared security headers (server/pages/security-headers.ts). */
  security?: HtmlSecurity;
  /** HEAD: same status and headers, no body. */
  head?: boolean;
}

export function pageResponse(status: number, body: string, options: PageResponseOptions = {}): Response {
  const bytes = new TextEncoder().encode(body);
  const headers = new Headers({
    "content-type": "text/html; charset=utf-8",
    "content-length": String(bytes.byteLength),
    "cache-control": options.cacheControl ?? "no-store",
    ...htmlSecurityHeaders(options.security),
    ...options.headers,
  });
  return new Response(options.head ? null : bytes, { status, headers });
}

/** A short page for 404/409/410/500/503 outcomes: a heading, a sentence and links onward. */
export function messagePage(title: string, message: SafeHtml | string, links: SafeHtml | string = ""): string {
  return renderPage({
    title,
    noindex: true,
    main: html`<h1>${title}</h1>
<p>${message}</p>
${links}`,
  });
}
