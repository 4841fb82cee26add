/**
 * Real compiled Java applications for the scanner's code tests: solr-core 8.9.0 (calls log4j-core 2.13.2,
 * which its grandparent POM pins) laid out as a built Maven project — its published POM as pom.xml and
 * the classes of its published jar as target/classes — in the subjects cache outside the repository.
 * Its dependency jars are those `mvn dependency:list` downloaded into the oracle's local repository.
 */
import { existsSync } from "node:fs";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { unzipSync } from "fflate";
import { centralFile, MAVEN_SUBJECTS_DIR, mvnDependencyList, projectDir } from "./maven-subjects.ts";

export const SOLR = "org.apache.solr:solr-core:8.9.0";

/** Writes every `.class` entry of a jar under `dir` (once: a marker file says it is complete). */
export async function extractClasses(jar: string, dir: string): Promise<number> {
  const marker = join(dir, ".complete");
  if (existsSync(marker)) return Number(await readFile(marker, "utf8"));
  await rm(dir, { recursive: true, force: true });
  const entries = unzipSync(await readFile(jar), { filter: (f) => f.name.endsWith(".class") });
  for (const [name, bytes] of Object.entries(entries)) {
    await mkdir(dirname(join(dir, name)), { recursive: true });
    await writeFile(join(dir, name), bytes);
  }
  const count = Object.keys(entries).length;
  await writeFile(`${marker}.part`, String(count));
  await rename(`${marker}.part`, marker);
  return count;
}

/** solr-core 8.9.0 as a built project: `{dir}/pom.xml`, `{dir}/target/classes`, and its resolved local repository. */
export async function builtSolrCore(): Promise<{ dir: string; jar: string; classes: number }> {
  // the oracle's local repository holds the dependency jars once `mvn dependency:list` has run there
  const published = await projectDir("solr-core-8.9.0", { coordinates: SOLR });
  await mvnDependencyList(published.dir);
  const dir = join(MAVEN_SUBJECTS_DIR, "projects", "solr-core-8.9.0-built");
  await mkdir(dir, { recursive: true });
  if (!existsSync(join(dir, "pom.xml"))) await writeFile(join(dir, "pom.xml"), await readFile(published.pom));
  const jar = await centralFile(SOLR, "jar");
  const classes = await extractClasses(jar, join(dir, "target", "classes"));
  return { dir, jar, classes };
}
