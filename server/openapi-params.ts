/**
 * The query parameters of `GET /v1/events` for the OpenAPI document and the MCP `search_events`
 * tool, read from the valibot schemas the route validates with.
 *
 * Query values arrive as strings, and the route's schemas say so: `string → trim → regex →
 * transform(Number) → minValue …`. @valibot/to-json-schema stops at the first transform, which
 * would publish `limit` as a bare string. So this module walks the same pipes itself and
 * publishes the value after conversion: a number when numeric checks follow the conversion,
 * a boolean for the exact `true`/`false` picklist (docs/api.md, Listing events), and every bound, pattern,
 * enum, default and description as the schema states it.
 */
import type * as v from "valibot";
import { LIST_PARAMETERS, type ListParameter } from "./params.ts";

/** A JSON Schema object as published (OpenAPI 3.1 uses JSON Schema 2020-12). */
export type JsonSchema = Record<string, unknown>;

type AnySchema = v.GenericSchema & { pipe?: readonly PipeItem[] };
type PipeItem = {
  kind: string;
  type: string;
  requirement?: unknown;
  options?: unknown;
  description?: string;
  metadata?: unknown;
};

/** One published query parameter. */
export interface QueryParameter {
  name: string;
  in: "query";
  required: false;
  description: string;
  schema: JsonSchema;
  style?: "form";
  explode?: boolean;
}

/** A schema as the flat sequence of what it does to a value: nested pipes and wrappers unrolled. */
function flatten(node: AnySchema | PipeItem): PipeItem[] {
  const n = node as AnySchema & PipeItem & { wrapped?: AnySchema; default?: unknown };
  if (n.kind !== "schema") return [n];
  if (n.pipe) return [...flatten(n.pipe[0] as PipeItem), ...n.pipe.slice(1).flatMap((p) => flatten(p))];
  if (n.wrapped) {
    const hasDefault = n.default !== undefined && typeof n.default !== "function";
    return [
      ...(hasDefault ? [{ kind: "default", type: "default", requirement: n.default }] : []),
      ...flatten(n.wrapped),
    ];
  }
  return [n];
}

/** The JSON Schema of a query parameter's value after the route's conversion. */
export function describeQueryValue(schema: v.GenericSchema): JsonSchema {
  const out: Record<string, unknown> = {};
  let converted = false;
  let numeric = false;
  for (const item of flatten(schema as AnySchema)) {
    const req = item.requirement;
    if (item.kind === "default") out.default = req;
    else if (item.kind === "schema") {
      if (item.type === "picklist") out.enum = [...(item.options as unknown[])];
      if (item.type === "string" || item.type === "picklist") out.type ??= "string";
      if (item.type === "number") out.type = "number";
      if (item.type === "boolean") out.type = "boolean";
    } else if (item.kind === "transformation") {
      if (item.type === "transform") converted = true;
    } else if (item.kind === "metadata") {
      if (item.type === "description") out.description = item.description;
      if (item.type === "metadata")
        Object.assign(out, (item.metadata as { openapi?: object } | undefined)?.openapi ?? {});
    } else if (item.kind === "validation") {
      switch (item.type) {
        case "min_value":
          numeric = true;
          out.minimum = req;
          break;
        case "max_value":
          numeric = true;
          out.maximum = req;
          break;
        case "gt_value":
          numeric = true;
          out.exclusiveMinimum = req;
          break;
        case "lt_value":
          numeric = true;
          out.exclusiveMaximum = req;
          break;
        case "finite":
          numeric = true;
          break;
        case "integer":
        case "safe_integer":
          numeric = true;
          out.type = "integer";
          break;
        // Raw-string rules describe the value only until it is converted.
        case "regex":
          if (!converted) out.pattern = (req as RegExp).source;
          break;
        case "max_length":
          if (!converted) out.maxLength = req;
          break;
        case "min_length":
          if (!converted) out.minLength = req;
          break;
      }
    }
  }
  if (numeric && out.type !== "integer") out.type = "number";
  // docs/api.md, Listing events: booleans are exactly `true` or `false`; publish them as booleans.
  if (Array.isArray(out.enum) && out.enum.length === 2 && out.enum.includes("true") && out.enum.includes("false")) {
    delete out.enum;
    out.type = "boolean";
  }
  if (out.type !== "string") {
    delete out.pattern;
    delete out.maxLength;
    delete out.minLength;
  }
  return out;
}

/** An OpenAPI parameter object from a parameter's source. */
export function toQueryParameter(source: ListParameter): QueryParameter {
  const described = describeQueryValue(source.schema);
  const description = source.description || String(described.description ?? "");
  // A raw value as sent, when the route takes more than the schema checks (server/params.ts WIRE_PATTERNS).
  const value = source.wirePattern ? { type: "string", pattern: source.wirePattern } : described;
  delete value.description;
  if (source.default !== undefined) value.default = source.default;
  if (source.repeatable) {
    // Sent once (a comma-separated list, say) or repeated: a typed client may pass either.
    return {
      name: source.name,
      in: "query",
      required: false,
      description,
      schema: { anyOf: [value, { type: "array", items: value }] },
      style: "form",
      explode: true,
    };
  }
  return { name: source.name, in: "query", required: false, description, schema: value };
}

/** The OpenAPI parameter objects of GET /v1/events, from the route's own parameter list. */
export function listParameters(): QueryParameter[] {
  return LIST_PARAMETERS.map(toQueryParameter);
}
