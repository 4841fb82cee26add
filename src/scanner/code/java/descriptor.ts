/**
 * JVM names and descriptors as people read them: internal names (`org/apache/Foo$Bar`) become binary
 * names (`org.apache.Foo$Bar`), and a method descriptor becomes the `mangling` the insights API shows,
 * `getContext(boolean) return org.apache.logging.log4j.core.LoggerContext`.
 */

const PRIMITIVES: Readonly<Record<string, string>> = {
  B: "byte",
  C: "char",
  D: "double",
  F: "float",
  I: "int",
  J: "long",
  S: "short",
  Z: "boolean",
  V: "void",
};

/** `org/apache/Foo$Bar` → `org.apache.Foo$Bar` (nested classes keep `$`, as in the binary name). */
export const binaryName = (internalName: string): string => internalName.replaceAll("/", ".");

/** The class a Class constant designates, arrays unwrapped (`[[Lorg/Foo;` → `org/Foo`); undefined for primitive arrays. */
export function elementClass(internalNameOrArray: string): string | undefined {
  if (!internalNameOrArray.startsWith("[")) return internalNameOrArray;
  const element = internalNameOrArray.replace(/^\[+/, "");
  return element.startsWith("L") && element.endsWith(";") ? element.slice(1, -1) : undefined;
}

/** Reads one field type at `start`; returns its readable form and where the next one starts. */
function readType(descriptor: string, start: number): { type: string; end: number } {
  let dims = 0;
  let i = start;
  while (descriptor[i] === "[") {
    dims++;
    i++;
  }
  const c = descriptor[i];
  let base: string;
  if (c === "L") {
    const semi = descriptor.indexOf(";", i);
    if (semi <= i + 1) throw new DescriptorError(descriptor);
    base = binaryName(descriptor.slice(i + 1, semi));
    i = semi + 1;
  } else {
    const primitive = c === undefined ? undefined : PRIMITIVES[c];
    if (primitive === undefined) throw new DescriptorError(descriptor);
    base = primitive;
    i++;
  }
  return { type: base + "[]".repeat(dims), end: i };
}

export class DescriptorError extends Error {
  override name = "DescriptorError";
  constructor(descriptor: string) {
    super(`malformed descriptor ${JSON.stringify(descriptor.slice(0, 200))}`);
  }
}

/** `(ZLjava/lang/String;[I)V` → `{ parameters: ["boolean", "java.lang.String", "int[]"], returns: "void" }`. */
export function methodTypes(descriptor: string): { parameters: string[]; returns: string } {
  if (descriptor[0] !== "(") throw new DescriptorError(descriptor);
  const parameters: string[] = [];
  let i = 1;
  while (descriptor[i] !== ")") {
    if (i >= descriptor.length) throw new DescriptorError(descriptor);
    const { type, end } = readType(descriptor, i);
    parameters.push(type);
    i = end;
  }
  const { type: returns, end } = readType(descriptor, i + 1);
  if (end !== descriptor.length) throw new DescriptorError(descriptor);
  return { parameters, returns };
}

/** The readable signature of a method: `name(param, param) return type` (constructors: `<init>(...) return void`). */
export function methodMangling(name: string, descriptor: string): string {
  const { parameters, returns } = methodTypes(descriptor);
  return `${name}(${parameters.join(", ")}) return ${returns}`;
}
