/**
 * The Java code extractor of `imaging scan`: which classes, methods and fields of the dependencies the
 * application's compiled code refers to, and from which of its methods.
 *
 *   application classes ─┐
 *   dependency jars ─► class index ─► dependency uses (worker threads when large) ─► objects + references
 *
 * Without compiled classes, Java sources are read instead (java-sources.ts), at class level.
 */
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import type {
  ApplicationObjectInput,
  ExternalObjectInput,
  ReferenceInput,
} from "../../../store/input-records.ts";
import type { InventoryPackage, InventoryWarning } from "../../inventory.ts";
import { type ClassFileInput, findApplicationClasses } from "./application-classes.ts";
import type { MemberUse } from "./class-file.ts";
import { buildClassIndex, type JarSource } from "./class-index.ts";
import { type DependencyUsesResult, dependencyUses } from "./dependency-uses.ts";
import { binaryName } from "./descriptor.ts";
import { readJavaSources } from "./java-sources.ts";
import { applicationClass, applicationMethod, externalObject } from "./objects.ts";

type JavaPrecision = "bytecode" | "source, class level";

/** What the scan summary says about the Java code read. */
export interface JavaCodeSummary {
  language: "java";
  precision: JavaPrecision;
  /** Class files (bytecode) or source files read. */
  files: number;
  /** Files skipped because they could not be read (each named in a warning). */
  unreadable: number;
  /** Dependencies whose classes were listed to attribute owners. */
  dependenciesListed: number;
}

interface CodeExtraction {
  objects: ExternalObjectInput[];
  references: ReferenceInput[];
  warnings: InventoryWarning[];
  /** Undefined when the scanned path holds no Java code. */
  summary?: JavaCodeSummary;
}

interface JavaCodeOptions extends JarSource {
  /** The scanned directory and the walk's files in it (relative, `/`-separated). */
  root: string;
  files: readonly string[];
  /** The user scanned one file: a plain jar is then the application, not a library. */
  singleFile?: boolean;
  packages: readonly InventoryPackage[];
  progress(message: string): void;
  /** From how many class files worker threads share the parsing (default 5,000; 0: never). */
  workerThreshold?: number;
}

const DEFAULT_WORKER_THRESHOLD = 5_000;
const MAX_UNREADABLE_WARNINGS = 50;

export async function extractJavaCode(options: JavaCodeOptions): Promise<CodeExtraction> {
  const app = await findApplicationClasses(options.root, options.files, { singleFile: options.singleFile });
  const hasJava = app.classFiles.length > 0 || options.files.some(isMainJavaSource);
  if (!hasJava) return { objects: [], references: [], warnings: app.warnings };
  options.progress("java: listing the classes of the dependencies");
  const index = await buildClassIndex(options.packages, app.embeddedJars, options);
  const warnings = [...app.warnings, ...index.warnings];
  if (app.classFiles.length === 0) {
    options.progress("java: no compiled classes, reading the Java sources (class level)");
    const files = options.files.filter(isMainJavaSource);
    const sources = await readJavaSources(options.root, files, index.owners);
    withVersions(sources.objects, index.versions);
    // said in the warnings too, so the analysis document (and an upload) carries it
    const precision = {
      file: files[0] ?? "",
      message:
        `no compiled classes: the Java objects come from ${sources.files} source files, ` +
        'at precision "source, class level" (classes each type uses, not the methods it calls)',
    };
    return {
      objects: sources.objects,
      references: sources.references,
      warnings: [...warnings, ...sources.warnings, precision],
      summary: {
        language: "java",
        precision: "source, class level",
        files: sources.files,
        unreadable: sources.warnings.length,
        dependenciesListed: index.listed,
      },
    };
  }
  options.progress(`java: reading ${app.classFiles.length} class files`);
  const parsed = await parseClassFiles(
    app.classFiles,
    index.owners,
    options.workerThreshold ?? DEFAULT_WORKER_THRESHOLD,
  );
  for (const u of parsed.unreadable.slice(0, MAX_UNREADABLE_WARNINGS)) {
    warnings.push({ file: u.label, message: `not a readable class file (${u.message}): skipped` });
  }
  if (parsed.unreadable.length > MAX_UNREADABLE_WARNINGS) {
    warnings.push({
      file: parsed.unreadable[MAX_UNREADABLE_WARNINGS]?.label ?? "",
      message: `and ${parsed.unreadable.length - MAX_UNREADABLE_WARNINGS} more unreadable class files: skipped`,
    });
  }
  const graph = buildReferences(parsed, index.owners);
  withVersions(graph.objects, index.versions);
  return {
    objects: graph.objects,
    references: graph.references,
    warnings: [...warnings, ...graph.warnings],
    summary: {
      language: "java",
      precision: "bytecode",
      files: app.classFiles.length,
      unreadable: parsed.unreadable.length,
      dependenciesListed: index.listed,
    },
  };
}

/** Each object belongs to the version of its package whose classes were listed (the one the code loads). */
function withVersions(objects: ExternalObjectInput[], versions: ReadonlyMap<string, string>): void {
  for (const object of objects) object.version = versions.get(object.package);
}

/** Sources of the application's main code (tests use test-scoped libraries and are not the application). */
const isMainJavaSource = (file: string): boolean =>
  file.endsWith(".java") && !/(?:^|\/)src\/test\//.test(file) && !file.endsWith("module-info.java");

/** Parses the class files, on worker threads when there are many and more than one core. */
export async function parseClassFiles(
  files: readonly ClassFileInput[],
  owners: ReadonlyMap<string, readonly string[]>,
  workerThreshold: number,
): Promise<DependencyUsesResult> {
  const dependencyClasses = [...owners.keys()];
  const threads = Math.min(availableParallelism(), 4);
  if (workerThreshold <= 0 || files.length < workerThreshold || threads < 2) {
    return dependencyUses(files, new Set(dependencyClasses));
  }
  const slices = Array.from({ length: threads }, (_, i) =>
    files.slice(Math.floor((i * files.length) / threads), Math.floor(((i + 1) * files.length) / threads)),
  );
  const extension = import.meta.url.endsWith(".ts") ? ".ts" : ".js";
  const results = await Promise.all(
    slices.map((slice) => {
      const size = slice.reduce((n, f) => n + f.bytes.length, 0);
      const buffer = new ArrayBuffer(size);
      const bytes = new Uint8Array(buffer);
      const offsets = [0];
      for (const f of slice) {
        bytes.set(f.bytes, offsets[offsets.length - 1]);
        offsets.push((offsets[offsets.length - 1] as number) + f.bytes.length);
      }
      const worker = new Worker(new URL(`./dependency-uses-worker${extension}`, import.meta.url), {
        workerData: { dependencyClasses, labels: slice.map((f) => f.label), offsets, buffer },
        transferList: [buffer],
      });
      return new Promise<DependencyUsesResult>((resolve, reject) => {
        worker.once("message", resolve);
        worker.once("error", reject);
        worker.once("exit", (code) => {
          if (code !== 0) reject(new Error(`a class-file worker stopped with code ${code}`));
        });
      });
    }),
  );
  return {
    classes: results.flatMap((r) => r.classes),
    unreadable: results.flatMap((r) => r.unreadable),
  };
}

/**
 * Objects and references from the parsed uses: owners that are the application's own classes are not
 * external; an owner two dependencies declare is attributed to both, and said once per pair of packages.
 */
function buildReferences(
  parsed: DependencyUsesResult,
  owners: ReadonlyMap<string, readonly string[]>,
): { objects: ExternalObjectInput[]; references: ReferenceInput[]; warnings: InventoryWarning[] } {
  const own = new Set<string>();
  const classes = parsed.classes.filter((c) => {
    if (own.has(c.name)) return false; // the same class found twice (a build folder and an archive)
    own.add(c.name);
    return true;
  });
  const objects = new Map<string, ExternalObjectInput>();
  const references = new Map<string, ReferenceInput>();
  const duplicates = new Map<string, { packages: readonly string[]; classes: Set<string>; file: string }>();
  const refer = (from: ApplicationObjectInput, use: MemberUse, label: string) => {
    if (own.has(use.owner)) return;
    const declaring = owners.get(use.owner) ?? [];
    if (declaring.length > 1) {
      const key = declaring.join("\0");
      const entry = duplicates.get(key) ?? { packages: declaring, classes: new Set(), file: label };
      entry.classes.add(binaryName(use.owner));
      duplicates.set(key, entry);
    }
    for (const packageKey of declaring) {
      const object = externalObject(packageKey, use);
      objects.set(object.id, object);
      references.set(`${from.id}>${object.id}`, { from, to: object.id });
    }
  };
  for (const c of classes) {
    if (c.supertypes.length > 0) {
      const from = applicationClass(c.name);
      for (const s of c.supertypes)
        refer(from, { kind: "class", owner: s, name: "", descriptor: "" }, c.label);
    }
    for (const m of c.methods) {
      const from = applicationMethod(c.name, m.name, m.descriptor);
      for (const use of m.uses) refer(from, use, c.label);
    }
  }
  const warnings = [...duplicates.values()].map(({ packages, classes: names, file }) => {
    const sorted = [...names].sort();
    return {
      file,
      message:
        `${sorted.length} class${sorted.length === 1 ? "" : "es"} the application uses ` +
        `(${sorted.slice(0, 3).join(", ")}${sorted.length > 3 ? ", ..." : ""}) ` +
        `${sorted.length === 1 ? "is" : "are"} declared by ${packages.map((p) => p.replace(/^maven:/, "")).join(" and ")}: attributed to each`,
    };
  });
  const sortedObjects = [...objects.values()].sort(
    (a, b) =>
      a.package.localeCompare(b.package) ||
      a.fullName.localeCompare(b.fullName) ||
      a.mangling.localeCompare(b.mangling) ||
      a.typeId.localeCompare(b.typeId),
  );
  const sortedReferences = [...references.values()].sort(
    (a, b) =>
      a.from.fullName.localeCompare(b.from.fullName) ||
      a.from.id.localeCompare(b.from.id) ||
      a.to.localeCompare(b.to),
  );
  return { objects: sortedObjects, references: sortedReferences, warnings };
}
