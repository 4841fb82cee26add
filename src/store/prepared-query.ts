import type { Compilable, CompiledQuery, Kysely } from "kysely";

/**
 * A Kysely query built and compiled once per database and shape, then run with each call's own
 * parameters: for hot reads (an MCP tool's call, a REST GET), building the query tree and compiling it
 * cost more than the read itself. The query is built with placeholders standing for the call's arguments
 * (an array argument: one placeholder per element, so its length is part of the shape); each parameter
 * of the compiled SQL is then either one of them, bound per call, or a constant of the query.
 *
 * `build` must use its arguments only as values of the query (no `if` on them, no inlining with
 * `sql.lit`): a query whose shape depends on a value is one prepared query per shape.
 */
export type PreparedQuery<D, A extends readonly unknown[], O> = (db: Kysely<D>, ...args: A) => Promise<O[]>;

/** Stands for argument `argument` (element `element` of an array argument) while the query is built. */
class Slot {
  readonly argument: number;
  /** -1 for a scalar argument. */
  readonly element: number;
  constructor(argument: number, element: number) {
    this.argument = argument;
    this.element = element;
  }
}

interface Template {
  compiled: CompiledQuery;
  /** Per parameter of the compiled SQL: its slot, or the constant it is. */
  parameters: readonly unknown[];
}

/** Shapes kept per database: beyond it (arrays of many lengths), a query is compiled per call. */
const MAX_SHAPES = 64;

export function preparedQuery<D, A extends readonly unknown[], O>(
  build: (db: Kysely<D>, ...args: A) => Compilable<O>,
): PreparedQuery<D, A, O> {
  const templates = new WeakMap<Kysely<D>, Map<string, Template>>();
  return async (db, ...args) => {
    const shape = args.map((arg) => (Array.isArray(arg) ? `[${arg.length}]` : "")).join(",");
    let byShape = templates.get(db);
    if (!byShape) {
      byShape = new Map();
      templates.set(db, byShape);
    }
    let template = byShape.get(shape);
    if (!template) {
      template = compileTemplate(db, build, args);
      if (byShape.size < MAX_SHAPES) byShape.set(shape, template);
    }
    const parameters = template.parameters.map((value) =>
      value instanceof Slot
        ? value.element < 0
          ? args[value.argument]
          : (args[value.argument] as readonly unknown[])[value.element]
        : value,
    );
    const result = await db.executeQuery<O>({ ...template.compiled, parameters });
    return result.rows;
  };
}

function compileTemplate<D, A extends readonly unknown[], O>(
  db: Kysely<D>,
  build: (db: Kysely<D>, ...args: A) => Compilable<O>,
  args: A,
): Template {
  const slots = args.map((arg, argument) =>
    Array.isArray(arg) ? arg.map((_, element) => new Slot(argument, element)) : new Slot(argument, -1),
  ) as unknown as A;
  const compiled = build(db, ...slots).compile();
  // Every argument must reach the SQL as a bound parameter: one the builder inspected or inlined
  // (a value turned into SQL text) would be frozen into the template with the first call's value.
  const bound = new Set(compiled.parameters.filter((value) => value instanceof Slot));
  const expected = (slots as readonly unknown[]).flat().length;
  if (bound.size !== expected) {
    throw new Error(
      `preparedQuery: ${expected - bound.size} of ${expected} arguments are not bound parameters of ${compiled.sql}`,
    );
  }
  return { compiled, parameters: compiled.parameters };
}
