/**
 * Signatures of package functions from the package's own type declarations, when the package is
 * installed beside the scanned code (a CI checkout after `npm ci`): the copy Node.js would load from the
 * importing file's folder, at the version the lockfile gives, and its `types`/`typings` entry (or the
 * `.d.ts` beside its `main`). Functions exported at the top of that file — `export declare function`,
 * `export function`, `declare function f` exported by name or as `export =`, and a namespace merged with
 * it — give `name(param, ...rest)` as the demo data writes manglings. Anything else keeps `""`: packages
 * typed only by DefinitelyTyped (`@types/lodash`), overloads spread over several files, re-exports.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseSync } from "oxc-parser";
import type { AstNode } from "./ast.ts";

const parentOf = (folder: string) => (folder.includes("/") ? folder.slice(0, folder.lastIndexOf("/")) : "");

/** Signatures by member path ("" for the module itself) of the types of one installed package copy. */
type PackageSignatures = Map<string, string>;

export class SignatureReader {
  private readonly root: string;
  private readonly cache = new Map<string, PackageSignatures | null>();
  constructor(root: string) {
    this.root = root;
  }

  /** Signature of `name.member` (`member` "" for the module) as imported from `file`, or "". */
  signature(file: string, name: string, version: string, member: string): string {
    const signatures = this.forPackage(file, name, version);
    return signatures?.get(member) ?? "";
  }

  private forPackage(file: string, name: string, version: string): PackageSignatures | null {
    for (let folder = parentOf(file); ; folder = parentOf(folder)) {
      const dir = join(this.root, folder, "node_modules", name);
      const cached = this.cache.get(dir);
      if (cached !== undefined) return cached;
      if (existsSync(join(dir, "package.json"))) {
        const found = readSignatures(dir, version);
        this.cache.set(dir, found);
        return found;
      }
      if (folder === "") return null;
    }
  }
}

function readSignatures(dir: string, version: string): PackageSignatures | null {
  try {
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Record<string, unknown>;
    if (manifest.version !== version) return null;
    const declared = [manifest.types, manifest.typings].find((t): t is string => typeof t === "string");
    const main = typeof manifest.main === "string" ? manifest.main.replace(/\.[cm]?js$/, "") : "index";
    const candidates = declared ? [declared] : [`${main}.d.ts`, join(main, "index.d.ts"), "index.d.ts"];
    const entry = candidates.map((c) => join(dir, c)).find((c) => existsSync(c));
    if (!entry) return null;
    return signaturesOf(readFileSync(entry, "utf8"), entry);
  } catch {
    return null; // unreadable or malformed declarations: no signatures, never a failed scan
  }
}

function paramText(param: AstNode): string {
  switch (param.type) {
    case "Identifier":
      return param.name;
    case "RestElement":
      return `...${paramText(param.argument)}`;
    case "AssignmentPattern":
      return paramText(param.left);
    case "TSParameterProperty":
      return paramText(param.parameter);
    case "ObjectPattern":
      return "options";
    case "ArrayPattern":
      return "values";
    default:
      return "arg";
  }
}

const render = (name: string, fn: AstNode) =>
  `${name}(${(fn.params as AstNode[])
    .filter((p) => !(p.type === "Identifier" && p.name === "this"))
    .map(paramText)
    .join(", ")})`;

export function signaturesOf(text: string, file: string): PackageSignatures {
  const signatures: PackageSignatures = new Map();
  const parsed = parseSync(file, text, { lang: "dts" });
  const body = parsed.program.body as unknown as AstNode[];
  const functions = new Map<string, string>();
  const namespaces = new Map<string, Map<string, string>>();
  const isFunction = (n: AstNode | null | undefined) =>
    n?.type === "TSDeclareFunction" || n?.type === "FunctionDeclaration";
  const namespaceMembers = (n: AstNode): Map<string, string> => {
    const members = new Map<string, string>();
    for (const statement of (n.body?.body ?? []) as AstNode[]) {
      const declaration = statement.type === "ExportNamedDeclaration" ? statement.declaration : statement;
      if (isFunction(declaration) && declaration.id && !members.has(declaration.id.name))
        members.set(declaration.id.name, render(declaration.id.name, declaration));
    }
    return members;
  };
  // The first overload of a name is kept.
  for (const statement of body) {
    const declaration = statement.type === "ExportNamedDeclaration" ? statement.declaration : statement;
    if (isFunction(declaration) && declaration.id) {
      const name = declaration.id.name as string;
      if (!functions.has(name)) functions.set(name, render(name, declaration));
      if (statement.type === "ExportNamedDeclaration" && !signatures.has(name))
        signatures.set(name, functions.get(name) as string);
    } else if (declaration?.type === "TSModuleDeclaration" && declaration.id?.type === "Identifier") {
      namespaces.set(declaration.id.name, namespaceMembers(declaration));
    }
  }
  for (const statement of body) {
    if (statement.type === "ExportNamedDeclaration" && !statement.source && !statement.declaration) {
      for (const specifier of statement.specifiers as AstNode[]) {
        const local = specifier.local?.name;
        const exported = specifier.exported?.name ?? specifier.exported?.value;
        const signature = functions.get(local);
        if (signature && typeof exported === "string" && !signatures.has(exported))
          signatures.set(exported, signature.replace(/^[^(]*/, exported));
      }
    }
    if (statement.type === "TSExportAssignment" && statement.expression.type === "Identifier") {
      const name = statement.expression.name as string;
      const own = functions.get(name);
      if (own) signatures.set("", own);
      for (const [member, signature] of namespaces.get(name) ?? []) signatures.set(member, signature);
    }
  }
  return signatures;
}
