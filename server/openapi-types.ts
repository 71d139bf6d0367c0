/** The shapes of the OpenAPI document that server/openapi.ts and its parts build. */
import type { HeaderObject } from "./openapi-headers.ts";
import type { JsonSchema } from "./openapi-params.ts";

export type OpenApiDocument = {
  openapi: "3.1.0";
  info: { title: string; version: string; description: string };
  servers: Array<{ url: string; description?: string }>;
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, JsonSchema>;
    securitySchemes: Record<string, unknown>;
  };
  tags: Array<{ name: string; description: string }>;
};

export type Operation = {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  security: Array<Record<string, string[]>>;
  parameters?: unknown[];
  requestBody?: unknown;
  responses: Record<string, ResponseObject>;
};

export type ResponseObject = {
  description: string;
  headers?: Record<string, HeaderObject>;
  content?: Record<string, { schema: JsonSchema }>;
};
