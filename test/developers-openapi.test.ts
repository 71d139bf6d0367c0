/**
 * The developer portal in the OpenAPI document and on /docs: a `Developers` tag with the JSON
 * operations, each error code under its status from db/contract.ts, Retry-After on the 429, the
 * ceilings in the words of the document, and the session-cookie scheme. (Every portal response
 * the HTTP suites receive is also checked against this document by their client.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PORTAL, PORTAL_ERRORS } from "../db/contract.ts";
import { buildOpenApiDocument } from "../server/openapi.ts";
import { startInProcess, type Target } from "./harness.ts";

const doc = buildOpenApiDocument({ baseUrl: "https://events.test" });
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const schemas = doc.components.schemas as Record<string, Json>;
const codesOf = (response: Json) =>
  schemas[(response.content["application/json"].schema.$ref as string).split("/").pop()!].properties.error.properties
    .code.enum as string[];

const OPERATIONS = [
  ["/developers/keys", "get", "listDeveloperKeys"],
  ["/developers/keys", "post", "createDeveloperKey"],
  ["/developers/keys/{id}/revoke", "post", "revokeDeveloperKey"],
  ["/developers/sign-out", "post", "signOutDeveloper"],
] as const;

describe("the developer portal in the OpenAPI document", () => {
  it("tags the portal's operations Developers, authenticated by the session cookie", () => {
    expect(doc.tags.map((t) => t.name)).toContain("Developers");
    for (const [path, method, operationId] of OPERATIONS) {
      const op = doc.paths[path][method];
      expect(op.operationId).toBe(operationId);
      expect(op.tags).toEqual(["Developers"]);
      expect(op.security).toEqual([{ sessionCookie: [] }]);
    }
    expect(doc.components.securitySchemes.sessionCookie).toMatchObject({
      type: "apiKey",
      in: "cookie",
      name: PORTAL.sessionCookie,
    });
  });

  it("lists each portal error code under the status db/contract.ts gives it", () => {
    const published = new Map<string, number>();
    for (const [path, method] of OPERATIONS) {
      for (const [status, r] of Object.entries(doc.paths[path][method].responses)) {
        if (Number(status) < 400) continue;
        for (const code of codesOf(r as Json)) published.set(code, Number(status));
      }
    }
    expect(Object.fromEntries(published)).toEqual(PORTAL_ERRORS);
    const create = doc.paths["/developers/keys"].post.responses;
    expect(codesOf(create[409] as Json)).toEqual(["key_limit_reached"]);
    expect(codesOf(create[429] as Json)).toEqual(["key_issuance_rate_limited"]);
    expect(create[429].headers!["Retry-After"].required).toBe(true);
  });

  it("states the ceilings and lifetimes from the constants", () => {
    const create = doc.paths["/developers/keys"].post.description;
    expect(create).toContain(`default ${PORTAL.defaultKeyLimit}`);
    expect(create).toContain(`at most ${PORTAL.issuancePerWindow} keys created per account in any rolling 60 minutes`);
    expect(doc.paths["/developers/keys"].get.description).toContain("within 15 minutes");
    expect(schemas.CreateDeveloperKeyRequest.properties.label.anyOf[0].maxLength).toBe(PORTAL.maxLabelLength);
    expect(schemas.CreatedDeveloperKey.required).toEqual(["id", "kind", "label", "prefix", "key", "createdAt"]);
  });
});

describe("the developer portal on /docs", () => {
  let target: Target;
  let html: string;
  beforeAll(async () => {
    target = await startInProcess();
    html = await (await target.fetch("/docs")).text();
  });
  afterAll(() => target.close());

  it("shows each operation, its errors and the ceilings", () => {
    for (const [, , operationId] of OPERATIONS) expect(html).toContain(`id="op-${operationId}"`);
    for (const code of Object.keys(PORTAL_ERRORS)) expect(html).toContain(`<code>${code}</code>`);
    expect(html).toContain("session cookie");
    expect(html).toContain(`at most ${PORTAL.issuancePerWindow} keys created per account`);
    expect(html).toContain('id="op-revokeDeveloperKey-param-id"');
  });
});
