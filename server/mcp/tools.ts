/**
 * The MCP tools (docs/api.md: "The same action exists over a separate
 * tool-protocol interface, sharing the account limits"). Each call re-enters the REST handler
 * in-process with the caller's bearer key, so validation, error codes, the request rate, row
 * budgets, trial rows and the handoff limit are the REST ones by construction, not by copy.
 *
 * Input schemas come from the same sources as the OpenAPI document: the list parameters
 * (server/openapi-params.ts) and the handoff request body (server/schemas.ts).
 */
import { toJsonSchema } from "@valibot/to-json-schema";
import type * as v from "valibot";
import { type JsonSchema, listParameters } from "../openapi-params.ts";
import * as schemas from "../schemas.ts";

/** Sends a request through the same app that serves REST. */
export type Dispatch = (request: Request) => Promise<Response>;

export interface ToolCallContext {
  dispatch: Dispatch;
  /** Origin of the /mcp request; inner requests use it so service URLs match REST's. */
  origin: string;
  /** The caller's `Authorization` header, passed on unchanged. */
  authorization: string;
}

export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  inputSchema: {
    type: "object";
    properties: Record<string, JsonSchema>;
    required?: string[];
    additionalProperties?: boolean;
  };
  outputSchema: { type: "object" } & JsonSchema;
  annotations: Record<string, boolean | string>;
}

export interface ToolResult {
  [key: string]: unknown;
  content: Array<{ type: "text"; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** Self-contained JSON Schema (no $refs, no $schema) so any client validator can compile it. */
function standalone(schema: v.GenericSchema): JsonSchema {
  const out = toJsonSchema(schema, { target: "draft-2020-12" }) as JsonSchema;
  delete out.$schema;
  return out;
}

export function getToolDefinitions(): ToolDefinition[] {
  const searchProperties = Object.fromEntries(
    listParameters().map((p) => [p.name, { ...p.schema, description: p.description }]),
  );
  return [
    {
      name: "search_events",
      title: "Search upcoming events",
      description:
        "Lists upcoming US live events exactly like GET /v1/events: same parameters, same page " +
        "({data, page:{nextCursor, hasMore, count}}), same limits. Continue with `cursor` = page.nextCursor " +
        "and the same filters while page.hasMore is true.",
      inputSchema: { type: "object", properties: searchProperties },
      outputSchema: standalone(schemas.Page) as ToolDefinition["outputSchema"],
      annotations: { readOnlyHint: true, openWorldHint: false, idempotentHint: false },
    },
    {
      name: "create_ticket_handoff",
      title: "Create a ticket handoff",
      description:
        "Creates a short-lived handoff to an external ticket seller's checkout, exactly like " +
        "POST /v1/ticket-handoffs. The user must open handoff_url and choose Continue; nothing is bought or held.",
      inputSchema: standalone(schemas.TicketHandoffRequest) as ToolDefinition["inputSchema"],
      outputSchema: standalone(schemas.TicketHandoff) as ToolDefinition["outputSchema"],
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
  ];
}

/** Query string from tool arguments: arrays repeat the parameter, scalars are sent as text. */
export function toQuery(args: Record<string, unknown>): URLSearchParams {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(args)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item === undefined || item === null) continue;
      query.append(name, typeof item === "object" ? JSON.stringify(item) : String(item));
    }
  }
  return query;
}

function request(ctx: ToolCallContext, name: string, args: Record<string, unknown>): Request {
  const headers = { authorization: ctx.authorization };
  if (name === "search_events") {
    const query = toQuery(args).toString();
    return new Request(new URL(`/v1/events${query ? `?${query}` : ""}`, ctx.origin), { headers });
  }
  // The arguments are the body as sent, so extra fields meet the REST rule ("rejected").
  return new Request(new URL("/v1/ticket-handoffs", ctx.origin), {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify(args),
  });
}

/** Runs one tool call through REST and maps the answer: 2xx → result, anything else → tool error. */
export async function callTool(ctx: ToolCallContext, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  if (name !== "search_events" && name !== "create_ticket_handoff") {
    return toolError({ status: 404, error: { code: "not_found", message: `Unknown tool: ${name}.` } });
  }
  const res = await ctx.dispatch(request(ctx, name, args));
  const text = await res.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { error: { code: "internal_error", message: "The service answered with something other than JSON." } };
  }
  if (res.ok) return { content: [{ type: "text", text }], structuredContent: body };
  const retryAfter = res.headers.get("retry-after");
  return toolError({
    status: res.status,
    ...body,
    // Handoff errors carry `request_id` at the top level; list errors inside `error`.
    requestId: res.headers.get("x-request-id") ?? undefined,
    ...(retryAfter ? { retryAfterSeconds: Number(retryAfter) } : {}),
  });
}

function toolError(detail: Record<string, unknown>): ToolResult {
  return { isError: true, content: [{ type: "text", text: JSON.stringify(detail) }] };
}
