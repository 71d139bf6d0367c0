/**
 * GET /docs: the API reference, server-rendered from the OpenAPI document so it cannot say
 * anything the document does not. No scripts and no external assets (the page must work on a
 * machine without internet access). Stable ids for tests and deep links:
 *   #overview, #authentication, #operations, #op-{operationId}, #op-{operationId}-parameters,
 *   #op-{operationId}-{status}, #schemas, #schema-{Name}, #schema-{Name}-{field}, #mcp.
 */
import type { OpenApiDocument, Operation, ResponseObject } from "../openapi.ts";
import { DOCS_CSS } from "./docs-css.ts";
import {
  constraints,
  defaultLabel,
  errorCodes,
  escapeHtml,
  paragraphs,
  propertyTable,
  prose,
  type Schema,
  schemaAnchor,
  table,
  typeLabel,
} from "./docs-schema.ts";

interface OperationEntry {
  method: string;
  path: string;
  op: Operation;
}

function operations(doc: OpenApiDocument): OperationEntry[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );
}

export function renderDocsPage(doc: OpenApiDocument): string {
  const ops = operations(doc);
  const schemaNames = Object.keys(doc.components.schemas);
  const title = `${doc.info.title} API reference`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} (${escapeHtml(doc.info.version)})</title>
<style>${DOCS_CSS}</style>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="site">
<h1 id="title">${escapeHtml(title)}</h1>
<p>Version <span id="version">${escapeHtml(doc.info.version)}</span> · OpenAPI ${escapeHtml(doc.openapi)} ·
<a href="/v1/openapi.json" id="openapi-link">openapi.json</a></p>
</header>
<div class="layout">
<nav class="toc" aria-label="Contents">
<h2 id="toc-heading">Contents</h2>
<ul>
<li><a href="#overview">Overview</a></li>
<li><a href="#authentication">Authentication</a></li>
<li><a href="#operations">Endpoints</a>
<ul>${ops.map((o) => `<li><a href="#op-${o.op.operationId}">${o.method} ${escapeHtml(o.path)}</a></li>`).join("")}</ul></li>
<li><a href="#mcp">MCP tools</a></li>
<li><a href="#schemas">Schemas</a>
<ul>${schemaNames.map((n) => `<li><a href="#${schemaAnchor(n)}">${escapeHtml(n)}</a></li>`).join("")}</ul></li>
</ul>
</nav>
<main id="main">
<section id="overview" aria-labelledby="overview-heading">
<h2 id="overview-heading">Overview</h2>
${paragraphs(doc.info.description)}
<p>Base URL: ${doc.servers.map((s) => `<code>${escapeHtml(s.url)}</code>`).join(", ")}</p>
</section>
<section id="authentication" aria-labelledby="authentication-heading">
<h2 id="authentication-heading">Authentication</h2>
${Object.entries(doc.components.securitySchemes)
  .map(([name, s]) => `<p id="security-${escapeHtml(name)}">${prose((s as { description?: string }).description)}</p>`)
  .join("\n")}
</section>
<section id="operations" aria-labelledby="operations-heading">
<h2 id="operations-heading">Endpoints</h2>
${ops.map(renderOperation).join("\n")}
</section>
<section id="mcp" aria-labelledby="mcp-heading">
<h2 id="mcp-heading">MCP tools</h2>
<p>The same actions are tools of a Model Context Protocol server at <code>/mcp</code> (Streamable HTTP, stateless), authenticated with the same bearer key and sharing every limit:
<code>search_events</code> takes the query parameters of <a href="#op-listEvents">GET /v1/events</a> and returns the same page;
<code>create_ticket_handoff</code> takes <code>event_id</code> and returns the same handoff as <a href="#op-createTicketHandoff">POST /v1/ticket-handoffs</a>.
Errors come back as tool errors carrying the same code and status.</p>
</section>
<section id="schemas" aria-labelledby="schemas-heading">
<h2 id="schemas-heading">Schemas</h2>
${schemaNames.map((n) => renderSchema(n, doc.components.schemas[n] as Schema)).join("\n")}
</section>
</main>
</div>
<footer class="site"><p>Generated from the OpenAPI document this server publishes at <a href="/v1/openapi.json">/v1/openapi.json</a>.</p></footer>
</body>
</html>
`;
}

function renderOperation({ method, path, op }: OperationEntry): string {
  const id = `op-${op.operationId}`;
  const access = accessLine(op);
  const params = (op.parameters ?? []) as Array<{
    name: string;
    in: string;
    required?: boolean;
    description: string;
    schema: Schema;
  }>;
  // The list's parameters are all optional query parameters; the portal's are a path id and a header.
  const queryOnly = params.every((p) => p.in === "query" && !p.required);
  const where = (p: (typeof params)[number]) =>
    queryOnly ? "" : ` <span class="muted">(${escapeHtml(p.in)}${p.required ? ", required" : ""})</span>`;
  const paramRows = params
    .map(
      (p) => `<tr id="${id}-param-${escapeHtml(p.name)}">
  <th scope="row"><code>${escapeHtml(p.name)}</code>${where(p)}</th>
  <td>${typeLabel(p.schema)}</td>
  <td>${constraints(p.schema)}</td>
  <td>${defaultLabel(p.schema)}</td>
  <td>${prose(p.description)}</td>
</tr>`,
    )
    .join("\n");
  const body = op.requestBody as { description?: string; content: Record<string, { schema: Schema }> } | undefined;
  return `<article class="operation" id="${id}" aria-labelledby="${id}-heading">
<h3 id="${id}-heading"><span class="method ${method.toLowerCase()}">${method}</span><code>${escapeHtml(path)}</code> — ${escapeHtml(op.summary)}</h3>
<p class="access">${access}</p>
${paragraphs(op.description)}
${
  params.length
    ? `<h4 id="${id}-parameters">${queryOnly ? "Query parameters" : "Parameters"}</h4>
${table(`${id}-parameters-table`, queryOnly ? "Query parameters (all optional)" : "Parameters", ["Name", "Type", "Constraints", "Default", "Description"], paramRows)}`
    : ""
}
${
  body
    ? `<h4 id="${id}-body">Request body</h4>
<p>${Object.entries(body.content)
        .map(([type, c]) => `<code>${escapeHtml(type)}</code>: ${typeLabel(c.schema)}`)
        .join("; ")}. ${prose(body.description)}</p>`
    : ""
}
<h4 id="${id}-responses">Responses</h4>
${Object.entries(op.responses)
  .map(([status, r]) => renderResponse(id, status, r))
  .join("\n")}
</article>`;
}

function accessLine(op: Operation): string {
  if (op.security.length === 0) return "Public, no key.";
  if (op.security.some((s) => "sessionCookie" in s)) {
    return "Requires the developer portal's session cookie (opened by a one-time sign-in link); POSTs also need the session's CSRF token.";
  }
  return "Requires <code>Authorization: Bearer &lt;API_KEY&gt;</code>.";
}

function renderResponse(opId: string, status: string, response: ResponseObject): string {
  const id = `${opId}-${status}`;
  const content = Object.entries(response.content ?? {});
  const headers = Object.entries(response.headers ?? {});
  const headerRows = headers
    .map(
      ([name, h]) =>
        `<tr><th scope="row"><code>${escapeHtml(name)}</code></th><td>${typeLabel(h.schema)}</td><td>${h.required ? "always" : "when applicable"}</td><td>${prose(h.description)}</td></tr>`,
    )
    .join("\n");
  return `<section class="response" id="${id}" aria-labelledby="${id}-heading">
<h5 id="${id}-heading">${escapeHtml(status)} — ${prose(response.description)}</h5>
${content.map(([type, c]) => `<p>Body (<code>${escapeHtml(type)}</code>): ${typeLabel(c.schema)}</p>`).join("\n")}
${headers.length ? table(`${id}-headers`, `Headers of ${escapeHtml(status)}`, ["Header", "Type", "Present", "Meaning"], headerRows) : ""}
</section>`;
}

function renderSchema(name: string, schema: Schema): string {
  const codes = errorCodes(schema);
  return `<section id="${schemaAnchor(name)}" aria-labelledby="${schemaAnchor(name)}-heading">
<h3 id="${schemaAnchor(name)}-heading">${escapeHtml(name)}</h3>
${codes.length ? `<p>Error codes: ${codes.map((c) => `<code>${escapeHtml(c)}</code>`).join(", ")}.</p>` : ""}
${schema.type === "object" ? propertyTable(name, schema) : `<p>${typeLabel(schema)}</p>`}
</section>`;
}
