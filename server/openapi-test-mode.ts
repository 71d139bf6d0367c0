/**
 * The OpenAPI 3.1 description of the test-mode API (docs/api.md, Test mode), served at
 * `/_test/openapi.json` by a server in test mode only. Request bodies come from the schemas the
 * routes validate with (valibot); codes, limits and ranges from db/contract.ts. Answers are
 * described here, and the test suite checks real answers against this document.
 */
import { toJsonSchema } from "@valibot/to-json-schema";
import type * as v from "valibot";
import { FAULT_CODES, KEY_KINDS, PLANS, POLICY_STATES, TEST_FAULTS, TRIAL } from "../db/contract.ts";
import { AccountInput } from "./account-input.ts";
import { HEADERS, type HeaderObject } from "./openapi-headers.ts";
import type { JsonSchema } from "./openapi-params.ts";
import type { OpenApiDocument, Operation, ResponseObject } from "./openapi-types.ts";
import { KeyInput } from "./routes/test-accounts.ts";
import { FaultInput } from "./routes/test-faults.ts";

// `errorMode: "ignore"`: an email's trim is what the server does to it, not a rule a schema states.
const CONVERT = { target: "draft-2020-12", errorMode: "ignore" } as const;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const fromValibot = (schema: v.GenericSchema): JsonSchema => {
  const { $schema: _, ...json } = toJsonSchema(schema, CONVERT) as Record<string, unknown>;
  return json as JsonSchema;
};

const int = { type: "integer" } as const;
const str = { type: "string" } as const;
const instant = { type: "string", format: "date-time" } as const;
const nullable = (schema: object) => ({ anyOf: [schema, { type: "null" }] });
const object = (properties: Record<string, object>, required = Object.keys(properties)) => ({
  type: "object",
  properties,
  required,
});

const SCHEMAS: Record<string, object> = {
  TestError: {
    ...object({
      error: object({
        code: { ...str, description: "`invalid_request`, `stale_records` or `storage_unavailable`." },
        message: str,
      }),
    }),
  },
  StaleRecords: object({
    error: {
      ...object({
        code: { const: "stale_records" },
        message: str,
        watermark: { ...int, description: "The replica's watermark: the highest seq applied." },
        line: { ...int, description: "The first line whose seq is not above it." },
        seq: { ...int, description: "That line's seq." },
      }),
    },
  }),
  Clock: object({ now: instant, frozen: { type: "boolean" } }),
  ClockMove: {
    oneOf: [
      object({ advanceSeconds: { type: "number", description: "Seconds; negative moves back." } }),
      object({ set: { ...str, description: "`YYYY-MM-DD` (midnight UTC) or an RFC 3339 date-time." } }),
    ],
  },
  Applied: object({
    applied: { ...int, description: "Records applied." },
    skipped: { ...int, description: "Always 0: a record at or below the watermark is refused (409)." },
    watermark: { ...int, description: "The replica's watermark after the records." },
    snapshotEvents: { ...int, description: "Events in the serving snapshot after the refresh." },
  }),
  Snapshot: object({ snapshotEvents: int }),
  AccountInput: fromValibot(AccountInput),
  Account: object({
    id: int,
    email: str,
    plan: { type: "string", enum: [...PLANS] },
    verified: { type: "boolean" },
    hadSubscription: { type: "boolean" },
    rowBudget: nullable(int),
    rateSustained: nullable(int),
    rateBurst: nullable(int),
    policy: { type: "string", enum: [...POLICY_STATES] },
    keyLimit: int,
    createdMs: int,
    updatedMs: int,
  }),
  AccountState: {
    allOf: [
      ref("Account"),
      object({
        access: {
          ...nullable({ type: "string", enum: ["trial", ...PLANS.filter((p) => p !== "none")] }),
          description:
            "What a request is served as: its effective plan, `trial`, or null (no plan after a subscription).",
        },
        trial: nullable(
          object({
            state: { type: "string", enum: ["not_started", "active", "expired", "exhausted"] },
            startedAt: nullable(instant),
            expiresAt: nullable(instant),
            rowsUsed: int,
            rowsLeft: { ...int, description: `Of ${TRIAL.rows}; rows held by requests in flight are not deducted.` },
          }),
        ),
        rowsUsed24h: { ...int, description: "Rows delivered in the rolling 24 hours, on every plan." },
        rowsLeft24h: { ...nullable(int), description: "What the row budget has left; null without one." },
        requestRate: {
          type: "array",
          description:
            "The request-rate buckets: one per active key, or one for the account (trials, negotiated rates).",
          items: object({
            bucket: str,
            keyId: nullable(int),
            capacity: int,
            refillPerMinute: { type: "number" },
            tokens: { ...int, description: "Whole units left, as X-RateLimit-Remaining would say." },
            fullAt: instant,
          }),
        },
        keys: {
          type: "array",
          items: object({
            id: int,
            kind: { type: "string", enum: [...KEY_KINDS] },
            prefix: { ...str, description: "The display prefix; the key itself is never shown again." },
            label: nullable(str),
            issuedBy: { type: "string", enum: ["operator", "owner"] },
            createdAt: instant,
            revokedAt: nullable(instant),
          }),
        },
      }),
    ],
  },
  KeyInput: fromValibot(KeyInput),
  IssuedKey: object({
    id: int,
    key: { ...str, description: "Shown once: only its SHA-256 digest is stored." },
    prefix: str,
    kind: { type: "string", enum: [...KEY_KINDS] },
  }),
  SignInLink: object({ url: { ...str, format: "uri" }, expiresAt: instant }),
  StoredHandoff: object({
    id: str,
    accountId: int,
    keyId: int,
    eventId: int,
    seller: str,
    sellerUrl: str,
    createdMs: int,
    expiresMs: int,
    redeemedMs: nullable(int),
    clicks: int,
  }),
  FaultInput: fromValibot(FaultInput),
  Fault: object({
    id: int,
    code: { type: "string", enum: [...FAULT_CODES] },
    times: { ...int, description: "Requests it still fails." },
    keyId: nullable(int),
    path: nullable(str),
    delayMs: nullable(int),
  }),
  Faults: object({ faults: { type: "array", items: ref("Fault") } }),
  Cleared: object({ cleared: { ...int, description: "Faults disarmed." } }),
  ResetInput: {
    type: "object",
    properties: { replica: { type: "boolean", default: false, description: "Also empty the replica." } },
    additionalProperties: false,
  },
  Reset: object({ ok: { const: true }, replica: { type: "string", enum: ["kept", "emptied"] } }),
  JournalEntry: object({
    time: instant,
    requestId: str,
    method: str,
    path: str,
    query: { ...nullable(str), description: "The query string as sent." },
    status: int,
    code: { ...nullable(str), description: "The error code of an error answer." },
    keyId: nullable(int),
    accountId: nullable(int),
    rows: { ...nullable(int), description: "Event rows delivered." },
  }),
  Journal: object({ requests: { type: "array", items: ref("JournalEntry"), maxItems: 1000 } }),
};

const json = (schema: string) => ({ "application/json": { schema: ref(schema) } });
const requestId = { "x-request-id": { ...HEADERS["x-request-id"], required: true } };
const answer = (
  description: string,
  schema: string | null,
  headers: Record<string, HeaderObject> = {},
): ResponseObject => ({
  description,
  headers: { ...requestId, ...headers },
  ...(schema ? { content: json(schema) } : {}),
});
const BAD = answer("Bad input: `invalid_request` naming what is wrong.", "TestError");
const UNKNOWN = answer("No such account (or handoff).", "TestError");
const STORAGE = answer(
  "`storage_unavailable`: the ledger or the replica could not take the write (its SQLite cause in the message).",
  "TestError",
  { "Retry-After": { description: "Seconds: 1.", required: true, schema: { type: "integer", minimum: 1 } } },
);
const idParam = (what: string) => ({ name: "id", in: "path", required: true, description: what, schema: str });

function op(
  operationId: string,
  summary: string,
  description: string,
  responses: Record<string, ResponseObject>,
  extra: Partial<Operation> = {},
): Operation {
  return { operationId, summary, description, tags: ["Test mode"], security: [], responses, ...extra };
}
const body = (schema: string, required = true) => ({ required, content: json(schema) });

function paths(): Record<string, Record<string, Operation>> {
  return {
    "/_test/clock": {
      get: op("getTestClock", "Read the clock", "The server's now, and whether it is frozen.", {
        200: answer("The clock.", "Clock"),
      }),
      post: op(
        "moveTestClock",
        "Move the clock",
        "Freezes the clock at an instant, or moves it by seconds. Every server-side now follows it: default windows, horizons, trial days, rate buckets, row budgets, handoff expiry. It stays within 1970-01-01 to 9999-12-31.",
        { 200: answer("The clock after the move.", "Clock"), 400: BAD },
        { requestBody: body("ClockMove") },
      ),
    },
    "/_test/records": {
      post: op(
        "applyTestRecords",
        "Apply upstream records",
        "NDJSON upstream records (docs/upstream-records.md) through the sync path, then a snapshot refresh. A record without `seq` gets the next one after the watermark (or after the record before it). A record whose `seq` is at or below the watermark is refused with 409 `stale_records` and nothing is applied; a bad line is a 400 naming it, and nothing is applied.",
        {
          200: answer("Applied.", "Applied"),
          400: BAD,
          409: answer("A record at or below the replica's watermark: nothing was applied.", "StaleRecords"),
          503: STORAGE,
        },
        { requestBody: { required: true, content: { "application/x-ndjson": { schema: str } } } },
      ),
    },
    "/_test/snapshot": {
      post: op("refreshTestSnapshot", "Refresh the snapshot", "Refreshes the serving snapshot now.", {
        200: answer("Refreshed.", "Snapshot"),
        503: STORAGE,
      }),
    },
    "/_test/accounts": {
      post: op(
        "createTestAccount",
        "Create an account",
        "The same as `marquee accounts create`. `plan: none` is no developer plan: a verified account without a prior subscription gets a trial.",
        { 201: answer("Created.", "Account"), 400: BAD, 503: STORAGE },
        { requestBody: body("AccountInput") },
      ),
    },
    "/_test/accounts/{id}": {
      get: op(
        "getTestAccount",
        "Read an account's state",
        "The account with what the request path counts for it, read without spending anything: trial, rows of the last 24 hours, request-rate buckets, keys (never a key).",
        { 200: answer("The account's state.", "AccountState"), 404: UNKNOWN },
        { parameters: [idParam("The account id.")] },
      ),
      patch: op(
        "updateTestAccount",
        "Change an account",
        "The same as `marquee accounts update`.",
        { 200: answer("Changed.", "Account"), 400: BAD, 404: UNKNOWN, 503: STORAGE },
        { parameters: [idParam("The account id.")], requestBody: body("AccountInput") },
      ),
    },
    "/_test/accounts/{id}/keys": {
      post: op(
        "createTestKey",
        "Issue a key",
        "Issues a key of the account (kind `live` unless given). The key is in this answer and nowhere else.",
        { 201: answer("Issued.", "IssuedKey"), 400: BAD, 404: UNKNOWN, 503: STORAGE },
        { parameters: [idParam("The account id.")], requestBody: body("KeyInput", false) },
      ),
    },
    "/_test/accounts/{id}/sign-in-link": {
      post: op(
        "createTestSignInLink",
        "A sign-in link",
        "A one-time link to the account owner's developer portal, as `marquee accounts sign-in-link`.",
        { 201: answer("The link.", "SignInLink"), 404: UNKNOWN },
        { parameters: [idParam("The account id.")] },
      ),
    },
    "/_test/handoffs/{id}": {
      get: op(
        "getTestHandoff",
        "Read a handoff",
        "A ticket handoff as the ledger holds it, with the clicks Continue recorded.",
        { 200: answer("The handoff.", "StoredHandoff"), 404: UNKNOWN },
        { parameters: [idParam("The handoff id (`ho_…`).")] },
      ),
    },
    "/_test/faults": {
      post: op(
        "armTestFault",
        "Arm a fault",
        `The next \`times\` requests the fault matches fail with \`code\`, answered exactly as the endpoint refuses with it (status, headers, envelope), and spend nothing. \`code\` is any code \`GET /v1/events\` or \`POST /v1/ticket-handoffs\` answers with, \`handoff_unavailable\` also at Continue, or \`delay\` (with \`delayMs\`, at most ${TEST_FAULTS.maxDelayMs}: the real answer, late) or \`reset\` (the connection closed without an answer). \`keyId\` limits it to one key's requests and \`path\` to paths starting with it; faults match in the order they were armed, one per request.`,
        { 201: answer("Armed.", "Fault"), 400: BAD },
        { requestBody: body("FaultInput") },
      ),
      get: op("listTestFaults", "Pending faults", "Armed faults in arming order, with the uses each has left.", {
        200: answer("The faults.", "Faults"),
      }),
      delete: op("clearTestFaults", "Clear faults", "Disarms every fault.", {
        200: answer("Cleared.", "Cleared"),
      }),
    },
    "/_test/reset": {
      post: op(
        "resetTest",
        "Reset",
        "Empties the ledger (accounts, keys, usage, trials, handoffs, sessions) and disarms every fault; the cursor secret and the clock stay. With `replica: true` it also empties the replica: venues, events, the snapshot and the watermark.",
        { 200: answer("Reset.", "Reset"), 400: BAD, 503: STORAGE },
        { requestBody: body("ResetInput", false) },
      ),
    },
    "/_test/requests": {
      get: op(
        "listTestRequests",
        "The request journal",
        "The last requests this server answered, newest last (at most 1,000 kept): never a key or a body.",
        { 200: answer("The journal.", "Journal"), 400: BAD },
        {
          parameters: [
            {
              name: "limit",
              in: "query",
              required: false,
              description: "At most this many of the most recent requests.",
              schema: { type: "integer", minimum: 1, maximum: 1000 },
            },
          ],
        },
      ),
      delete: op("clearTestRequests", "Empty the journal", "Forgets every journalled request.", {
        "2XX": answer("Emptied.", null),
      }),
    },
    "/_test/openapi.json": {
      get: op("getTestOpenApi", "This document", "The OpenAPI 3.1 description of the test-mode API.", {
        200: { ...answer("This document.", null), content: { "application/json": { schema: { type: "object" } } } },
      }),
    },
  };
}

export function buildTestModeOpenApi(options: { baseUrl: string; version: string }): OpenApiDocument {
  return {
    openapi: "3.1.0",
    info: {
      title: "Marquee test mode",
      version: options.version,
      description:
        "What `marquee serve --test-mode` adds for test suites: the clock, records, accounts and keys, faults, reset and the request journal. Served in test mode only; without it every `/_test/*` path is 404. The API itself is described at `/v1/openapi.json`.",
    },
    servers: [{ url: options.baseUrl, description: "This server, in test mode" }],
    tags: [{ name: "Test mode", description: "Drive a Marquee from a test suite." }],
    paths: paths(),
    components: { schemas: SCHEMAS as Record<string, JsonSchema>, securitySchemes: {} },
  };
}
