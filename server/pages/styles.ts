/**
 * The one stylesheet of the HTML pages, inlined so a page is a single response that needs no
 * JavaScript and no other request. The Content-Security-Policy allows exactly this stylesheet by
 * its SHA-256 hash, so nothing else can style, script or frame the pages.
 *
 * Colours meet WCAG AA contrast (4.5:1 for text) on their backgrounds: ink #1b1b1f, muted text
 * #4a4a55 and links #1746a2 on white; white on the button (#1746a2) and the sold-out badge
 * (#9b1c1c); #5b3a00 on the low-tickets badge (#fde68a); white on the revoke button (#9b1c1c).
 */
import { createHash } from "node:crypto";

export const PAGE_CSS = [
  ":root{color-scheme:light;--ink:#1b1b1f;--muted:#4a4a55;--bg:#fff;--panel:#f3f4f7;--line:#d0d3dc;--accent:#1746a2;--accent-dark:#0f3275}",
  "*,*::before,*::after{box-sizing:border-box}",
  "html{-webkit-text-size-adjust:100%;text-size-adjust:100%}",
  'body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;line-height:1.55;color:var(--ink);background:var(--bg)}',
  ".skip{position:absolute;left:-100vw;top:.5rem;background:var(--bg);padding:.5rem 1rem;z-index:1}",
  ".skip:focus{left:.5rem}",
  ".site{padding:.75rem clamp(1rem,4vw,2rem);border-color:var(--line);border-style:solid;border-width:0 0 1px}",
  "footer.site{border-width:1px 0 0;margin-top:2rem;color:var(--muted);font-size:.9rem}",
  ".brand{font-weight:700;margin:0;letter-spacing:.02em}",
  "main{display:block;max-width:44rem;margin:0 auto;padding:clamp(1rem,4vw,2rem)}",
  "h1{font-size:clamp(1.5rem,1.1rem + 2vw,2.25rem);line-height:1.2;margin:0 0 .75rem;overflow-wrap:anywhere}",
  "h2{font-size:1.15rem;margin:1.5rem 0 .5rem}",
  "p{margin:.5rem 0}",
  "a{color:var(--accent);text-underline-offset:.15em}",
  "a:hover{color:var(--accent-dark)}",
  ":focus-visible{outline:3px solid #b45309;outline-offset:2px}",
  ".facts{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.35rem 1rem;margin:1rem 0}",
  ".facts dt{font-weight:600;color:var(--muted)}",
  ".facts dd{margin:0;overflow-wrap:anywhere}",
  "@media (max-width:32rem){.facts{grid-template-columns:minmax(0,1fr)}.facts dd{margin-bottom:.5rem}}",
  ".badges{list-style:none;padding:0;margin:.5rem 0;display:flex;flex-wrap:wrap;gap:.5rem}",
  ".badge{display:inline-block;padding:.15rem .65rem;border-radius:999px;font-weight:700;font-size:.9rem}",
  ".badge-sold-out{background:#9b1c1c;color:#fff}",
  ".badge-low{background:#fde68a;color:#5b3a00}",
  ".badge-category{background:var(--panel);color:var(--ink);font-weight:600;border:1px solid var(--line)}",
  ".actions{display:flex;flex-wrap:wrap;gap:.75rem;align-items:center;margin:1.25rem 0}",
  ".button{display:inline-block;min-height:44px;padding:.7rem 1.25rem;border:0;border-radius:.5rem;background:var(--accent);color:#fff;font:inherit;font-weight:700;text-decoration:none;cursor:pointer}",
  ".button:hover{background:var(--accent-dark);color:#fff}",
  ".notice{background:var(--panel);border-left:4px solid var(--accent);padding:.75rem 1rem;margin:1rem 0}",
  ".muted{color:var(--muted)}",
  // A generic `monospace` alone shrinks to the browser's 13px; a named stack keeps the text size.
  'code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace;font-size:.95em}',
  // Developer portal: forms, the keys table (one block per key on a phone) and the new key.
  ".visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}",
  ".title-row{display:flex;flex-wrap:wrap;gap:.75rem;align-items:center;justify-content:space-between}",
  ".title-row h1{margin:0}",
  ".title-row form{margin:0}",
  ".button-small{display:inline-flex;align-items:center;min-height:44px;padding:.45rem .9rem;font-size:.95rem}",
  ".button-secondary{background:var(--bg);color:var(--accent);border:2px solid var(--accent)}",
  ".button-secondary:hover{background:var(--panel);color:var(--accent-dark)}",
  ".button-danger{background:#9b1c1c}",
  ".button-danger:hover{background:#7a1515}",
  ".notice-error{border-left-color:#9b1c1c}",
  "label{display:block;font-weight:600;margin:.5rem 0 .25rem}",
  "label .muted{font-weight:400}",
  'input[type="text"]{width:100%;max-width:28rem;min-height:44px;padding:.5rem .65rem;font:inherit;color:var(--ink);background:var(--bg);border:1px solid var(--muted);border-radius:.4rem}',
  ".secret{display:block;padding:.75rem;background:var(--bg);border:1px solid var(--line);border-radius:.4rem;font-size:1.05rem;overflow-wrap:anywhere;-webkit-user-select:all;user-select:all}",
  ".keys{width:100%;border-collapse:collapse;margin:.5rem 0}",
  ".keys th,.keys td{text-align:left;padding:.5rem .4rem;border-bottom:1px solid var(--line);vertical-align:middle}",
  ".keys th{color:var(--muted);font-size:.9rem}",
  "@media (max-width:40rem){.keys thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}.keys,.keys tbody,.keys tr,.keys td{display:block;width:100%}.keys tr{border:1px solid var(--line);border-radius:.5rem;padding:.25rem .75rem;margin:0 0 .75rem}.keys td{display:grid;grid-template-columns:6rem minmax(0,1fr);gap:.5rem;border:0;padding:.3rem 0;overflow-wrap:anywhere}.keys td::before{content:attr(data-label);font-weight:600;color:var(--muted)}.keys td .button{justify-self:start}}",
].join("\n");

/** CSP source expression for the inline stylesheet above. */
export const PAGE_CSS_HASH = `'sha256-${createHash("sha256").update(PAGE_CSS).digest("base64")}'`;
