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
import { compareVersions } from "../../../domain/versions/index.ts";
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
  /** `<ecosystem>:<name>` → the version whose classes were listed: the one the code loads (loadedVersions). */
  versions: Map<string, string>;
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
  const index: ClassIndex = { owners: new Map(), versions: new Map(), listed: 0, warnings: [] };
  const maven = loadedVersions(packages, embeddedJars, index.warnings);
  for (const p of maven) index.versions.set(`maven:${p.name}`, p.version);
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

/**
 * One version per Maven package, the one the application's code loads: Maven resolves one version per
 * project, so an inventory holds several only when several inputs (modules, an archive beside a POM)
 * resolved differently. Then the jar packaged with the scanned archive wins (the class loader's), then a
 * version the application declares, then the highest; a warning names the others.
 */
function loadedVersions(
  packages: readonly InventoryPackage[],
  embeddedJars: ReadonlyMap<string, readonly string[]>,
  warnings: InventoryWarning[],
): InventoryPackage[] {
  const byName = new Map<string, InventoryPackage[]>();
  for (const p of packages) {
    if (p.ecosystem !== "maven") continue;
    byName.set(p.name, [...(byName.get(p.name) ?? []), p]);
  }
  const chosen: InventoryPackage[] = [];
  for (const [name, versions] of byName) {
    const rank = (p: InventoryPackage) => (embeddedJars.has(p.source) ? 2 : 0) + (p.direct ? 1 : 0);
    const [first, ...others] = [...versions].sort(
      (a, b) => rank(b) - rank(a) || compareVersions("maven", b.version, a.version),
    );
    if (!first) continue;
    chosen.push(first);
    if (others.length > 0) {
      warnings.push({
        file: first.source,
        message:
          `${name} is resolved at ${versions.length} versions by the inputs scanned; the code's uses of its ` +
          `classes are attributed to ${first.version} (not ${others.map((o) => o.version).join(", ")})`,
      });
    }
  }
  return chosen;
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
