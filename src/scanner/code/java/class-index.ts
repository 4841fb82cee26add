/**
 * Which dependency declares which class: the class list of every resolved Maven dependency's jar (read
 * from its zip directory only), from the jar nested in the scanned archive when it came from there,
 * else from the local repository, else from the remote repository through the scanner's HTTP cache.
 * Classes are keyed by binary name, never by simple name (`org.apache.logging.log4j.spi.LoggerContext`
 * is log4j-api's, `org.apache.logging.log4j.core.LoggerContext` log4j-core's).
 */
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { bufferSource } from "../../archive/byte-source.ts";
import { ArchiveFormatError, ArchiveLimitError, InflateBudget } from "../../archive/limits.ts";
import { ZipArchive } from "../../archive/zip.ts";
import type { InventoryPackage, InventoryWarning } from "../../inventory.ts";
import { repositoryPath, repositoryUrl } from "../../maven/coordinates.ts";
import type { RegistryFetcher } from "../../registry/cached-fetch.ts";

export interface JarSource {
  fetcher: RegistryFetcher;
  mavenRepositoryUrl: string;
  mavenLocalRepository: string;
}

interface ClassIndex {
  /** Internal class name → `<ecosystem>:<name>` of each package declaring it (more than one: a duplicate). */
  owners: Map<string, string[]>;
  /** Packages whose jar could be listed. */
  listed: number;
  warnings: InventoryWarning[];
}

const CONCURRENCY = 8;

/** Internal names of the classes a jar declares (multi-release variants folded onto their base name). */
export function jarClassNames(archive: ZipArchive): string[] {
  const names: string[] = [];
  for (const entry of archive.entries) {
    let name = entry.name;
    if (!name.endsWith(".class")) continue;
    const versioned = /^META-INF\/versions\/\d+\/(.+)$/.exec(name);
    if (versioned) name = versioned[1] as string;
    if (!name.startsWith("META-INF/") && !name.endsWith("module-info.class")) names.push(name.slice(0, -6));
  }
  return names;
}

export async function buildClassIndex(
  packages: readonly InventoryPackage[],
  embeddedJars: ReadonlyMap<string, readonly string[]>,
  source: JarSource,
): Promise<ClassIndex> {
  const index: ClassIndex = { owners: new Map(), listed: 0, warnings: [] };
  const maven = packages.filter((p) => p.ecosystem === "maven");
  const lists: (string[] | undefined)[] = new Array(maven.length);
  const notCached: InventoryPackage[] = [];
  let next = 0;
  const worker = async () => {
    while (next < maven.length) {
      const i = next++;
      const p = maven[i] as InventoryPackage;
      const embedded = embeddedJars.get(p.source);
      if (embedded) {
        lists[i] = [...embedded];
        continue;
      }
      const jar = await repositoryJar(p, source, index.warnings, notCached);
      if (!jar) continue;
      try {
        // the zip directory alone gives the class names: nothing is inflated
        const archive = ZipArchive.open(bufferSource(jar), `${p.name}:${p.version}`, new InflateBudget());
        lists[i] = jarClassNames(archive);
        archive.close();
      } catch (error) {
        if (!(error instanceof ArchiveFormatError || error instanceof ArchiveLimitError)) throw error;
        index.warnings.push({
          file: p.source,
          message: `${p.name}:${p.version}: its jar is not a readable zip archive (${(error as Error).message}); its classes are not attributed`,
        });
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  if (notCached.length > 0) {
    // one line for all of them: an offline scan of a project never built here lacks every jar
    const names = notCached.map((p) => `${p.name}:${p.version}`).sort();
    index.warnings.push({
      file: notCached[0]?.source ?? "",
      message:
        `the jar${names.length === 1 ? "" : "s"} of ${names.length} dependenc${names.length === 1 ? "y is" : "ies are"} neither in the local ` +
        `repository nor in the offline cache (${names.slice(0, 5).join(", ")}${names.length > 5 ? ", ..." : ""}): ` +
        "calls into them are not reported",
    });
  }
  for (const [i, names] of lists.entries()) {
    if (!names) continue;
    index.listed++;
    const key = `maven:${(maven[i] as InventoryPackage).name}`;
    for (const name of names) {
      const owners = index.owners.get(name);
      if (!owners) index.owners.set(name, [key]);
      else if (!owners.includes(key)) owners.push(key);
    }
  }
  return index;
}

async function repositoryJar(
  p: InventoryPackage,
  source: JarSource,
  warnings: InventoryWarning[],
  notCached: InventoryPackage[],
): Promise<Uint8Array | undefined> {
  const [groupId = "", artifactId = ""] = p.name.split(":");
  const path = repositoryPath({ groupId, artifactId, version: p.version }, "jar");
  const local = join(source.mavenLocalRepository.replace(/^~(?=$|\/)/, homedir()), path);
  try {
    return await readFile(local);
  } catch {
    // not in the local repository: the remote one
  }
  const url = repositoryUrl(source.mavenRepositoryUrl, { groupId, artifactId, version: p.version }, "jar");
  const outcome = await source.fetcher.get(url, {
    immutable: !p.version.endsWith("-SNAPSHOT"),
  });
  switch (outcome.kind) {
    case "ok":
      return outcome.body;
    case "not-found":
      return undefined; // a POM-only artifact (a BOM, a parent): no classes
    case "not-cached":
      notCached.push(p);
      return undefined;
    case "failed":
      warnings.push({
        file: p.source,
        message: `${p.name}:${p.version}: its jar could not be fetched (${outcome.reason}); calls into it are not reported`,
      });
      return undefined;
  }
}
