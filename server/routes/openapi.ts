/**
 * GET /v1/openapi.json (docs/api.md: public, no key) and GET /docs, the API
 * reference rendered from the same document. Both are built once, when the first of them is asked
 * for (a server that is never asked starts without the schema converter and the page renderer:
 * docs/operations.md, Start-up): the document depends only on constants, schemas and the
 * configured base URL.
 */

import type { AppContext } from "../context.ts";
import { handle } from "../handle.ts";
import type { RouteTable } from "../route-table.ts";

interface Built {
  documentJson: string;
  docsHtml: string;
  docsHeaders: Record<string, string>;
}

async function build(baseUrl: string): Promise<Built> {
  const [{ buildOpenApiDocument }, { renderDocsPage }, { DOCS_CSS_HASH }, { htmlSecurityHeaders }] = await Promise.all([
    import("../openapi.ts"),
    import("../pages/docs.ts"),
    import("../pages/docs-css.ts"),
    import("../pages/security-headers.ts"),
  ]);
  const document = buildOpenApiDocument({ baseUrl });
  return {
    documentJson: JSON.stringify(document),
    docsHtml: renderDocsPage(document),
    // Self-contained: its one inline stylesheet, no scripts, no forms, nothing from elsewhere.
    docsHeaders: htmlSecurityHeaders({ styleSrc: DOCS_CSS_HASH, formAction: "'none'" }),
  };
}

export function openapiRoutes(app: RouteTable, ctx: AppContext): void {
  let built: Promise<Built> | undefined;
  const once = () => (built ??= build(ctx.config.baseUrl));

  app.get(
    "/v1/openapi.json",
    handle(
      async () =>
        new Response((await once()).documentJson, {
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
    handle(async () => {
      const { docsHtml, docsHeaders } = await once();
      return new Response(docsHtml, {
        headers: { "content-type": "text/html; charset=utf-8", "cache-control": "public, max-age=300", ...docsHeaders },
      });
    }),
  );
}
