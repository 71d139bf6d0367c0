/**
 * Small renderers from JSON Schema (as published in the OpenAPI document) to readable HTML
 * fragments for the /docs page: type labels, constraints and property tables.
 */

export type Schema = Record<string, unknown>;

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** Escapes prose and renders the one piece of markup the document uses: `code`. */
export function prose(text: string | undefined): string {
  if (!text) return "";
  return escapeHtml(text).replace(/`([^`]+)`/g, "<code>$1</code>");
}

/** Paragraphs from newline-separated prose. */
export function paragraphs(text: string | undefined): string {
  if (!text) return "";
  return text
    .split(/\n+/)
    .filter((p) => p.trim())
    .map((p) => `<p>${prose(p)}</p>`)
    .join("\n");
}

export const schemaAnchor = (name: string) => `schema-${name}`;
const refName = (ref: string) => ref.slice(ref.lastIndexOf("/") + 1);

/** A short human label for a schema's type, with links to named schemas. */
export function typeLabel(schema: Schema): string {
  if (typeof schema.$ref === "string") {
    const name = refName(schema.$ref);
    return `<a href="#${schemaAnchor(name)}">${escapeHtml(name)}</a>`;
  }
  const anyOf = schema.anyOf as Schema[] | undefined;
  if (anyOf) {
    const nonNull = anyOf.filter((s) => s.type !== "null");
    const label = nonNull.map(typeLabel).join(" or ");
    return nonNull.length < anyOf.length ? `${label} or null` : label;
  }
  if (schema.type === "array") return `array of ${typeLabel((schema.items as Schema) ?? {})}`;
  if ("const" in schema) return `<code>${escapeHtml(JSON.stringify(schema.const))}</code>`;
  const type = Array.isArray(schema.type) ? schema.type.join(" or ") : String(schema.type ?? "any");
  return schema.format ? `${type} (${escapeHtml(String(schema.format))})` : type;
}

/** Constraints worth a reader's attention: bounds, lengths, patterns, enums, defaults. */
export function constraints(schema: Schema): string {
  const s = (schema.anyOf as Schema[] | undefined)?.find((x) => x.type !== "null") ?? schema;
  const inner = s.type === "array" ? ((s.items as Schema) ?? {}) : s;
  const parts: string[] = [];
  if (inner.minimum !== undefined) parts.push(`≥ ${inner.minimum}`);
  if (inner.exclusiveMinimum !== undefined) parts.push(`&gt; ${inner.exclusiveMinimum}`);
  if (inner.maximum !== undefined) parts.push(`≤ ${inner.maximum}`);
  if (inner.exclusiveMaximum !== undefined) parts.push(`&lt; ${inner.exclusiveMaximum}`);
  if (inner.minLength !== undefined) parts.push(`at least ${inner.minLength} characters`);
  if (inner.maxLength !== undefined) parts.push(`at most ${inner.maxLength} characters`);
  if (inner.pattern !== undefined) parts.push(`matches <code>${escapeHtml(String(inner.pattern))}</code>`);
  if (Array.isArray(inner.enum))
    parts.push(`one of ${inner.enum.map((e) => `<code>${escapeHtml(String(e))}</code>`).join(", ")}`);
  if (s.type === "array" || (schema.anyOf as Schema[] | undefined)?.some((x) => x.type === "array"))
    parts.push("repeatable");
  return parts.join("; ");
}

export function defaultLabel(schema: Schema): string {
  return schema.default === undefined ? "" : `<code>${escapeHtml(JSON.stringify(schema.default))}</code>`;
}

/** A table of an object schema's properties. */
export function propertyTable(name: string, schema: Schema): string {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const rows = Object.entries(properties)
    .map(
      ([prop, s]) => `<tr id="${schemaAnchor(name)}-${escapeHtml(prop)}">
  <th scope="row"><code>${escapeHtml(prop)}</code></th>
  <td>${typeLabel(s)}</td>
  <td>${required.has(prop) ? "yes" : "no"}</td>
  <td>${[constraints(s), prose(s.description as string | undefined)].filter(Boolean).join(". ")}</td>
</tr>`,
    )
    .join("\n");
  return table(
    `${schemaAnchor(name)}-fields`,
    `Fields of ${escapeHtml(name)}${schema.additionalProperties === false ? " (no other fields)" : ""}`,
    ["Field", "Type", "Always present", "Notes"],
    rows,
  );
}

/** A captioned table in a keyboard-scrollable wrapper (narrow screens scroll it sideways). */
export function table(id: string, caption: string, headings: string[], rows: string): string {
  return `<div class="table-wrap" role="region" tabindex="0" aria-labelledby="${id}-caption">
<table id="${id}">
<caption id="${id}-caption">${caption}</caption>
<thead><tr>${headings.map((h) => `<th scope="col">${h}</th>`).join("")}</tr></thead>
<tbody>
${rows}
</tbody>
</table>
</div>`;
}

/** The error codes an error envelope schema allows (its `error.code` enum). */
export function errorCodes(schema: Schema): string[] {
  const error = (schema.properties as Record<string, Schema> | undefined)?.error;
  const code = (error?.properties as Record<string, Schema> | undefined)?.code;
  return Array.isArray(code?.enum) ? (code.enum as string[]) : [];
}
