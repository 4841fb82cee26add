/**
 * The JSON Schemas of the REST resources (Fastify serialization, OpenAPI 3.1), derived from the zod
 * shapes of resources.ts with zod's own converter. The output is shaped as Fastify's serializer reads it
 * best: a named resource is referred to by `Name#` (registered with `addSchema`), `T | null` is
 * `type: [T, "null"]` (no anyOf to try at each value), and no `additionalProperties: false`, no
 * `$schema` and no safe-integer bounds, which zod adds and the answers never needed.
 */
import * as z from "zod";
import { namedAdminShapes } from "./admin.ts";
import { namedResources } from "./resources.ts";

type JsonSchema = Record<string, unknown>;

const names = new Map<object, string>(
  Object.entries({ ...namedResources, ...namedAdminShapes }).map(([name, schema]) => [schema, name]),
);

/** Resources whose JSON Schema lists no `required`: the serializer writes required properties first. */
const WITHOUT_REQUIRED = new Set(["GateFinding"]);

function tidy(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tidy);
  if (typeof node !== "object" || node === null) return node;
  const schema: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) schema[key] = tidy(value);
  delete schema.$schema;
  if (schema.additionalProperties === false) delete schema.additionalProperties;
  if (schema.minimum === Number.MIN_SAFE_INTEGER) delete schema.minimum;
  if (schema.maximum === Number.MAX_SAFE_INTEGER) delete schema.maximum;
  // z.record(z.string(), z.unknown()): any object.
  const names = schema.propertyNames as JsonSchema | undefined;
  if (names?.type === "string" && Object.keys(names).length === 1 && isEmpty(schema.additionalProperties)) {
    delete schema.propertyNames;
    schema.additionalProperties = true;
  }
  // [T, null] where T is a bare primitive type: one type list.
  const anyOf = schema.anyOf as JsonSchema[] | undefined;
  if (anyOf?.length === 2) {
    const [value, nothing] = anyOf;
    const bare = value && Object.keys(value).every((key) => key === "type");
    if (bare && typeof value.type === "string" && value.type !== "object" && nothing?.type === "null") {
      delete schema.anyOf;
      return { type: [value.type, "null"], ...schema };
    }
  }
  return schema;
}

const isEmpty = (value: unknown) =>
  typeof value === "object" && value !== null && Object.keys(value).length === 0;

/** The JSON Schema of one resource; named resources inside it become `Name#` references. */
export function resourceJsonSchema(schema: z.ZodType, name?: string): JsonSchema {
  const json = z.toJSONSchema(schema, {
    io: "output",
    reused: "inline",
    override(ctx) {
      const zodSchema: object = ctx.zodSchema;
      const ref = names.get(zodSchema);
      if (ref === undefined || zodSchema === schema) return;
      for (const key of Object.keys(ctx.jsonSchema)) delete (ctx.jsonSchema as JsonSchema)[key];
      (ctx.jsonSchema as JsonSchema).$ref = `${ref}#`;
    },
  });
  const tidied = tidy(json) as JsonSchema;
  if (name === undefined) return tidied;
  if (WITHOUT_REQUIRED.has(name)) delete tidied.required;
  return { $id: name, ...tidied };
}

/** Every named resource's JSON Schema, with its `$id`, for Fastify's `addSchema`. */
export const resourceJsonSchemas: JsonSchema[] = Object.entries(namedResources).map(([name, schema]) =>
  resourceJsonSchema(schema, name),
);

/** The JSON Schema of a named administration shape (admin.ts), with its `$id`, for Fastify's `addSchema`. */
export const adminJsonSchema = (name: keyof typeof namedAdminShapes): JsonSchema =>
  resourceJsonSchema(namedAdminShapes[name], name);
