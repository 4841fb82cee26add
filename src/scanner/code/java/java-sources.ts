/**
 * The fallback when a Java application has no compiled classes: its sources, parsed with tree-sitter's
 * Java grammar (web-tree-sitter, the grammar's wasm build: no native module), give the dependency classes
 * each top-level type refers to through its imports (single-type, static, on-demand matched against the
 * simple type names it uses) and fully qualified names. Without type attribution a call cannot be tied
 * to a method, so these objects are classes, at precision "source, class level".
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { Language, type Node, Parser } from "web-tree-sitter";
import type { ExternalObjectInput, ReferenceInput } from "../../../store/input-records.ts";
import type { InventoryWarning } from "../../inventory.ts";
import { applicationClass, externalObject, SOURCE_CLASS_TYPE } from "./objects.ts";

let parser: Promise<Parser> | undefined;

function javaParser(): Promise<Parser> {
  parser ??= (async () => {
    await Parser.init();
    const require = createRequire(import.meta.url);
    const language = await Language.load(require.resolve("tree-sitter-java/tree-sitter-java.wasm"));
    return new Parser().setLanguage(language);
  })();
  return parser;
}

const TYPE_DECLARATIONS = new Set([
  "class_declaration",
  "interface_declaration",
  "enum_declaration",
  "record_declaration",
  "annotation_type_declaration",
]);

interface SourceUses {
  objects: ExternalObjectInput[];
  references: ReferenceInput[];
  warnings: InventoryWarning[];
  files: number;
}

export async function readJavaSources(
  root: string,
  files: readonly string[],
  owners: ReadonlyMap<string, readonly string[]>,
): Promise<SourceUses> {
  const result: SourceUses = { objects: [], references: [], warnings: [], files: 0 };
  const objects = new Map<string, ExternalObjectInput>();
  const references = new Map<string, ReferenceInput>();
  const java = await javaParser();
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(join(root, file), "utf8");
    } catch (error) {
      result.warnings.push({ file, message: `cannot be read (${(error as NodeJS.ErrnoException).code})` });
      continue;
    }
    const tree = java.parse(text);
    if (!tree) continue;
    try {
      if (tree.rootNode.hasError) {
        const error = firstError(tree.rootNode);
        result.warnings.push({
          file,
          line: (error?.startPosition.row ?? 0) + 1,
          message: "does not parse as Java: skipped",
        });
        continue;
      }
      result.files++;
      const uses = classesUsed(tree.rootNode, owners);
      if (!uses.declared) continue;
      const from = applicationClass(uses.declared);
      for (const owner of uses.classes) {
        for (const packageKey of owners.get(owner) ?? []) {
          const object = {
            ...externalObject(packageKey, { kind: "class", owner, name: "", descriptor: "" }),
            type: SOURCE_CLASS_TYPE,
          };
          objects.set(object.id, object);
          references.set(`${from.id}>${object.id}`, { from, to: object.id });
        }
      }
    } finally {
      tree.delete();
    }
  }
  result.objects = [...objects.values()].sort(
    (a, b) => a.package.localeCompare(b.package) || a.fullName.localeCompare(b.fullName),
  );
  result.references = [...references.values()].sort(
    (a, b) => a.from.fullName.localeCompare(b.from.fullName) || a.to.localeCompare(b.to),
  );
  return result;
}

function firstError(node: Node): Node | undefined {
  if (node.isError || node.isMissing) return node;
  for (const child of node.children) {
    if (child?.hasError || child?.isMissing) return firstError(child) ?? child;
  }
  return undefined;
}

/** The file's primary type (internal name) and the dependency classes (internal names) it uses. */
function classesUsed(
  root: Node,
  owners: ReadonlyMap<string, readonly string[]>,
): { declared: string | undefined; classes: Set<string> } {
  let packagePath = "";
  let declared: string | undefined;
  const classes = new Set<string>();
  const onDemand: string[] = [];
  const simpleNames = new Set<string>();
  const qualified: string[] = [];
  // the longest prefix of a dotted name that is a dependency class (nested classes tried with `$`)
  const resolve = (dotted: string): string | undefined => {
    const parts = dotted.split(".");
    for (let n = parts.length; n >= 2; n--) {
      const path = parts.slice(0, n).join("/");
      if (owners.has(path)) return path;
      for (let outer = n - 1; outer >= 2; outer--) {
        const nested = `${parts.slice(0, outer).join("/")}$${parts.slice(outer, n).join("$")}`;
        if (owners.has(nested)) return nested;
      }
    }
    return undefined;
  };
  for (const child of root.namedChildren) {
    if (!child) continue;
    if (child.type === "package_declaration") {
      const name = child.namedChildren.find(
        (c) => c?.type === "scoped_identifier" || c?.type === "identifier",
      );
      packagePath = name ? `${name.text.replaceAll(".", "/")}/` : "";
    } else if (child.type === "import_declaration") {
      const name = child.namedChildren.find(
        (c) => c?.type === "scoped_identifier" || c?.type === "identifier",
      );
      if (!name) continue;
      const wildcard = child.namedChildren.some((c) => c?.type === "asterisk");
      const isStatic = child.children.some((c) => c?.type === "static");
      if (wildcard && !isStatic) onDemand.push(name.text.replaceAll(".", "/"));
      else {
        const owner = resolve(name.text);
        if (owner) classes.add(owner);
      }
    } else if (TYPE_DECLARATIONS.has(child.type) && declared === undefined) {
      const name = child.childForFieldName("name");
      if (name) declared = `${packagePath}${name.text}`;
    }
  }
  const visit = (node: Node) => {
    if (node.type === "import_declaration" || node.type === "package_declaration") return;
    if (node.type === "type_identifier") simpleNames.add(node.text);
    else if (node.type === "scoped_type_identifier" || node.type === "scoped_identifier") {
      qualified.push(node.text.replace(/\s+/g, ""));
      return;
    } else if (node.type === "field_access" || node.type === "method_invocation") {
      const object = node.childForFieldName("object");
      if (object && /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/.test(object.text))
        qualified.push(object.text);
    } else if (node.type === "identifier") simpleNames.add(node.text);
    for (const child of node.namedChildren) if (child) visit(child);
  };
  visit(root);
  for (const dotted of qualified) {
    const owner = resolve(dotted);
    if (owner) classes.add(owner);
  }
  for (const pkg of onDemand) {
    for (const simple of simpleNames) {
      if (owners.has(`${pkg}/${simple}`)) classes.add(`${pkg}/${simple}`);
    }
  }
  return { declared, classes };
}
