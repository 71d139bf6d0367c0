/**
 * Checks requests against the published OpenAPI document with openapi-backend, a maintained
 * validator nobody here wrote: the path, the query parameters (converted as the document's types
 * say), the headers and the JSON body. The harness (test/harness.ts) asks it about every request
 * the server accepted (2xx) on a documented operation, so a document that refuses what the server
 * takes fails the suite that sent it. The document's own validity is Spectral's to judge
 * (test/openapi-lint.test.ts): openapi-backend checks documents against OpenAPI 3.0's schema only,
 * so it is told to skip that step (`quick`).
 */
import { OpenAPIBackend } from "openapi-backend";
import type { OpenApiDocument } from "../server/openapi.ts";

export interface SentRequest {
  method: string;
  /** The path and query string as sent. */
  url: string;
  headers: Record<string, string>;
  /** The body as sent: JSON bodies are checked, others only for being present. */
  body?: string;
}

export class RequestValidator {
  private constructor(private readonly api: OpenAPIBackend) {}

  static async create(doc: OpenApiDocument): Promise<RequestValidator> {
    const api = new OpenAPIBackend({
      // A copy: openapi-backend dereferences the document in place.
      definition: structuredClone(doc) as never,
      quick: true,
      strict: true,
      coerceTypes: true,
    });
    await api.init();
    return new RequestValidator(api);
  }

  /** Whether the document describes this method and path. */
  documents(method: string, path: string): boolean {
    return this.api.router.matchOperation({ method, path, headers: {} }) !== undefined;
  }

  private operation(method: string, path: string) {
    return this.api.router.matchOperation({ method, path, headers: {} }) as
      | (ReturnType<OpenAPIBackend["router"]["matchOperation"]> & {
          requestBody?: { content?: Record<string, unknown> };
        })
      | undefined;
  }

  /**
   * The query string with only the parameters the operation documents. The API ignores unknown
   * parameters (docs/api.md, Listing events), which OpenAPI cannot say and openapi-backend refuses.
   */
  private documentedQuery(method: string, path: string, search: URLSearchParams): string {
    const operation = this.operation(method, path);
    const names = new Set(
      (operation?.parameters ?? []).flatMap((p) => ("in" in p && p.in === "query" ? [p.name] : [])),
    );
    return new URLSearchParams([...search].filter(([name]) => names.has(name))).toString();
  }

  /** The problems the document finds with the request; empty when it conforms. */
  check(request: SentRequest): string[] {
    const url = new URL(request.url, "http://validator.invalid");
    const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k.toLowerCase(), v]));
    let body: unknown = request.body;
    if (typeof request.body === "string" && /json/i.test(headers["content-type"] ?? "")) {
      try {
        body = JSON.parse(request.body);
      } catch {
        return ["the body is not JSON"];
      }
    }
    // openapi-backend checks one body schema (JSON's); that the media type is declared at all is checked here.
    const declared = Object.keys(this.operation(request.method, url.pathname)?.requestBody?.content ?? {});
    const mediaType = (headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
    if (request.body !== undefined && !declared.includes(mediaType)) {
      return [
        `a ${mediaType || "body without Content-Type"} is not among the declared ${declared.join(", ") || "(none)"}`,
      ];
    }
    const result = this.api.validateRequest({
      method: request.method,
      path: url.pathname,
      // openapi-backend parses the query string, repeated names becoming arrays.
      query: this.documentedQuery(request.method, url.pathname, url.searchParams),
      headers,
      body,
    });
    return result.valid ? [] : (result.errors ?? []).map((e) => `${e.instancePath || "request"} ${e.message}`);
  }
}
