/**
 * Where the application's own compiled classes are, and which dependency jars ship inside what is
 * scanned: a build's output folders next to its build file (`target/classes`, `build/classes/<lang>/main`,
 * which the walk skips as build outputs), class files in the scanned tree, and archives — a war's
 * `WEB-INF/classes`, a Spring Boot jar's `BOOT-INF/classes`, the wars of an ear — whose nested jars
 * (`WEB-INF/lib`, `BOOT-INF/lib`, an ear's `lib/` and modules) are dependencies. A plain jar is a library,
 * as the Maven reader counts it: its classes are indexed as a dependency's, not read as the application's.
 */
import { type Dirent, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { unzipSync } from "fflate";
import type { InventoryWarning } from "../../inventory.ts";

export interface ClassFileInput {
  /** Where it was found, relative to the scanned path (`target/classes/org/x/Foo.class`, `app.war!/WEB-INF/classes/...`). */
  label: string;
  bytes: Uint8Array;
}

interface ApplicationClasses {
  classFiles: ClassFileInput[];
  /** Dependency jars found in scanned archives, by location label (as the Maven reader's package `source`). */
  embeddedJars: Map<string, Uint8Array>;
  warnings: InventoryWarning[];
}

const BUILD_OUTPUTS: Readonly<Record<string, readonly string[]>> = {
  "pom.xml": ["target/classes"],
  "build.gradle": ["build/classes/java/main", "build/classes/kotlin/main", "build/classes/groovy/main"],
  "build.gradle.kts": ["build/classes/java/main", "build/classes/kotlin/main", "build/classes/groovy/main"],
  "gradle.lockfile": ["build/classes/java/main", "build/classes/kotlin/main", "build/classes/groovy/main"],
};
const ARCHIVE = /\.(?:jar|war|ear)$/i;
const WRAPPER_JAR = /(?:^|\/)(?:gradle\/wrapper\/gradle-wrapper|\.mvn\/wrapper\/maven-wrapper)\.jar$/;
const APP_CLASSES = /^(?:WEB-INF|BOOT-INF)\/classes\/(.+\.class)$/;
const NESTED =
  /^(?:WEB-INF\/lib|BOOT-INF\/lib|lib|APP-INF\/lib)\/[^/]+\.(?:jar|war|rar)$|^[^/]+\.(?:jar|war|rar)$/;
const MAX_NESTING = 4;

/** A class file worth reading: not a module or package descriptor, not a multi-release variant. */
export const isCodeClassFile = (path: string): boolean =>
  path.endsWith(".class") &&
  !path.endsWith("module-info.class") &&
  !path.endsWith("package-info.class") &&
  !path.includes("META-INF/");

export function findApplicationClasses(root: string, files: readonly string[]): ApplicationClasses {
  const result: ApplicationClasses = { classFiles: [], embeddedJars: new Map(), warnings: [] };
  const seenDirs = new Set<string>();
  for (const file of files) {
    const slash = file.lastIndexOf("/");
    const base = file.slice(slash + 1);
    const dir = slash < 0 ? "" : file.slice(0, slash);
    for (const output of BUILD_OUTPUTS[base] ?? []) {
      const relative = dir === "" ? output : `${dir}/${output}`;
      if (seenDirs.has(relative)) continue;
      seenDirs.add(relative);
      readClassFolder(root, relative, result);
    }
    if (isCodeClassFile(file)) {
      const bytes = readBytes(join(root, file), file, result.warnings);
      if (bytes) result.classFiles.push({ label: file, bytes });
    } else if (ARCHIVE.test(base) && !WRAPPER_JAR.test(file)) {
      const bytes = readBytes(join(root, file), file, result.warnings);
      if (bytes) readArchive(bytes, file, 0, result);
    }
  }
  return result;
}

function readBytes(path: string, label: string, warnings: InventoryWarning[]): Uint8Array | undefined {
  try {
    return readFileSync(path);
  } catch (error) {
    warnings.push({ file: label, message: `cannot be read (${(error as NodeJS.ErrnoException).code})` });
    return undefined;
  }
}

function readClassFolder(root: string, relative: string, result: ApplicationClasses): void {
  let entries: Dirent[];
  try {
    entries = readdirSync(join(root, relative), { withFileTypes: true, recursive: true });
  } catch {
    return; // not built
  }
  const found: string[] = [];
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const label = `${relative}/${path
      .slice(join(root, relative).length + 1)
      .split("\\")
      .join("/")}`;
    if (isCodeClassFile(label)) found.push(label);
  }
  for (const label of found.sort()) {
    const bytes = readBytes(join(root, label), label, result.warnings);
    if (bytes) result.classFiles.push({ label, bytes });
  }
}

/** Reads a scanned archive: the application's classes of a container, the jars it nests. */
function readArchive(bytes: Uint8Array, label: string, depth: number, result: ApplicationClasses): void {
  let names: string[] = [];
  let entries: Record<string, Uint8Array>;
  try {
    const all: string[] = [];
    entries = unzipSync(bytes, {
      filter: (file) => {
        all.push(file.name);
        return (
          (APP_CLASSES.test(file.name) && isCodeClassFile(file.name)) ||
          (depth < MAX_NESTING && NESTED.test(file.name))
        );
      },
    });
    names = all;
  } catch (error) {
    result.warnings.push({
      file: label,
      message: `not a readable zip archive (${(error as Error).message}): its classes were not read`,
    });
    return;
  }
  const isContainer =
    /\.(?:war|ear)$/i.test(label) ||
    names.some(
      (n) => n.startsWith("WEB-INF/") || n.startsWith("BOOT-INF/") || n === "META-INF/application.xml",
    );
  if (!isContainer) {
    result.embeddedJars.set(label, bytes);
    return;
  }
  for (const name of Object.keys(entries).sort()) {
    const data = entries[name] as Uint8Array;
    if (APP_CLASSES.test(name)) result.classFiles.push({ label: `${label}!/${name}`, bytes: data });
    else if (/\.war$/i.test(name)) readArchive(data, `${label}!/${name}`, depth + 1, result);
    else result.embeddedJars.set(`${label}!/${name}`, data);
  }
}
