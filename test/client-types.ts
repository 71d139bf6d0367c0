/**
 * Generates TypeScript types for a client of the API from the OpenAPI document, with
 * openapi-typescript, into test/generated/marquee-api.d.ts (committed, so `tsc` checks the
 * client test against it). test/client.test.ts regenerates in memory and fails when the
 * committed file is stale. Regenerate with: `bun test/client-types.ts`.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import openapiTS, { astToString, type OpenAPI3 } from "openapi-typescript";
import { buildOpenApiDocument } from "../server/openapi.ts";

export const GENERATED_TYPES_PATH = join(import.meta.dirname, "generated", "marquee-api.d.ts");

export async function generateClientTypes(): Promise<string> {
  const doc = buildOpenApiDocument({ baseUrl: "http://localhost:8080" });
  const ast = await openapiTS(JSON.parse(JSON.stringify(doc)) as OpenAPI3, { silent: true });
  return `/**\n * Generated from the Marquee OpenAPI document by openapi-typescript. Do not edit:\n * run \`bun test/client-types.ts\`.\n */\n\n${astToString(ast)}`;
}

if (import.meta.main) {
  writeFileSync(GENERATED_TYPES_PATH, await generateClientTypes());
  console.log(`wrote ${GENERATED_TYPES_PATH}`);
}
