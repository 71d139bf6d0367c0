/**
 * One MCP request, served statelessly: a fresh low-level `Server` and Streamable HTTP transport
 * per HTTP request (no session id, JSON responses), so any process sharing the ledger can
 * answer any call and nothing lives between requests.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { SPEC_VERSION } from "../../db/contract.ts";
import { callTool, getToolDefinitions, type ToolCallContext } from "./tools.ts";

/** JSON-RPC requests carry a handful of small arguments; refuse anything far larger. */
const MAX_MCP_BODY_BYTES = 64 * 1024;

const INSTRUCTIONS =
  "Upcoming live events in the United States. Use search_events to list events (filters by state, city, " +
  "dates, source and geography; page with cursor) and create_ticket_handoff to send a user to a ticket " +
  "seller's checkout. Limits and error codes are those of the REST API documented at /docs.";

export async function serveMcpRequest(req: Request, ctx: ToolCallContext): Promise<Response> {
  const tools = getToolDefinitions();
  const server = new Server(
    { name: "marquee", title: "Live Events Data Service", version: SPEC_VERSION },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request) =>
    callTool(ctx, request.params.name, (request.params.arguments ?? {}) as Record<string, unknown>),
  );
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: MAX_MCP_BODY_BYTES,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(req);
  } finally {
    await server.close();
  }
}
