/**
 * POST /mcp: the tool-protocol interface (docs/api.md: the same action over
 * a separate tool-protocol interface, sharing the account limits). Streamable HTTP, stateless,
 * bearer key. A missing or invalid key is the REST 401 `invalid_api_key` envelope with
 * WWW-Authenticate, before any protocol message is read.
 *
 * GET (a standalone event stream) and DELETE (ending a session) have no meaning without
 * sessions: 405, as the Streamable HTTP transport allows.
 *
 * The MCP SDK (with its schema and validation libraries) is loaded when /mcp is first asked for:
 * a server nobody calls over MCP starts without it (docs/operations.md, Start-up).
 */

import type { AppContext } from "../context.ts";
import { handle } from "../handle.ts";
import type { RouteTable } from "../route-table.ts";

export function mcpRoutes(app: RouteTable, ctx: AppContext): void {
  const dispatch = (request: Request) => app.dispatch(request);
  let mcp: Promise<typeof import("../mcp/server.ts")> | undefined;

  app.all(
    "/mcp",
    handle(async (scope) => {
      const { req, url } = scope;
      const identity = await ctx.access.authenticate(req);
      scope.accountId = identity.accountId;
      scope.keyId = identity.keyId;
      if (req.method !== "POST") {
        return new Response(
          JSON.stringify({
            jsonrpc: "2.0",
            error: { code: -32000, message: "Method not allowed: this server is stateless; use POST." },
            id: null,
          }),
          { status: 405, headers: { allow: "POST", "content-type": "application/json" } },
        );
      }
      mcp ??= import("../mcp/server.ts");
      const { serveMcpRequest } = await mcp;
      return serveMcpRequest(req, { dispatch, origin: url.origin, authorization: req.headers.get("authorization")! });
    }),
  );
}
