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
import { ArchiveFormatError, ArchiveLimitError, InflateBudget } from "../../archive/limits.ts";
import { ZipArchive } from "../../archive/zip.ts";
import type { InventoryWarning } from "../../inventory.ts";
import { jarClassNames } from "./class-index.ts";

export interface ClassFileInput {
  /** Where it was found, relative to the scanned path (`target/classes/org/x/Foo.class`, `app.war!/WEB-INF/classes/...`). */
  label: string;
  bytes: Uint8Array;
}

interface ApplicationClasses {
  classFiles: ClassFileInput[];
  /**
   * The classes of the dependency jars found in scanned archives, by location label (as the Maven
   * reader's package `source`): listed while each nested jar is open, never kept whole.
   */
  embeddedJars: Map<string, string[]>;
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

/** A class file worth reading: not a module or package descriptor, not a multi-release variant. */
export const isCodeClassFile = (path: string): boolean =>
  path.endsWith(".class") &&
  !path.endsWith("module-info.class") &&
  !path.endsWith("package-info.class") &&
  !path.includes("META-INF/");

/**
 * `singleFile`: the user scanned one archive; a plain jar is then the application (its classes are read
 * as the application's, calling the dependencies its POM declares), not a library.
 */
export async function findApplicationClasses(
  root: string,
  files: readonly string[],
  options: { singleFile?: boolean } = {},
): Promise<ApplicationClasses> {
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
      let archive: ZipArchive;
      try {
        archive = ZipArchive.openFile(join(root, file), file, new InflateBudget());
      } catch (error) {
        if (!(error instanceof ArchiveFormatError || error instanceof ArchiveLimitError)) {
          result.warnings.push({
            file,
            message: `cannot be read (${(error as NodeJS.ErrnoException).code})`,
          });
          continue;
        }
        const reason = error.message.startsWith(`${file}: `)
          ? error.message.slice(file.length + 2)
          : error.message;
        result.warnings.push({ file, message: `${reason}: its classes were not read` });
        continue;
      }
      try {
        await readArchive(archive, Boolean(options.singleFile), result);
      } finally {
        archive.close();
      }
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

/**
 * Reads a scanned archive: the application's classes of a container (or of a jar scanned on its own), the
 * class lists of the jars it nests, one nested archive open at a time. Nested archives that cannot be
 * read were already named by the Maven reader's warnings; class files that cannot be read are named here.
 */
async function readArchive(
  archive: ZipArchive,
  application: boolean,
  result: ApplicationClasses,
): Promise<void> {
  const isContainer =
    /\.(?:war|ear)$/i.test(archive.label) ||
    archive.entries.some(
      (e) =>
        e.name.startsWith("WEB-INF/") ||
        e.name.startsWith("BOOT-INF/") ||
        e.name === "META-INF/application.xml",
    );
  const readClass = (name: string, entry: Parameters<ZipArchive["read"]>[0]) => {
    try {
      result.classFiles.push({ label: `${archive.label}!/${name}`, bytes: archive.read(entry) });
    } catch (error) {
      if (!(error instanceof ArchiveFormatError || error instanceof ArchiveLimitError)) throw error;
      const label = archive.entryLabel(entry);
      const reason = error.message.startsWith(`${label}: `)
        ? error.message.slice(label.length + 2)
        : error.message;
      result.warnings.push({ file: label, message: `${reason}: skipped` });
    }
  };
  if (!isContainer) {
    result.embeddedJars.set(archive.label, jarClassNames(archive));
    if (application && archive.depth === 0) {
      for (const entry of archive.entries) {
        if (archive.budget.exhausted) break;
        if (isCodeClassFile(entry.name)) readClass(entry.name, entry);
      }
    }
    return;
  }
  const entries = [...archive.entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (archive.budget.exhausted) break;
    if (APP_CLASSES.test(entry.name)) {
      if (isCodeClassFile(entry.name)) readClass(entry.name, entry);
      continue;
    }
    if (!NESTED.test(entry.name)) continue;
    let inner: ZipArchive;
    try {
      inner = await archive.openNested(entry);
    } catch (error) {
      if (error instanceof ArchiveFormatError || error instanceof ArchiveLimitError) continue;
      throw error;
    }
    try {
      if (/\.war$/i.test(entry.name)) await readArchive(inner, false, result);
      else result.embeddedJars.set(inner.label, jarClassNames(inner));
    } finally {
      inner.close();
    }
  }
}
