/**
 * Checks real responses against the published OpenAPI document (JSON Schema 2020-12 via ajv,
 * which the MCP SDK already brings): the status is documented for the operation, the media
 * type matches, every required header is present, every present header of the documented
 * family is declared for that status and matches its schema, and the body validates.
 */

import type { ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { OpenApiDocument, ResponseObject } from "../server/openapi.ts";
import { DOCUMENTED_HEADER_FAMILY } from "../server/openapi-headers.ts";

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const DOC_ID = "urn:marquee:openapi";

export interface Checked {
  status: number;
  body: unknown;
  /** The problems found; empty when the response conforms. */
  problems: string[];
}

const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1")).join("/");

export class ContractValidator {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(readonly doc: OpenApiDocument) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(this.ajv);
    this.ajv.addSchema({ ...doc, $id: DOC_ID });
  }

  private validator(ref: string): ValidateFunction {
    let fn = this.compiled.get(ref);
    if (!fn) {
      fn = this.ajv.compile({ $ref: `${DOC_ID}#/${ref}` });
      this.compiled.set(ref, fn);
    }
    return fn;
  }

  /** The documented response for a status, honouring `4XX`-style ranges. */
  responseFor(path: string, method: string, status: number): { key: string; response: ResponseObject } | null {
    const responses = this.doc.paths[path]?.[method.toLowerCase()]?.responses;
    if (!responses) return null;
    for (const key of [String(status), `${String(status)[0]}XX`, "default"]) {
      if (responses[key]) return { key, response: responses[key] };
    }
    return null;
  }

  /** Validates one response for `method path` (path as templated in the document). */
  async check(method: string, path: string, res: Response): Promise<Checked> {
    const problems: string[] = [];
    const text = await res.text();
    const found = this.responseFor(path, method, res.status);
    if (!found)
      return {
        status: res.status,
        body: text,
        problems: [`status ${res.status} is not documented for ${method} ${path}`],
      };
    const { key, response } = found;

    const declared = new Map(Object.entries(response.headers ?? {}).map(([name, h]) => [name.toLowerCase(), h]));
    for (const [name, h] of declared) {
      const value = res.headers.get(name);
      if (value === null) {
        if (h.required) problems.push(`required header ${name} is missing`);
        continue;
      }
      const typed = h.schema.type === "integer" ? (/^-?\d+$/.test(value) ? Number(value) : value) : value;
      const ok = this.ajv.validate(h.schema, typed);
      if (!ok) problems.push(`header ${name}: ${JSON.stringify(value)} ${this.ajv.errorsText(this.ajv.errors)}`);
    }
    for (const name of DOCUMENTED_HEADER_FAMILY) {
      if (res.headers.has(name) && !declared.has(name)) problems.push(`header ${name} is not declared for ${key}`);
    }

    const mediaTypes = Object.keys(response.content ?? {});
    let body: unknown = text;
    if (mediaTypes.length === 0) {
      if (text.length > 0) problems.push(`no body is documented for ${key}, got ${text.length} bytes`);
      return { status: res.status, body, problems };
    }
    const contentType = (res.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
    const mediaType = mediaTypes.find((m) => m === contentType);
    if (!mediaType) {
      problems.push(`content-type ${contentType || "(none)"} is not one of ${mediaTypes.join(", ")}`);
      return { status: res.status, body, problems };
    }
    if (mediaType === "application/json") {
      try {
        body = JSON.parse(text);
      } catch {
        problems.push("body is not JSON");
        return { status: res.status, body, problems };
      }
    }
    const validate = this.validator(
      pointer("paths", path, method.toLowerCase(), "responses", key, "content", mediaType, "schema"),
    );
    if (!validate(body)) problems.push(`body: ${this.ajv.errorsText(validate.errors, { separator: "; " })}`);
    return { status: res.status, body, problems };
  }
}
