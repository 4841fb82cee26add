/**
 * Request bodies declared once: each field's JSON Schema (for the route's `schema.body`, so OpenAPI) and
 * the rule that checks and reads it, side by side. The route's body schema carries its check
 * (BODY_CHECK), which validation.ts runs before the handler, so a handler receives the checked, typed
 * body and judges only what needs the store or the identity provider.
 *
 * Why rules and not Ajv: every refusal keeps naming the field and the rule as the API always has, in
 * the route's own words (the administration routes answer `rule` and `field`, the gate rule update a
 * sentence), and those sentences are what users and scripts match on.
 */

/** The check a declared body schema carries (not part of the OpenAPI document: a symbol key). */
export const BODY_CHECK: unique symbol = Symbol("body check");

/** One field: its JSON Schema and its rule (raw JSON value, undefined when absent → value, or throws). */
export interface BodyField<T> {
  readonly schema: Readonly<Record<string, unknown>>;
  readonly rule: (raw: unknown, name: string) => T;
}

export function bodyField<T>(
  schema: Readonly<Record<string, unknown>>,
  rule: (raw: unknown, name: string) => T,
): BodyField<T> {
  return { schema, rule };
}

/** How a route refuses what is not a field's fault, in its own words (each returns the error thrown). */
export interface BodyRefusals {
  /** An absent body (or JSON null): read as `{}` ("empty"), or refused as not an object ("refused"). */
  readonly absent: "empty" | "refused";
  readonly notObject: () => Error;
  readonly unknown: (key: string, known: readonly string[]) => Error;
  /** The body sets none of the fields (the schema then says `minProperties: 1`); unset: allowed. */
  readonly nothingSet?: () => Error;
}

/** The checked body: each field's value, absent when its rule read nothing. */
type FieldValues<F> = { [K in keyof F]: F[K] extends BodyField<infer T> ? T : never };

type DeclaredBody<T> = Readonly<Record<string, unknown>> & {
  readonly [BODY_CHECK]: (body: unknown) => T;
};

/** What a route's handler receives as `request.body` for a declared body (the route's Body type). */
export type BodyOf<D> = D extends DeclaredBody<infer T> ? T : never;

/**
 * A route's body, declared once. The fields are checked in their declared order, after the body is
 * found to be an object without unknown properties; the first refusal is the answer. `schema` adds the
 * keywords only OpenAPI states (required, anyOf, if/then/else): the rules already enforce them.
 */
export function declareBody<F extends Record<string, BodyField<unknown>>>(
  fields: F,
  refusals: BodyRefusals,
  schema: { description?: string; keywords?: Readonly<Record<string, unknown>> } = {},
): DeclaredBody<FieldValues<F>> {
  const known = Object.keys(fields);
  const check = (body: unknown): FieldValues<F> => {
    const given = body === undefined || body === null ? (refusals.absent === "empty" ? {} : body) : body;
    if (typeof given !== "object" || given === null || Array.isArray(given)) throw refusals.notObject();
    for (const key of Object.keys(given)) if (!known.includes(key)) throw refusals.unknown(key, known);
    const checked: Record<string, unknown> = {};
    for (const [name, field] of Object.entries(fields)) {
      const value = field.rule((given as Record<string, unknown>)[name], name);
      if (value !== undefined) checked[name] = value;
    }
    if (refusals.nothingSet && Object.keys(checked).length === 0) throw refusals.nothingSet();
    return checked as FieldValues<F>;
  };
  return {
    type: "object",
    ...(schema.description ? { description: schema.description } : {}),
    properties: Object.fromEntries(Object.entries(fields).map(([name, field]) => [name, field.schema])),
    ...schema.keywords,
    additionalProperties: false,
    ...(refusals.nothingSet ? { minProperties: 1 } : {}),
    [BODY_CHECK]: check,
  };
}

/** The check a route's declared body schema carries; undefined for a body not declared here. */
export function bodyCheckOf(schema: unknown): ((body: unknown) => unknown) | undefined {
  if (typeof schema !== "object" || schema === null) return undefined;
  return (schema as Partial<DeclaredBody<unknown>>)[BODY_CHECK];
}
