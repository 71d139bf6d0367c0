import { createHash } from "node:crypto";

/**
 * The /docs page's stylesheet, inlined so the page needs nothing from elsewhere (the service
 * may run without internet access). Colours meet WCAG AA contrast on their backgrounds.
 */
export const DOCS_CSS = `
:root { color-scheme: light; --fg: #1a1a1a; --muted: #4a4a4a; --bg: #ffffff; --panel: #f4f5f7; --line: #d0d4da; --link: #0b57d0; --accent: #7a2e00; }
* { box-sizing: border-box; }
html { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; line-height: 1.5; color: var(--fg); background: var(--bg); }
body { margin: 0; }
a { color: var(--link); }
a:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.92em; background: var(--panel); padding: 0 0.2em; border-radius: 3px; overflow-wrap: anywhere; }
.skip { position: absolute; left: -999px; top: 0; background: var(--bg); padding: 0.5rem 1rem; }
.skip:focus { left: 0.5rem; z-index: 1; }
header.site { padding: 1.5rem clamp(1rem, 4vw, 3rem); border-bottom: 1px solid var(--line); }
header.site h1 { margin: 0 0 0.25rem; font-size: clamp(1.5rem, 3vw, 2rem); }
header.site p { margin: 0; color: var(--muted); }
.layout { display: grid; grid-template-columns: minmax(12rem, 16rem) minmax(0, 1fr); gap: 2rem; padding: 0 clamp(1rem, 4vw, 3rem); }
nav.toc { position: sticky; top: 0; align-self: start; max-height: 100vh; overflow: auto; padding: 1rem 0; font-size: 0.95rem; }
nav.toc h2 { font-size: 1rem; margin: 0 0 0.5rem; }
nav.toc ul { list-style: none; margin: 0; padding-left: 0.75rem; }
nav.toc > ul { padding-left: 0; }
nav.toc li { margin: 0.15rem 0; }
@media (max-width: 50rem) {
  .layout { grid-template-columns: minmax(0, 1fr); gap: 0; }
  nav.toc { position: static; max-height: none; border-bottom: 1px solid var(--line); }
}
main { min-width: 0; padding: 1rem 0 3rem; max-width: 62rem; }
main h2 { margin-top: 2.5rem; border-bottom: 1px solid var(--line); padding-bottom: 0.25rem; }
article.operation { margin: 2rem 0; padding: 1rem 1.25rem; border: 1px solid var(--line); border-radius: 6px; }
article.operation h3 { margin-top: 0; }
.method { display: inline-block; min-width: 3.5rem; text-align: center; font-weight: 700; color: #ffffff; background: #1d5c2e; border-radius: 4px; padding: 0 0.4rem; margin-right: 0.4rem; }
.method.post { background: #0b4a8f; }
.access { color: var(--muted); }
.table-wrap { overflow-x: auto; margin: 0.75rem 0 1.25rem; }
.table-wrap:focus-visible { outline: 3px solid var(--accent); }
table { width: 100%; border-collapse: collapse; font-size: 0.95rem; }
caption { text-align: left; font-weight: 600; padding: 0.25rem 0; }
th, td { text-align: left; vertical-align: top; padding: 0.4rem 0.6rem; border-bottom: 1px solid var(--line); }
thead th { background: var(--panel); }
tbody th code { white-space: nowrap; }
section.response { margin: 1rem 0 1.5rem; }
section.response h5 { font-size: 1rem; margin: 0.5rem 0; }
ul.codes { margin: 0.25rem 0; }
footer.site { padding: 1.5rem clamp(1rem, 4vw, 3rem); border-top: 1px solid var(--line); color: var(--muted); }
`;

/** CSP source expression for the stylesheet above (server/pages/security-headers.ts). */
export const DOCS_CSS_HASH = `'sha256-${createHash("sha256").update(DOCS_CSS).digest("base64")}'`;
