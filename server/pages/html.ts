/**
 * Escaping by construction: the `html` tag escapes every interpolated value unless it is already
 * `SafeHtml` (the result of another `html` call). Page templates never concatenate strings into
 * markup, so an event title, a venue name or a URL from upstream cannot inject markup.
 */

export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

type Value = SafeHtml | string | number | null | undefined | false | readonly Value[];

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escapes text for element content and quoted attribute values alike. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return "";
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join("");
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): SafeHtml {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new SafeHtml(out);
}

/**
 * A URL fit for an `href`: absolute http(s), or a path on this service. Anything else (for
 * example `javascript:`) becomes `#`, so a bad upstream value can never run in a page.
 */
export function safeHref(url: string): string {
  if (url.startsWith("/") && !url.startsWith("//")) return url;
  try {
    const u = new URL(url);
    return u.protocol === "http:" || u.protocol === "https:" ? u.href : "#";
  } catch {
    return "#";
  }
}

/**
 * JSON inside `<script type="application/ld+json">`: `<` is written as `\u003c` so that no value
 * can close the element early. The data block is never executed.
 */
export function jsonScriptData(data: unknown): SafeHtml {
  return new SafeHtml(
    JSON.stringify(data)
      .replace(/</g, "\\u003c")
      .replace(/\u2028/g, "\\u2028")
      .replace(/\u2029/g, "\\u2029"),
  );
}
