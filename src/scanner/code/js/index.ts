/**
 * JavaScript/TypeScript code → external objects (members of npm packages the application uses) and the
 * references from the application's functions, methods and modules to them.
 *
 *   sources ─► extract (worker threads) ─► link through the application's own modules ─► version per
 *   importing file (lockfile) ─► objects + references
 */
import { createHash } from "node:crypto";
import type { ExternalObjectInput, ReferenceInput } from "../../../store/input-records.ts";
import type { InventoryPackage, InventoryWarning } from "../../inventory.ts";
import { defaultWorkerCount, type ExtractOptions, extractFiles } from "./extract-files.ts";
import type { ApplicationScope, FileFacts, ImportedValue, UseKind } from "./facts.ts";
import { PackageVersions } from "./package-versions.ts";
import { SignatureReader } from "./signatures.ts";
import { isJavaScriptSource } from "./sources.ts";

interface CodeExtraction {
  objects: ExternalObjectInput[];
  references: ReferenceInput[];
  warnings: InventoryWarning[];
}

interface JavaScriptStats {
  files: number;
  lines: number;
  bytes: number;
  /** Files not extracted: minified code, or outside the application's packages (templates, examples). */
  skipped: number;
  failed: number;
  /** Worker threads the extraction used (0: this thread only). */
  workers: number;
}

interface JavaScriptOptions extends ExtractOptions {
  progress?: (message: string) => void;
}

const TYPES = {
  module: { type: "JavaScript Module", typeId: "JS_MODULE" },
  function: { type: "JavaScript Function", typeId: "JS_FUNCTION" },
  method: { type: "JavaScript Method", typeId: "JS_METHOD" },
  // Also an application class: its `extends`, `implements` and decorators refer to packages.
  class: { type: "JavaScript Class", typeId: "JS_CLASS" },
  object: { type: "JavaScript Object", typeId: "JS_OBJECT" },
  type: { type: "TypeScript Type", typeId: "TS_TYPE" },
} as const;

/** What a member is, from how the application uses it: `new`/`extends` → class, a call → function. */
const RANK: Record<UseKind, number> = { import: 0, type: 0, read: 1, call: 2, new: 3, extends: 3 };

const LOCAL_EXTENSIONS = ["", ".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"];

/**
 * `files`: the walk's relative paths under `root`; `packages`: the scan's inventory (an object's package
 * must be one of them, at the version the importing file's location resolves).
 */
export async function extractJavaScript(
  root: string,
  files: readonly string[],
  packages: readonly InventoryPackage[],
  options: JavaScriptOptions = {},
): Promise<CodeExtraction & { stats: JavaScriptStats }> {
  const versions = new PackageVersions(root, files, packages);
  const candidates = files.filter(isJavaScriptSource);
  const sources = candidates.filter((file) => versions.belongs(file));
  const stats: JavaScriptStats = {
    files: 0,
    lines: 0,
    bytes: 0,
    skipped: candidates.length - sources.length,
    failed: 0,
    workers: 0,
  };
  if (sources.length === 0) return { objects: [], references: [], warnings: [], stats };
  stats.workers = options.workers ?? defaultWorkerCount(root, sources);
  options.progress?.(
    `extracting package uses from ${sources.length} JavaScript/TypeScript files` +
      (stats.workers > 0 ? ` on ${stats.workers} worker threads` : ""),
  );
  const facts = await extractFiles(root, sources, { workers: stats.workers });
  const warnings: InventoryWarning[] = [];
  const byFile = new Map<string, FileFacts>();
  for (const f of facts) {
    if (f.error) {
      stats.failed++;
      warnings.push({
        file: f.file,
        line: f.error.line,
        message: `does not parse (${f.error.message}); its package uses are not listed`,
      });
      continue;
    }
    if (f.skipped) {
      stats.skipped++;
      continue;
    }
    stats.files++;
    stats.lines += f.lines;
    stats.bytes += f.bytes;
    byFile.set(f.file, f);
  }
  const linker = new Linker(byFile);
  const objects = new Map<string, ExternalObjectInput & { rank: number; from: string; version: string }>();
  const references = new Map<string, ReferenceInput>();
  for (const f of byFile.values()) {
    for (const use of f.uses) {
      const value = use.value.kind === "package" ? use.value : linker.resolve(f.file, use.value);
      if (value?.kind !== "package") continue;
      const version = versions.versionFor(f.file, value.name);
      if (version === undefined) continue;
      const kind = use.use === "import" || value.path.length === 0 ? "module" : use.use;
      const object = {
        ...externalObject(value.name, version, kind === "module" ? [] : value.path, kind),
        from: f.file,
        version,
      };
      const seen = objects.get(object.id);
      if (!seen) objects.set(object.id, object);
      else if (object.rank > seen.rank) objects.set(object.id, { ...object, from: seen.from });
      const from = applicationObject(f.file, use.from);
      references.set(`${from.id}\u0000${object.id}`, { from, to: object.id });
    }
  }
  // Signatures from the packages' own type declarations, when the packages are installed.
  const signatures = new SignatureReader(root);
  for (const object of objects.values()) {
    const member = object.fullName.slice(object.package.length - "npm:".length + 1);
    if (object.typeId === TYPES.function.typeId && !member.includes(".")) {
      object.mangling = signatures.signature(object.from, object.package.slice(4), object.version, member);
    }
  }
  return {
    objects: [...objects.values()]
      .map(({ rank: _, from: __, ...o }) => o)
      .sort((a, b) => a.id.localeCompare(b.id)),
    references: [...references.values()].sort(
      (a, b) => a.from.id.localeCompare(b.from.id) || a.to.localeCompare(b.to),
    ),
    warnings,
    stats,
  };
}

function externalObject(
  name: string,
  version: string,
  path: string[],
  kind: UseKind | "module",
): ExternalObjectInput & { rank: number } {
  const fullName = path.length === 0 ? name : `${name}.${path.join(".")}`;
  const typed =
    kind === "module"
      ? TYPES.module
      : kind === "type"
        ? TYPES.type
        : kind === "new" || kind === "extends"
          ? TYPES.class
          : kind === "call"
            ? TYPES.function
            : TYPES.object;
  // A type use is its own object: a TypeScript type is not the runtime value of the same name.
  const suffix = kind === "type" ? ":type" : "";
  return {
    id: boundedId(`npm:${name}@${version}:${fullName}${suffix}`),
    package: `npm:${name}`,
    name: path.length === 0 ? name : (path[path.length - 1] as string),
    fullName,
    mangling: "",
    ...typed,
    rank: kind === "module" ? 0 : RANK[kind],
  };
}

/** The analysis document caps ids at 1,024 characters: a longer one keeps its start and a digest of the whole. */
export function boundedId(id: string): string {
  if (id.length <= 1024) return id;
  return `${id.slice(0, 959)}#${createHash("sha256").update(id).digest("hex")}`;
}

function applicationObject(file: string, scope: ApplicationScope): ReferenceInput["from"] {
  const fullName = scope.kind === "module" ? `[${file}]` : `[${file}].${scope.qualifiedName}`;
  // The type is part of the id: a class and a function may share a qualified name in one file, and the
  // store refuses one id described twice with different attributes.
  const typed = TYPES[scope.kind];
  return { id: boundedId(`${typed.typeId}:${fullName}`), name: scope.name, fullName, ...typed };
}

/** Follows values imported from the application's own modules to the package members they re-export. */
class Linker {
  private readonly files: ReadonlyMap<string, FileFacts>;
  /** Specifier resolutions by folder and specifier, and value resolutions by file and value. */
  private readonly targets = new Map<string, FileFacts | undefined>();
  private readonly values = new Map<string, ImportedValue | undefined>();
  constructor(files: ReadonlyMap<string, FileFacts>) {
    this.files = files;
  }

  private target(fromFile: string, specifier: string): FileFacts | undefined {
    const base = fromFile.includes("/") ? fromFile.slice(0, fromFile.lastIndexOf("/")) : "";
    const key = `${base}\u0000${specifier}`;
    if (this.targets.has(key)) return this.targets.get(key);
    const found = this.findTarget(base, specifier);
    this.targets.set(key, found);
    return found;
  }

  private findTarget(base: string, specifier: string): FileFacts | undefined {
    const parts = base === "" ? [] : base.split("/");
    for (const segment of specifier.split("/")) {
      if (segment === "." || segment === "") continue;
      if (segment === "..") {
        if (parts.length === 0) return undefined;
        parts.pop();
      } else parts.push(segment);
    }
    const path = parts.join("/");
    // TypeScript sources import their compiled names (`./utils.js` for utils.ts).
    const stems = [path];
    const compiled = /\.([cm]?)js$/.exec(path);
    if (compiled) stems.push(`${path.slice(0, -compiled[0].length)}`);
    for (const stem of stems) {
      for (const extension of LOCAL_EXTENSIONS) {
        const found = this.files.get(`${stem}${extension}`);
        if (found) return found;
      }
      for (const extension of LOCAL_EXTENSIONS.slice(1)) {
        const found = this.files.get(`${stem}/index${extension}`);
        if (found) return found;
      }
    }
    return undefined;
  }

  /** The package member a local value is, or undefined (one of the application's own objects). */
  resolve(fromFile: string, value: ImportedValue, depth = 0): ImportedValue | undefined {
    if (value.kind === "package") return value;
    if (depth > 32) return undefined; // re-export cycles
    if (depth > 0) return this.follow(fromFile, value, depth);
    const key = `${fromFile}\u0000${value.specifier}\u0000${value.interop === true}\u0000${value.path.join("\u0000")}`;
    if (this.values.has(key)) return this.values.get(key);
    const found = this.follow(fromFile, value, depth);
    this.values.set(key, found);
    return found;
  }

  private follow(
    fromFile: string,
    value: ImportedValue & { kind: "local" },
    depth: number,
  ): ImportedValue | undefined {
    const target = this.target(fromFile, value.specifier);
    if (!target) return undefined;
    const follow = (next: ImportedValue, rest: readonly string[]) =>
      this.resolve(target.file, withPath(next, [...next.path, ...rest]), depth + 1);
    const [first, ...rest] = value.path;
    const { named, own, whole, stars } = target.exports;
    if (first === undefined) return whole && follow(whole, []);
    const ownNames = own;
    const imported = Object.hasOwn(named, first) ? named[first] : undefined;
    if (imported) return follow(imported, rest);
    if (ownNames.includes(first)) return undefined;
    if (whole) return follow(whole, first === "default" ? rest : value.path);
    // A default import of a CommonJS module (`module.exports = {...}`) is its exports object.
    if (first === "default")
      return rest.length === 0 ? undefined : this.resolve(fromFile, { ...value, path: rest }, depth + 1);
    for (const star of stars) {
      if (first === "default") break;
      const found = follow(star, value.path);
      if (found) return found;
    }
    return undefined;
  }
}

function withPath(value: ImportedValue, path: string[]): ImportedValue {
  if (value.interop && path[0] === "default" && value.path.length === 0) path = path.slice(1);
  return { ...value, path, interop: false };
}
