/**
 * The OpenAPI document and the /docs page: generated from the constants and schemas the server
 * enforces (so a changed limit or code shows up here), valid OpenAPI 3.1 by Redocly's linter,
 * and a validator that really fails on non-conforming responses.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CATEGORIES,
  GEOCODE_PRECISIONS,
  HANDOFF,
  HANDOFF_ERRORS,
  LIST,
  LIST_ERRORS,
  PORTAL_ERRORS,
  SPEC_VERSION,
  UNROUTED_ERRORS,
  US_STATES,
} from "../db/contract.ts";
import { parseListParams } from "../server/list/parse.ts";
import { buildOpenApiDocument, type OpenApiDocument } from "../server/openapi.ts";
import { LIST_PARAMETERS, WIRE_PATTERNS } from "../server/params.ts";
import { ROOT, startInProcess, type Target } from "./harness.ts";
import { ContractValidator } from "./openapi-validator.ts";

const doc = buildOpenApiDocument({ baseUrl: "https://events.test" });
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const schemas = doc.components.schemas as Record<string, Json>;
const listOp = doc.paths["/v1/events"].get;
const handoffOp = doc.paths["/v1/ticket-handoffs"].post;
const param = (name: string) => (listOp.parameters as Json[]).find((p) => p.name === name)!;
const codesOf = (schemaRef: Json) =>
  schemas[schemaRef.$ref.split("/").pop()].properties.error.properties.code.enum as string[];

describe("OpenAPI document", () => {
  it("is OpenAPI 3.1 at the documented version, with a bearer scheme and a public document", () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.version).toBe(SPEC_VERSION);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
    expect(listOp.security).toEqual([{ bearerAuth: [] }]);
    expect(handoffOp.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.paths["/v1/openapi.json"].get.security).toEqual([]);
    expect(doc.servers[0].url).toBe("https://events.test");
  });

  it("lists every list error code under its status, and nothing else", () => {
    const published = new Map<string, number>();
    for (const [status, r] of Object.entries(listOp.responses)) {
      if (status === "200") continue;
      for (const code of codesOf(r.content!["application/json"].schema as Json)) published.set(code, Number(status));
    }
    const expected = Object.entries(LIST_ERRORS).filter(([c]) => !UNROUTED_ERRORS.includes(c as never));
    expect(Object.fromEntries(published)).toEqual(Object.fromEntries(expected));
  });

  it("lists every handoff error code under its status, invalid_request also as 413 and 431", () => {
    const published: Record<string, string[]> = {};
    for (const [status, r] of Object.entries(handoffOp.responses)) {
      if (status === "201") continue;
      published[status] = codesOf(r.content!["application/json"].schema as Json);
    }
    for (const [code, status] of Object.entries(HANDOFF_ERRORS)) expect(published[status]).toContain(code);
    expect(published["413"]).toEqual(["invalid_request"]);
    expect(published["431"]).toEqual(["invalid_request"]);
    expect(schemas.HandoffError409.required).toContain("event_url");
  });

  it("lists every code the server can send, under its status, in the document and in docs/api.md", () => {
    const api = readFileSync(join(ROOT, "docs", "api.md"), "utf8");
    // Every (status, code) an operation of the document answers.
    const published = new Set<string>();
    for (const item of Object.values(doc.paths)) {
      for (const op of Object.values(item)) {
        for (const [status, r] of Object.entries(op.responses)) {
          const schema = r.content?.["application/json"]?.schema as Json | undefined;
          const target = schema?.$ref ? schemas[schema.$ref.split("/").pop()] : undefined;
          for (const code of target?.properties?.error?.properties?.code?.enum ?? [])
            published.add(`${status} ${code}`);
        }
      }
    }
    const sent: Array<[string, number]> = [
      ...Object.entries(LIST_ERRORS),
      ...Object.entries(HANDOFF_ERRORS),
      ["invalid_request", 413],
      ["invalid_request", 431],
      ...Object.entries(PORTAL_ERRORS),
    ];
    for (const [code, status] of sent) {
      expect(published, `${status} ${code} in /v1/openapi.json`).toContain(`${status} ${code}`);
      // A table row (`| \`code\` | status |`) or prose naming both (`status \`code\``).
      const row = new RegExp(`\\| \`${code}\` \\| ${status} \\||\\b${status} \`${code}\``);
      expect(api, `${status} ${code} in docs/api.md`).toMatch(row);
    }
  });

  it("describes every list parameter from the route's own schemas", () => {
    expect((listOp.parameters as Json[]).map((p) => p.name)).toEqual(LIST_PARAMETERS.map((p) => p.name));
    expect(param("limit").schema).toEqual({
      type: "integer",
      minimum: LIST.minLimit,
      maximum: LIST.maxLimit,
      default: LIST.defaultLimit,
    });
    expect(param("radius_miles").schema).toMatchObject({
      type: "number",
      exclusiveMinimum: 0,
      maximum: LIST.maxRadiusMiles,
    });
    expect(param("lat").schema).toMatchObject({ type: "number", minimum: -90, maximum: 90 });
    expect(param("lng").schema).toMatchObject({ type: "number", minimum: -180, maximum: 180 });
    expect(param("state").schema).toEqual({ type: "string", pattern: WIRE_PATTERNS.state });
    for (const code of US_STATES) expect(param("state").description).toContain(code);
    const sourceValue = { type: "string", pattern: WIRE_PATTERNS.source };
    expect(param("source")).toMatchObject({
      style: "form",
      explode: true,
      schema: { anyOf: [sourceValue, { type: "array", items: sourceValue }] },
    });
    for (const name of ["exclude_aggregators", "exclude_sold_out", "include_centroids"]) {
      expect(param(name).schema).toEqual({ type: "boolean", default: false });
    }
    expect(param("starts_after").schema.type).toBe("string");
    for (const p of listOp.parameters as Json[]) expect(p.description.length, p.name).toBeGreaterThan(20);
  });

  it("publishes for `state` and `source` exactly the raw values the route accepts", () => {
    // Values near the rules: letters of both cases, spaces of several kinds, commas, token characters.
    const piece = fc.constantFrom(
      ..."nNyYcCaAzZ1_:.-,, \t\u00a0\u2003ıſé",
      "ny",
      "CA",
      "dc",
      "ticketmaster",
      "scraper:x",
    );
    const raw = fc.array(piece, { maxLength: 8 }).map((parts) => parts.join(""));
    const accepted = (query: URLSearchParams) => {
      try {
        parseListParams(query, "secret");
        return true;
      } catch {
        return false;
      }
    };
    const published = (name: "state" | "source", value: string) => new RegExp(WIRE_PATTERNS[name], "u").test(value);
    fc.assert(
      fc.property(raw, (value) => {
        expect(published("state", value), JSON.stringify(value)).toBe(accepted(new URLSearchParams({ state: value })));
      }),
      { numRuns: 3000 },
    );
    fc.assert(
      fc.property(fc.array(raw, { minLength: 1, maxLength: 3 }), (values) => {
        const query = new URLSearchParams(values.map((v) => ["source", v]));
        expect(
          values.every((v) => published("source", v)),
          JSON.stringify(values),
        ).toBe(accepted(query));
      }),
      { numRuns: 3000 },
    );
    for (const value of ["ny", "Ca", "  ", "", " nY "]) expect(published("state", value), value).toBe(true);
    for (const value of ["ticketmaster,axs", ",,", "", " axs , scraper:x_y ,"])
      expect(published("source", value), value).toBe(true);
    expect(published("source", `${"a".repeat(LIST.maxSourceLength + 1)}`)).toBe(false);
    expect(published("state", "XX")).toBe(false);
  });

  it("describes the resources with the documented fields, taxonomies and handoff bounds", () => {
    expect(Object.keys(schemas.Event.properties)).toEqual([
      "id",
      "title",
      "slug",
      "eventUrl",
      "startDate",
      "endDate",
      "cost",
      "isFree",
      "isSoldOut",
      "isLowTickets",
      "age",
      "ticketUrl",
      "website",
      "ticketLinkStatus",
      "imageUrl",
      "categories",
      "venue",
    ]);
    expect(schemas.Event.required).toHaveLength(17);
    expect(schemas.Event.properties.categories.items.enum).toEqual([...CATEGORIES]);
    expect(schemas.Venue.properties.geocodePrecision.anyOf[0].enum).toEqual([...GEOCODE_PRECISIONS]);
    expect(schemas.Page.properties.data.items).toEqual({ $ref: "#/components/schemas/Event" });
    expect(schemas.TicketHandoffRequest).toMatchObject({
      required: ["event_id"],
      additionalProperties: false,
      properties: { event_id: { type: "integer", minimum: 1, maximum: HANDOFF.maxEventId } },
    });
    expect(Object.keys(schemas.TicketHandoff.properties)).toEqual([
      "handoff_id",
      "event_id",
      "event_url",
      "handoff_url",
      "expires_at",
      "booking_mode",
      "requires_user_action",
    ]);
  });

  it("declares every documented response header where it applies", () => {
    const headersOf = (status: string) => Object.keys(listOp.responses[status].headers ?? {});
    expect(headersOf("200")).toEqual(
      expect.arrayContaining([
        "x-request-id",
        "Cache-Control",
        "X-RateLimit-Limit",
        "X-RateLimit-Remaining",
        "X-RateLimit-Reset",
        "X-RowBudget-Limit",
        "X-RowBudget-Remaining",
        "X-DataApi-Access",
        "X-Trial-RowBudget-Limit",
        "X-Trial-RowBudget-Remaining",
        "X-Trial-Expires-At",
      ]),
    );
    expect(listOp.responses[401].headers!["WWW-Authenticate"].required).toBe(true);
    for (const status of ["429", "503"]) expect(listOp.responses[status].headers!["Retry-After"].required).toBe(true);
    for (const status of ["429", "503"])
      expect(handoffOp.responses[status].headers!["Retry-After"].required).toBe(true);
    for (const op of [listOp, handoffOp]) {
      for (const r of Object.values(op.responses)) expect(r.headers!["x-request-id"].required).toBe(true);
    }
  });

  it("is the same document on every build", () => {
    expect(JSON.stringify(buildOpenApiDocument({ baseUrl: "https://events.test" }))).toBe(JSON.stringify(doc));
  });

  it("passes `redocly lint` with no errors", () => {
    const dir = mkdtempSync(join(tmpdir(), "marquee-openapi-"));
    try {
      const file = join(dir, "openapi.json");
      writeFileSync(file, JSON.stringify(doc, null, 2));
      const out = lintOpenApi(file);
      expect(
        out.totals.errors,
        JSON.stringify(
          out.problems.filter((p) => p.severity === "error"),
          null,
          2,
        ),
      ).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

/**
 * Runs Redocly's CLI: the project's own when installed (devDependency `@redocly/cli`), else the
 * published v2 through npx, which fetches it from the npm registry once and caches it.
 */
function lintOpenApi(file: string): {
  totals: { errors: number; warnings: number };
  problems: Array<{ severity: string }>;
} {
  const local = join(ROOT, "node_modules", ".bin", "redocly");
  const [cmd, args] = existsSync(local) ? [local, []] : ["npx", ["--yes", "@redocly/cli@2"]];
  const env = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" };
  let stdout: string;
  try {
    stdout = execFileSync(cmd, [...args, "lint", "--format=json", file], {
      cwd: ROOT,
      env,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (err) {
    // Exit code 1 means problems were found; the JSON report is still on stdout.
    stdout = (err as { stdout?: string }).stdout ?? "";
    if (!stdout.trim().startsWith("{")) throw err;
  }
  return JSON.parse(stdout);
}

describe("response validator", () => {
  const validator = new ContractValidator(JSON.parse(JSON.stringify(doc)) as OpenApiDocument);
  const reply = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
  const errorBody = (code: string) => ({ error: { code, message: "m", requestId: "r" } });

  it("accepts a conforming error and rejects a wrong code, a missing header and an undeclared one", async () => {
    const ok = await validator.check(
      "GET",
      "/v1/events",
      reply(400, errorBody("invalid_limit"), { "x-request-id": "r", "x-ratelimit-limit": "60" }),
    );
    expect(ok.problems).toEqual([]);
    const wrongCode = await validator.check(
      "GET",
      "/v1/events",
      reply(400, errorBody("rate_limited"), { "x-request-id": "r", "x-ratelimit-limit": "60" }),
    );
    expect(wrongCode.problems.join()).toMatch(/body/);
    const noHeader = await validator.check(
      "GET",
      "/v1/events",
      reply(401, errorBody("invalid_api_key"), { "x-request-id": "r", "x-ratelimit-limit": "60" }),
    );
    expect(noHeader.problems).toEqual(["required header www-authenticate is missing"]);
    const extra = await validator.check(
      "GET",
      "/v1/events",
      reply(400, errorBody("invalid_limit"), { "x-request-id": "r", "x-ratelimit-limit": "60", "retry-after": "1" }),
    );
    expect(extra.problems).toEqual(["header retry-after is not declared for 400"]);
    const badHeader = await validator.check(
      "GET",
      "/v1/events",
      reply(400, errorBody("invalid_limit"), { "x-request-id": "r", "x-ratelimit-limit": "sixty" }),
    );
    expect(badHeader.problems.join()).toMatch(/x-ratelimit-limit/);
  });

  it("rejects an undocumented status and an event with a missing or extra field", async () => {
    expect((await validator.check("GET", "/v1/events", reply(418, {}))).problems[0]).toMatch(/not documented/);
    const event = {
      id: 1,
      title: "t",
      slug: "t",
      eventUrl: "https://events.test/events/1/t",
      startDate: "2030-01-01T20:00:00.000Z",
      endDate: null,
      cost: null,
      isFree: null,
      isSoldOut: false,
      isLowTickets: false,
      age: null,
      ticketUrl: null,
      website: null,
      ticketLinkStatus: "missing",
      imageUrl: null,
      categories: ["Music"],
      venue: {
        id: 2,
        name: "v",
        city: "c",
        state: "CA",
        timezone: null,
        latitude: null,
        longitude: null,
        geocodePrecision: null,
        distanceMiles: null,
      },
    };
    const headers = { "x-request-id": "r", "x-ratelimit-limit": "60", "cache-control": "private, no-store" };
    const page = (e: unknown) =>
      reply(200, { data: [e], page: { nextCursor: null, hasMore: false, count: 1 } }, headers);
    expect((await validator.check("GET", "/v1/events", page(event))).problems).toEqual([]);
    const { age: _age, ...missing } = event;
    expect((await validator.check("GET", "/v1/events", page(missing))).problems.join()).toMatch(/age/);
    expect((await validator.check("GET", "/v1/events", page({ ...event, extra: 1 }))).problems.join()).toMatch(
      /additional/,
    );
    expect(
      (await validator.check("GET", "/v1/events", page({ ...event, categories: ["Opera"] }))).problems.join(),
    ).toMatch(/allowed values/);
  });
});

describe("GET /docs", () => {
  let target: Target;
  let html: string;
  let res: Response;
  beforeAll(async () => {
    target = await startInProcess();
    res = await target.fetch("/docs");
    html = await res.text();
  });
  afterAll(() => target.close());

  it("is a self-contained HTML page: no scripts, no external assets", () => {
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(html).toMatch(/^<!doctype html>\s*<html lang="en">/);
    expect(html).not.toMatch(/<script|<link\b|<img\b|<iframe|@import|url\(/i);
    expect(html).not.toMatch(/\s(?:src|href)="(?:https?:)?\/\//);
  });

  it("has stable ids for every operation, parameter, response and schema", () => {
    const live = buildOpenApiDocument({ baseUrl: target.baseUrl });
    for (const item of Object.values(live.paths)) {
      for (const op of Object.values(item)) {
        expect(html).toContain(`id="op-${op.operationId}"`);
        for (const status of Object.keys(op.responses)) expect(html).toContain(`id="op-${op.operationId}-${status}"`);
      }
    }
    for (const p of LIST_PARAMETERS) expect(html).toContain(`id="op-listEvents-param-${p.name}"`);
    for (const name of Object.keys(live.components.schemas)) expect(html).toContain(`id="schema-${name}"`);
    expect(html).toContain(`<span id="version">${SPEC_VERSION}</span>`);
    for (const code of Object.keys(LIST_ERRORS).filter((c) => !UNROUTED_ERRORS.includes(c as never)))
      expect(html).toContain(`<code>${code}</code>`);
  });

  it("uses one h1 and labelled landmarks", () => {
    expect(html.match(/<h1\b/g)).toHaveLength(1);
    expect(html).toMatch(/<nav [^>]*aria-label="Contents"/);
    expect(html).toMatch(/<main id="main"/);
    expect(html).toContain('<a class="skip" href="#main">');
  });
});
