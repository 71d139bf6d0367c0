/**
 * GET /v1/openapi.json (docs/api.md: public, no key) and GET /docs, the API
 * reference rendered from the same document. Both are built once at start-up: the document
 * depends only on constants, schemas and the configured base URL.
 */

import type { AppContext } from "../context.ts";
import { handle } from "../handle.ts";
import { buildOpenApiDocument } from "../openapi.ts";
import { renderDocsPage } from "../pages/docs.ts";
import { DOCS_CSS_HASH } from "../pages/docs-css.ts";
import { htmlSecurityHeaders } from "../pages/security-headers.ts";
import type { RouteTable } from "../route-table.ts";

export function openapiRoutes(app: RouteTable, ctx: AppContext): void {
  const document = buildOpenApiDocument({ baseUrl: ctx.config.baseUrl });
  const documentJson = JSON.stringify(document);
  const docsHtml = renderDocsPage(document);

  app.get(
    "/v1/openapi.json",
    handle(
      () =>
        new Response(documentJson, {
          headers: {
            "content-type": "application/json; charset=utf-8",
            // Public and the same for every caller until the server restarts.
            "cache-control": "public, max-age=300",
            "access-control-allow-origin": "*",
          },
        }),
    ),
  );

  app.get(
    "/docs",
    handle(
      () =>
        new Response(docsHtml, {
          headers: {
            "content-type": "text/html; charset=utf-8",
            "cache-control": "public, max-age=300",
            // Self-contained: its one inline stylesheet, no scripts, no forms, nothing from elsewhere.
            ...htmlSecurityHeaders({ styleSrc: DOCS_CSS_HASH, formAction: "'none'" }),
          },
        }),
    ),
  );
}
