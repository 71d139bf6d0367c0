/**
 * The developer portal's part of the OpenAPI document: the `Developers` tag, its JSON operations
 * with every error they answer, and the session-cookie scheme they use. Shapes come from
 * server/portal/schemas.ts and codes, ceilings and lifetimes from db/contract.ts.
 *
 * The same URLs answer HTML to browsers (no `Accept: application/json`), so each status that has
 * a page also lists `text/html`.
 */
import { toJsonSchema, toJsonSchemaDefs } from "@valibot/to-json-schema";
import { PORTAL, PORTAL_ERRORS, type PortalErrorCode } from "../db/contract.ts";
import { HEADERS, type HeaderObject } from "./openapi-headers.ts";
import type { JsonSchema } from "./openapi-params.ts";
import type { Operation, ResponseObject } from "./openapi-types.ts";
import * as portal from "./portal/schemas.ts";
import { listErrorSchema } from "./schemas.ts";

// `errorMode: "ignore"`: the label's trim is what the server does to it, not a rule a schema states.
const CONVERT = {
  target: "draft-2020-12",
  errorMode: "ignore",
  overrideRef: (c: { referenceId: string }) => ref(c.referenceId),
} as const;
const ref = (name: string) => `#/components/schemas/${name}`;

const RESOURCES = {
  DeveloperKey: portal.DeveloperKey,
  CreatedDeveloperKey: portal.CreatedDeveloperKey,
  DeveloperTrial: portal.DeveloperTrial,
  DeveloperRowBudget: portal.DeveloperRowBudget,
  DeveloperAccount: portal.DeveloperAccount,
  DeveloperKeys: portal.DeveloperKeys,
  RevokedDeveloperKey: portal.RevokedDeveloperKey,
  CreateDeveloperKeyRequest: portal.CreateDeveloperKeyRequest,
} as const;

const minutes = (ms: number) => ms / 60_000;
const HTML = { "text/html": { schema: { type: "string" } } };

/** An HTML form's fields (server/portal/request.ts reads them): the CSRF token and the route's own. */
function form(fields: Record<string, { description: string; maxLength?: number }>) {
  const csrf = { type: "string", description: "The session's CSRF token, as the keys page's forms carry it." };
  const properties = Object.fromEntries(Object.entries(fields).map(([name, f]) => [name, { type: "string", ...f }]));
  return {
    "application/x-www-form-urlencoded": {
      schema: { type: "object", properties: { csrf_token: csrf, ...properties } },
    },
  };
}
const requestId = { "x-request-id": { ...HEADERS["x-request-id"], required: true } };
const retryAfter = {
  "Retry-After": {
    ...HEADERS["Retry-After"],
    description: "Seconds until the oldest creation of the last hour leaves the window.",
    required: true,
  },
};
const setCookie: Record<string, HeaderObject> = {
  "Set-Cookie": { description: `Clears \`${PORTAL.sessionCookie}\`.`, required: true, schema: { type: "string" } },
};

const MEANING: Record<PortalErrorCode, string> = {
  invalid_request: `The body is not JSON or a form, or \`label\` is not a string of at most ${PORTAL.maxLabelLength} characters.`,
  invalid_session: "No live session: sign in with a one-time link.",
  invalid_csrf_token: "A cross-site `Origin`, or the session's CSRF token missing or wrong. Nothing changed.",
  not_found: "The account has no key with this id (another account's keys are not found either).",
  key_limit_reached: "The account already holds its limit of active keys. Revoke one first. Nothing was created.",
  key_issuance_rate_limited: `${PORTAL.issuancePerWindow} keys were created in the last hour. Nothing was created.`,
  internal_error: "Unexpected error. Safe to retry.",
};

export interface PortalOpenApi {
  tag: { name: string; description: string };
  paths: Record<string, Record<string, Operation>>;
  schemas: Record<string, JsonSchema>;
  securitySchemes: Record<string, unknown>;
}

export function buildPortalOpenApi(): PortalOpenApi {
  const schemas = toJsonSchemaDefs(RESOURCES, CONVERT) as unknown as Record<string, JsonSchema>;

  /** One error status: the list envelope limited to its codes, and a page for browsers. */
  const error = (
    status: number,
    codes: PortalErrorCode[],
    headers: Record<string, HeaderObject> = {},
    page = true,
  ): ResponseObject => {
    const name = `PortalError${status}`;
    const { $schema: _, ...schema } = toJsonSchema(listErrorSchema(codes as [string, ...string[]]), CONVERT) as Record<
      string,
      unknown
    >;
    schemas[name] = { ...schema, title: name } as JsonSchema;
    return {
      description: codes.map((c) => `\`${c}\`: ${MEANING[c]}`).join(" "),
      headers: { ...requestId, ...headers },
      content: { "application/json": { schema: { $ref: ref(name) } }, ...(page ? HTML : {}) },
    };
  };
  const e400 = error(400, ["invalid_request"]);
  const e401 = error(401, ["invalid_session"]);
  const e403 = error(403, ["invalid_csrf_token"]);
  const e404 = error(404, ["not_found"]);
  const e409 = error(409, ["key_limit_reached"]);
  const e429 = error(429, ["key_issuance_rate_limited"], retryAfter);
  const e500 = error(500, ["internal_error"]);
  const ok = (description: string, schema: string | null): ResponseObject => ({
    description,
    headers: requestId,
    content: { ...(schema ? { "application/json": { schema: { $ref: ref(schema) } } } : {}), ...HTML },
  });
  const security = [{ sessionCookie: [] }];
  const csrfHeader = {
    name: "X-CSRF-Token",
    in: "header",
    required: false,
    description:
      "The session's CSRF token (`csrfToken` of `GET /developers/keys`). HTML forms send it as the `csrf_token` field instead.",
    schema: { type: "string" },
  };
  const keyId = {
    name: "id",
    in: "path",
    required: true,
    description: "The key's id.",
    schema: { type: "integer", minimum: 1 },
  };
  const tag = "Developers";

  const paths: PortalOpenApi["paths"] = {
    "/developers/keys": {
      get: {
        operationId: "listDeveloperKeys",
        summary: "The account's keys (developer portal)",
        description: [
          "The signed-in account, its keys (never their values) and the session's CSRF token. Send `Accept: application/json`; without it the same URL is the HTML keys page.",
          `Sign in by opening a one-time link \`/developers/sign-in?token=…\` from \`marquee accounts sign-in-link ID\`: it works once, within ${minutes(PORTAL.signInLinkTtlMs)} minutes, and answers 303 to this page with the session cookie (${minutes(PORTAL.sessionTtlMs) / 60} hours). A used or expired link is a 410 page.`,
        ].join("\n"),
        tags: [tag],
        security,
        responses: { 200: ok("The account and its keys.", "DeveloperKeys"), 401: e401, 500: e500 },
      },
      post: {
        operationId: "createDeveloperKey",
        summary: "Create a key",
        description: [
          "Creates a key: `live` for an account with a paid plan, `builder` otherwise. The full key is in this response only, served `Cache-Control: no-store`; only its SHA-256 digest is kept.",
          `Ceilings: at most the account's key limit of active keys (default ${PORTAL.defaultKeyLimit}; revoked keys do not count), else 409 \`key_limit_reached\`; at most ${PORTAL.issuancePerWindow} keys created per account in any rolling ${minutes(PORTAL.issuanceWindowMs)} minutes, else 429 \`key_issuance_rate_limited\` with \`Retry-After\`. The key limit is checked first. A refused request creates nothing.`,
          "Needs the session's CSRF token and, when `Origin` is sent, this service's origin.",
        ].join("\n"),
        tags: [tag],
        security,
        parameters: [csrfHeader],
        requestBody: {
          required: false,
          description: `JSON or an HTML form. \`label\`: optional, at most ${PORTAL.maxLabelLength} characters.`,
          content: {
            "application/json": { schema: { $ref: ref("CreateDeveloperKeyRequest") } },
            ...form({ label: { description: "Optional.", maxLength: PORTAL.maxLabelLength } }),
          },
        },
        responses: {
          201: ok("The new key, shown this once.", "CreatedDeveloperKey"),
          400: e400,
          401: e401,
          403: e403,
          409: e409,
          429: e429,
          500: e500,
        },
      },
    },
    "/developers/keys/{id}/revoke": {
      post: {
        operationId: "revokeDeveloperKey",
        summary: "Revoke a key",
        description: [
          "Revokes one of the account's keys: from this moment `/v1/events`, `/v1/ticket-handoffs` and `/mcp` refuse it (401 `invalid_api_key`). Revoking a revoked key changes nothing and answers the same.",
          "A browser (HTML) first gets a confirmation page (200); its form posts again with `confirm=yes`, which revokes and answers 303 to the keys page.",
        ].join("\n"),
        tags: [tag],
        security,
        parameters: [keyId, csrfHeader],
        requestBody: {
          required: false,
          description: "JSON clients send none. The HTML confirmation form posts `confirm=yes`.",
          content: form({ confirm: { description: "`yes` revokes; anything else shows the confirmation page." } }),
        },
        responses: {
          200: ok("JSON: the key is revoked. HTML: the confirmation step; nothing changed yet.", "RevokedDeveloperKey"),
          303: { description: "HTML, confirmed: revoked; see the keys page.", headers: requestId },
          401: e401,
          403: e403,
          404: e404,
          500: e500,
        },
      },
    },
    "/developers/sign-out": {
      post: {
        operationId: "signOutDeveloper",
        summary: "Sign out",
        description: "Ends the session and clears its cookie. Needs the session's CSRF token.",
        tags: [tag],
        security,
        parameters: [csrfHeader],
        requestBody: { required: false, description: "JSON clients send none.", content: form({}) },
        responses: {
          200: { description: "HTML: the signed-out page.", headers: { ...requestId, ...setCookie }, content: HTML },
          204: { description: "JSON clients: signed out.", headers: { ...requestId, ...setCookie } },
          403: e403,
          500: e500,
        },
      },
    },
  };

  return {
    tag: {
      name: tag,
      description: `The developer portal, where account owners create and revoke their own keys (session cookie, CSRF token). Error codes: ${Object.keys(
        PORTAL_ERRORS,
      )
        .map((c) => `\`${c}\``)
        .join(", ")}.`,
    },
    paths,
    schemas,
    securitySchemes: {
      sessionCookie: {
        type: "apiKey",
        in: "cookie",
        name: PORTAL.sessionCookie,
        description: `The developer portal's session (HttpOnly, SameSite=Lax, Secure on https, ${minutes(PORTAL.sessionTtlMs) / 60} hours), set by opening a one-time sign-in link.`,
      },
    },
  };
}
