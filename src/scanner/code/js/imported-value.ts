/** Import specifiers as values: which package (and member path) or which of the application's modules. */
import { builtinModules } from "node:module";
import type { ImportedValue } from "./facts.ts";

const BUILTINS = new Set(builtinModules.filter((m) => !m.startsWith("_")));

/** `lodash/fp/merge.js` → lodash, [fp, merge]; `node:fs`, builtins, `#internal` → undefined. */
export function importedValueOf(specifier: string): ImportedValue | undefined {
  if (specifier.startsWith(".") || specifier.startsWith("/")) {
    return { kind: "local", specifier, path: [] };
  }
  if (specifier.startsWith("node:") || specifier.startsWith("#") || specifier === "") return undefined;
  const parts = specifier.split("/");
  const nameParts = specifier.startsWith("@") ? 2 : 1;
  if (parts.length < nameParts || parts.slice(0, nameParts).some((p) => p === "")) return undefined;
  const name = parts.slice(0, nameParts).join("/");
  if (BUILTINS.has(name) || BUILTINS.has(specifier)) return undefined;
  if (name.includes(":")) return undefined; // webpack loaders, virtual modules
  const path = parts
    .slice(nameParts)
    .map((p) => p.replace(/\.(c|m)?js$/, ""))
    .filter((p) => p !== "" && p !== "index");
  return { kind: "package", name, path };
}

export function extend(value: ImportedValue, members: readonly string[]): ImportedValue {
  let path = value.path;
  let interop = value.interop === true;
  for (const member of members) {
    if (interop && path.length === 0 && member === "default") {
      interop = false;
      continue;
    }
    interop = false;
    path = [...path, member];
  }
  return { ...value, path, interop };
}
