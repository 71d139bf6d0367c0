/**
 * The OpenAPI 3.1 document (docs/api.md), built at start-up from the constants
 * in db/contract.ts, the query-parameter schemas and the response schemas in server/schemas.ts.
 * Nothing here is a hand-written copy of a limit, a code or a shape: change the constant or the
 * schema and the document follows.
 */
import { toJsonSchema, toJsonSchemaDefs } from "@valibot/to-json-schema";
import type * as v from "valibot";
import { HANDOFF, HANDOFF_ERRORS, LIST_ERRORS, SPEC_VERSION, UNROUTED_ERRORS } from "../db/contract.ts";
import {
  type HeaderObject,
  handoffResponseHeaders,
  listResponseHeaders,
  publicResponseHeaders,
} from "./openapi-headers.ts";
import { type JsonSchema, listParameters } from "./openapi-params.ts";
import { buildPortalOpenApi } from "./openapi-portal.ts";
import type { OpenApiDocument, Operation, ResponseObject } from "./openapi-types.ts";
import * as schemas from "./schemas.ts";

export type { OpenApiDocument, Operation, ResponseObject } from "./openapi-types.ts";

const CONVERT = { target: "draft-2020-12", overrideRef: (c: { referenceId: string }) => ref(c.referenceId) } as const;
const ref = (name: string) => `#/components/schemas/${name}`;

/** Named resources; nested uses (Venue in Event, Event in Page) become $refs. */
const RESOURCES = {
  Venue: schemas.Venue,
  Event: schemas.Event,
  PageInfo: schemas.PageInfo,
  Page: schemas.Page,
  TicketHandoffRequest: schemas.TicketHandoffRequest,
  TicketHandoff: schemas.TicketHandoff,
} as const;

const isUnrouted = (code: string) => (UNROUTED_ERRORS as readonly string[]).includes(code);

/** The list errors (docs/api.md, Errors), grouped by status: all but `not_found`, which no route answers. */
export function listErrorCodesByStatus(): Map<number, string[]> {
  return groupByStatus(Object.entries(LIST_ERRORS).filter(([code]) => !isUnrouted(code)));
}

/**
 * The ticket-handoff errors (docs/api.md, Ticket handoffs): `invalid_request` is also the 413 of
 * an over-long body and the 431 of an over-long head (docs/api.md, What the HTTP layer refuses).
 */
export function handoffErrorCodesByStatus(): Map<number, string[]> {
  const byStatus = groupByStatus(Object.entries(HANDOFF_ERRORS));
  byStatus.set(413, ["invalid_request"]);
  byStatus.set(431, ["invalid_request"]);
  return new Map([...byStatus].sort(([a], [b]) => a - b));
}

function groupByStatus(entries: Array<[string, number]>): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const [code, status] of entries) out.set(status, [...(out.get(status) ?? []), code]);
  return new Map([...out].sort(([a], [b]) => a - b));
}

const STATUS_TEXT: Record<number, string> = {
  400: "Bad request",
  401: "Missing or invalid API key",
  402: "Payment required",
  403: "Forbidden by plan or account",
  404: "Event not available",
  409: "Conflict",
  413: "Request body too large",
  431: "Request head too large",
  429: "Too many requests",
  500: "Unexpected error",
  503: "Temporarily unavailable",
};

export function buildOpenApiDocument(options: { baseUrl: string }): OpenApiDocument {
  const errorSchemas: Record<string, JsonSchema> = {};
  const errorResponse = (
    name: string,
    status: number,
    codes: string[],
    schema: v.GenericSchema,
    headers: Record<string, HeaderObject>,
  ): ResponseObject => {
    errorSchemas[name] = { ...(toJsonSchema(schema, CONVERT) as JsonSchema), title: name };
    delete errorSchemas[name].$schema;
    return {
      description: `${STATUS_TEXT[status] ?? "Error"}: ${codes.map((c) => `\`${c}\``).join(", ")}.`,
      headers,
      content: { "application/json": { schema: { $ref: ref(name) } } },
    };
  };

  const listResponses: Record<string, ResponseObject> = {
    200: {
      description: "A page of events, ordered by startDate then id.",
      headers: listResponseHeaders(200),
      content: { "application/json": { schema: { $ref: ref("Page") } } },
    },
  };
  for (const [status, codes] of listErrorCodesByStatus()) {
    const schema = schemas.listErrorSchema(codes as [string, ...string[]]);
    listResponses[status] = errorResponse(`ListError${status}`, status, codes, schema, listResponseHeaders(status));
  }

  const handoffResponses: Record<string, ResponseObject> = {
    201: {
      description: "The handoff was created. Nothing is bought, held or clicked.",
      headers: handoffResponseHeaders(201),
      content: { "application/json": { schema: { $ref: ref("TicketHandoff") } } },
    },
  };
  for (const [status, codes] of handoffErrorCodesByStatus()) {
    // docs/api.md, Ticket handoffs: `event_url` is present for ticket_link_unavailable (the only 409).
    const schema = schemas.handoffErrorSchema(codes as [string, ...string[]], status === 409);
    handoffResponses[status] = errorResponse(
      `HandoffError${status}`,
      status,
      codes,
      schema,
      handoffResponseHeaders(status),
    );
  }

  const developers = buildPortalOpenApi();

  return {
    openapi: "3.1.0",
    info: {
      title: "Live Events Data Service",
      version: SPEC_VERSION,
      description: INFO_DESCRIPTION,
    },
    servers: [{ url: options.baseUrl, description: "This server" }],
    tags: [
      { name: "Events", description: "Upcoming live events in the United States." },
      { name: "Ticket handoffs", description: "Short-lived handoffs to an external ticket seller's checkout." },
      { name: "Contract", description: "This machine-readable description and its reference page." },
      { name: "MCP", description: "The same actions as Model Context Protocol tools." },
      developers.tag,
    ],
    paths: {
      "/v1/events": {
        get: {
          operationId: "listEvents",
          summary: "List upcoming events",
          description: LIST_DESCRIPTION,
          tags: ["Events"],
          security: [{ bearerAuth: [] }],
          parameters: listParameters(),
          responses: listResponses,
        },
      },
      "/v1/ticket-handoffs": {
        post: {
          operationId: "createTicketHandoff",
          summary: "Create a ticket handoff",
          description: HANDOFF_DESCRIPTION,
          tags: ["Ticket handoffs"],
          security: [{ bearerAuth: [] }],
          requestBody: {
            required: true,
            description: `JSON, at most ${HANDOFF.maxBodyBytes} bytes, with exactly one field.`,
            content: { "application/json": { schema: { $ref: ref("TicketHandoffRequest") } } },
          },
          responses: handoffResponses,
        },
      },
      "/v1/openapi.json": {
        get: {
          operationId: "getOpenApiDocument",
          summary: "This document",
          description: "Public, no key. The OpenAPI 3.1 description, generated from the constants the server enforces.",
          tags: ["Contract"],
          security: [],
          responses: {
            200: {
              description: "The OpenAPI document.",
              headers: publicResponseHeaders(),
              content: { "application/json": { schema: { type: "object" } } },
            },
          },
        },
      },
      "/docs": {
        get: {
          operationId: "getReferencePage",
          summary: "API reference page",
          description: "Public, no key. This document rendered as a self-contained HTML page.",
          tags: ["Contract"],
          security: [],
          responses: {
            200: {
              description: "The reference page.",
              headers: publicResponseHeaders(),
              content: { "text/html": { schema: { type: "string" } } },
            },
          },
        },
      },
      "/mcp": { post: mcpOperation(listResponses[401]) },
      ...developers.paths,
    },
    components: {
      schemas: { ...componentSchemas(), ...errorSchemas, ...developers.schemas },
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          description:
            "`Authorization: Bearer <API_KEY>`. Keys are shown once at creation; only a SHA-256 digest is stored.",
        },
        ...developers.securitySchemes,
      },
    },
  };
}

/**
 * POST /mcp: the tool-protocol interface. Its messages are JSON-RPC (described by the MCP
 * specification, not here); what this document fixes is the key and the 401 it shares with REST.
 */
function mcpOperation(unauthorized: ResponseObject): Operation {
  const rpc = {
    description: "A JSON-RPC 2.0 message or batch (MCP Streamable HTTP, stateless).",
    oneOf: [
      { type: "object", description: "One message." },
      { type: "array", description: "A batch.", items: { type: "object" } },
    ],
  };
  return {
    operationId: "postMcpMessage",
    summary: "MCP tools: search_events, create_ticket_handoff",
    description: MCP_DESCRIPTION,
    tags: ["MCP"],
    security: [{ bearerAuth: [] }],
    requestBody: { required: true, content: { "application/json": { schema: rpc } } },
    responses: {
      200: {
        description: "JSON-RPC response(s).",
        headers: publicResponseHeaders(),
        content: { "application/json": { schema: rpc } },
      },
      202: { description: "Notifications only: accepted, no body.", headers: publicResponseHeaders() },
      401: unauthorized,
      "4XX": {
        description:
          "A request the transport refuses (malformed JSON-RPC, wrong Accept or Content-Type, GET or DELETE).",
        headers: publicResponseHeaders(),
        content: { "application/json": { schema: rpc } },
      },
    },
  };
}

function componentSchemas(): Record<string, JsonSchema> {
  return toJsonSchemaDefs(RESOURCES, CONVERT) as unknown as Record<string, JsonSchema>;
}

const INFO_DESCRIPTION = [
  "A read-only HTTP/JSON data service for upcoming live events in the United States.",
  "",
  "Send `Authorization: Bearer <API_KEY>` to `/v1/events` and `/v1/ticket-handoffs`. Every response carries `x-request-id`.",
  "Clients branch on error `code`; `message` is prose and may change.",
  "The same list and handoff actions are offered as MCP tools at `/mcp` (Streamable HTTP, bearer key), sharing every limit.",
].join("\n");

const LIST_DESCRIPTION = [
  "Events ordered by `startDate` ascending, then `id`. Sold-out events are included and flagged (`isSoldOut`).",
  "Page with `page.nextCursor` until `page.hasMore` is false; `data: []` with `hasMore: true` is normal.",
  "Not a changes-since feed: upsert by event `id`.",
].join("\n");

const MCP_DESCRIPTION = [
  "Model Context Protocol over Streamable HTTP, stateless (no session id). Send the bearer key on every request.",
  "`search_events` takes the query parameters of `GET /v1/events` and returns the same page; `create_ticket_handoff` takes `event_id` and returns the same handoff.",
  "Each call spends the same limits as the REST request it stands for. REST errors come back as tool results with `isError: true` and the REST `status` and `error.code`.",
].join("\n");

const HANDOFF_DESCRIPTION = [
  "Creates a short-lived handoff that leads a user to an external ticket seller's checkout.",
  `Limited to ${HANDOFF.creationsPerMinute} creations a minute per account, counted after authentication and before validation.`,
  "It never buys or holds tickets, checks live inventory, guarantees prices, or reports a purchase.",
].join("\n");
