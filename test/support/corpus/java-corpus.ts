/**
 * The scanner's Java evaluation corpus (npm run bench:scan:accuracy): real artifacts published on Maven
 * Central — library and application jars, wars, a Spring Boot executable jar and a multi-module project
 * made of published module POMs — and what Maven itself says they are made of:
 *
 *   maven/projects/corpus-<id>/input/         the scanned input, given to our scanner and to every peer:
 *                                             the artifact file alone, or the reactor's POMs
 *   maven/projects/corpus-<id>/oracle/        the artifact's published POM as pom.xml, and
 *                                             `mvn dependency:list` of it (Maven 3.8.7) in
 *                                             mvn-dependency-list.txt (per module for a reactor)
 *
 * The oracle's inventory is what Maven puts on the artifact's runtime class path: scopes compile and
 * runtime (test, provided and system left out), optional ones included (Maven lists them for the project
 * itself). The artifact itself is not part of either side. For jars, the oracle of external objects is
 * `javap -c -p -v` on the jar's classes with classes attributed to the resolved jars (javap-oracle.ts).
 *
 * None of these subjects is used by the other tests (solr-core, hadoop-common, dropwizard-core,
 * jackson-dataformat-yaml, log4j-web, quarkus, webgoat and the made-up projects are).
 */
import { existsSync } from "node:fs";
import { copyFile, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import {
  CENTRAL,
  centralFile,
  MAVEN_SUBJECTS_DIR,
  mvnDependencyList,
  type OracleArtifact,
} from "../maven-subjects.ts";

export type JavaCorpusKind = "jar" | "war" | "spring-boot" | "multi-module";

export interface JavaCorpusSubject {
  id: string;
  kind: JavaCorpusKind;
  /** groupId:artifactId:version (for a multi-module project: its modules). */
  coordinates: string[];
  /** File extension on Central, and classifier (Spring Boot `exec` jars). */
  extension?: "jar" | "war";
  classifier?: string;
  /** Compare external objects with javap (jars up to about 1,000 classes: javap runs on every class). */
  javap: boolean;
  why: string;
}

const jar = (id: string, coordinates: string, why: string, javap = true): JavaCorpusSubject => ({
  id,
  kind: "jar",
  coordinates: [coordinates],
  extension: "jar",
  javap,
  why,
});

export const JAVA_CORPUS: readonly JavaCorpusSubject[] = [
  jar(
    "httpclient-4.5.14",
    "org.apache.httpcomponents:httpclient:4.5.14",
    "versions from the parent's dependencyManagement",
  ),
  jar(
    "logback-classic-1.4.14",
    "ch.qos.logback:logback-classic:1.4.14",
    "sibling version from project.version",
  ),
  jar("tika-core-2.9.1", "org.apache.tika:tika-core:2.9.1", "deep parent chain (tika-parent, apache)"),
  jar(
    "hibernate-validator-8.0.1",
    "org.hibernate.validator:hibernate-validator:8.0.1.Final",
    "imported BOM, jakarta APIs",
  ),
  jar(
    "netty-handler-4.1.100",
    "io.netty:netty-handler:4.1.100.Final",
    "six netty siblings at project.version",
  ),
  jar(
    "micrometer-core-1.12.0",
    "io.micrometer:micrometer-core:1.12.0",
    "Gradle-published POM, runtime-scoped LatencyUtils",
  ),
  jar("okhttp-4.12.0", "com.squareup.okhttp3:okhttp:4.12.0", "Gradle-published POM, Kotlin stdlib"),
  jar("guava-32.1.3", "com.google.guava:guava:32.1.3-jre", "several small annotation dependencies", false),
  jar(
    "kafka-clients-3.6.0",
    "org.apache.kafka:kafka-clients:3.6.0",
    "runtime-scoped compression libraries",
    false,
  ),
  jar("poi-5.2.5", "org.apache.poi:poi:5.2.5", "Gradle-published POM, commons-*", false),
  jar("jsoup-1.17.1", "org.jsoup:jsoup:1.17.1", "no runtime dependency at all (only optional/provided)"),
  jar("httpclient5-5.2.1", "org.apache.httpcomponents.client5:httpclient5:5.2.1", "core5 siblings"),
  jar(
    "spring-beans-4.1.9",
    "org.springframework:spring-beans:4.1.9.RELEASE",
    "Gradle-built, no POM inside (named by its SHA-1); signed again in 2017, released 2015",
    false,
  ),
  jar(
    "commons-digester-2.0",
    "commons-digester:commons-digester:2.0",
    "Maven 2 era; its POM's signature is a version-3 OpenPGP packet (GnuPG 1.4.5)",
  ),
  {
    id: "jolokia-war-1.7.2",
    kind: "war",
    coordinates: ["org.jolokia:jolokia-war:1.7.2"],
    extension: "war",
    javap: false,
    why: "a war with WEB-INF/lib",
  },
  {
    id: "activemq-web-console-5.18.3",
    kind: "war",
    coordinates: ["org.apache.activemq:activemq-web-console:5.18.3"],
    extension: "war",
    javap: false,
    why: "a large war (Spring, Jetty, ActiveMQ in WEB-INF/lib)",
  },
  {
    id: "zipkin-server-2.23.2-exec",
    kind: "spring-boot",
    coordinates: ["io.zipkin:zipkin-server:2.23.2"],
    extension: "jar",
    classifier: "exec",
    javap: false,
    why: "a Spring Boot executable jar (BOOT-INF/lib)",
  },
  {
    id: "httpcomponents-core5-5.2.3-reactor",
    kind: "multi-module",
    coordinates: [
      "org.apache.httpcomponents.core5:httpcore5:5.2.3",
      "org.apache.httpcomponents.core5:httpcore5-h2:5.2.3",
      "org.apache.httpcomponents.core5:httpcore5-reactive:5.2.3",
    ],
    javap: false,
    why: "a reactor of three published module POMs depending on each other",
  },
];

export const subjectDir = (s: JavaCorpusSubject) => join(MAVEN_SUBJECTS_DIR, "projects", `corpus-${s.id}`);

const artifactIdOf = (coordinates: string) => coordinates.split(":")[1] as string;

/** Where the corpus keeps a module's oracle project (pom.xml and mvn-dependency-list.txt). */
const oracleDir = (s: JavaCorpusSubject) => join(subjectDir(s), "oracle");

const REACTOR_POM = (s: JavaCorpusSubject) => `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>corpus</groupId>
  <artifactId>${s.id}</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <modules>
${s.coordinates.map((c) => `    <module>${artifactIdOf(c)}</module>`).join("\n")}
  </modules>
</project>
`;

export interface PreparedJavaSubject {
  /** What is scanned. */
  input: string;
  /** The artifact file (jar/war), absent for a multi-module project. */
  artifact?: string;
  /** Per module (the artifact itself: one), Maven's resolved list. */
  lists: OracleArtifact[][];
}

/** Fetches the subject and computes Maven's answer (both cached). */
export async function javaCorpusSubject(s: JavaCorpusSubject): Promise<PreparedJavaSubject> {
  const dir = subjectDir(s);
  const input = join(dir, "input");
  await mkdir(input, { recursive: true });
  if (s.kind === "multi-module") {
    // the reactor is the input: its modules' published POMs, each in its folder
    if (!existsSync(join(input, "pom.xml"))) {
      for (const c of s.coordinates) {
        await mkdir(join(input, artifactIdOf(c)), { recursive: true });
        await copyFile(await centralFile(c, "pom"), join(input, artifactIdOf(c), "pom.xml"));
      }
      await writeFile(join(input, "pom.xml"), REACTOR_POM(s));
    }
    const modules = s.coordinates.map(artifactIdOf);
    const lists = await mvnDependencyList(input, modules);
    return { input, lists: modules.map((m) => lists.get(m) ?? []) };
  }
  const coordinates = s.coordinates[0] as string;
  const [groupId, artifactId, version] = coordinates.split(":") as [string, string, string];
  const fileName = `${artifactId}-${version}${s.classifier ? `-${s.classifier}` : ""}.${s.extension ?? "jar"}`;
  const artifact = join(input, fileName);
  const file = s.classifier
    ? await classified(groupId, artifactId, version, fileName)
    : await centralFile(coordinates, s.extension ?? "jar");
  if (!existsSync(artifact)) await copyFile(file, artifact);
  const oracle = oracleDir(s);
  await mkdir(oracle, { recursive: true });
  if (!existsSync(join(oracle, "pom.xml")))
    await writeFile(join(oracle, "pom.xml"), await readFile(await centralFile(coordinates, "pom")));
  const lists = await mvnDependencyList(oracle);
  return { input, artifact, lists: [lists.get("") ?? []] };
}

/** An artifact with a classifier (centralFile knows none), downloaded once beside the others. */
async function classified(groupId: string, artifactId: string, version: string, fileName: string) {
  const path = `${groupId.replaceAll(".", "/")}/${artifactId}/${version}/${fileName}`;
  const file = join(MAVEN_SUBJECTS_DIR, "files", path);
  if (existsSync(file)) return file;
  const response = await fetch(`${CENTRAL}/${path}`);
  if (!response.ok) throw new Error(`corpus setup: ${CENTRAL}/${path} answered HTTP ${response.status}`);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(`${file}.${process.pid}.part`, Buffer.from(await response.arrayBuffer()));
  await rename(`${file}.${process.pid}.part`, file);
  return file;
}

export const RUNTIME_SCOPES = new Set(["compile", "runtime"]);

/** `groupId:artifactId@version` of what Maven puts on the runtime class path, the subject's own modules left out. */
export function javaOracle(s: JavaCorpusSubject, prepared: PreparedJavaSubject): Set<string> {
  const own = new Set(s.coordinates.map((c) => c.split(":").slice(0, 2).join(":")));
  const found = new Set<string>();
  for (const list of prepared.lists) {
    for (const a of list) {
      const ga = `${a.groupId}:${a.artifactId}`;
      if (RUNTIME_SCOPES.has(a.scope) && !own.has(ga)) found.add(`${ga}@${a.version}`);
    }
  }
  return found;
}
