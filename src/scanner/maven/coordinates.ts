/**
 * Maven coordinates and the keys Maven compares dependencies by.
 */
import { packageNameProblem, versionProblem } from "../../domain/package-names.ts";

export interface Gav {
  groupId: string;
  artifactId: string;
  version: string;
}

export interface Exclusion {
  groupId: string;
  artifactId: string;
}

/** A dependency after inheritance, interpolation and management: what the resolver works on. */
export interface Dependency {
  groupId: string;
  artifactId: string;
  /** undefined when neither the POM nor any dependencyManagement gives one. */
  version: string | undefined;
  type: string;
  classifier: string;
  /** Declared scope; undefined = not declared (compile unless managed). */
  scope: string | undefined;
  /** Declared optional flag; undefined = not declared. */
  optional: boolean | undefined;
  exclusions: Exclusion[];
}

export const gavText = (c: Gav): string => `${c.groupId}:${c.artifactId}:${c.version}`;

/** The key dependencyManagement and inheritance merge on (Maven's `Dependency.getManagementKey()`). */
export const managementKey = (d: { groupId: string; artifactId: string; type: string; classifier: string }) =>
  `${d.groupId}:${d.artifactId}:${d.type}${d.classifier ? `:${d.classifier}` : ""}`;

/**
 * The artifact a dependency type stands for (Maven's artifact handlers): `test-jar` is the jar with
 * classifier `tests`, and so on. Unknown types are their own extension, as in Maven.
 */
const HANDLERS: Record<string, { extension: string; classifier?: string }> = {
  pom: { extension: "pom" },
  jar: { extension: "jar" },
  "maven-plugin": { extension: "jar" },
  ejb: { extension: "jar" },
  "ejb-client": { extension: "jar", classifier: "client" },
  "test-jar": { extension: "jar", classifier: "tests" },
  "java-source": { extension: "jar", classifier: "sources" },
  javadoc: { extension: "jar", classifier: "javadoc" },
  war: { extension: "war" },
  ear: { extension: "ear" },
  rar: { extension: "rar" },
  par: { extension: "par" },
};

export function artifactOf(type: string, classifier: string): { extension: string; classifier: string } {
  const handler = HANDLERS[type];
  if (!handler) return { extension: type, classifier };
  return { extension: handler.extension, classifier: classifier || (handler.classifier ?? "") };
}

/** The key version conflicts are resolved on (maven-resolver: groupId, artifactId, extension, classifier). */
export function conflictKey(d: { groupId: string; artifactId: string; type: string; classifier: string }) {
  const artifact = artifactOf(d.type, d.classifier);
  return `${d.groupId}:${d.artifactId}:${artifact.extension}:${artifact.classifier}`;
}

/** Whether `exclusion` (with `*` wildcards) removes the artifact groupId:artifactId. */
export function excludes(exclusion: Exclusion, groupId: string, artifactId: string): boolean {
  return (
    (exclusion.groupId === "*" || exclusion.groupId === groupId) &&
    (exclusion.artifactId === "*" || exclusion.artifactId === artifactId)
  );
}

/**
 * Coordinates Maven would refuse (package-names.ts): they come from POMs of the scanned tree and must
 * never choose another path on the repository host or on disk (`../`, `?`, `#`...).
 */
export class InvalidCoordinatesError extends Error {
  override name = "InvalidCoordinatesError";
}

const FILE_PART = /^[A-Za-z0-9_\-.]*$/;

/** The folder segments of groupId:artifactId in a repository layout, the coordinates checked first. */
function artifactFolder(groupId: string, artifactId: string): string[] {
  const problem = packageNameProblem("maven", `${groupId}:${artifactId}`);
  if (problem) throw new InvalidCoordinatesError(`${JSON.stringify(`${groupId}:${artifactId}`)} ${problem}`);
  return [...groupId.split("."), artifactId];
}

function artifactSegments(gav: Gav, extension: string, classifier: string): string[] {
  const folder = artifactFolder(gav.groupId, gav.artifactId);
  const problem = versionProblem("maven", gav.version);
  if (problem) throw new InvalidCoordinatesError(`version ${JSON.stringify(gav.version)} ${problem}`);
  for (const part of [extension, classifier]) {
    if (!FILE_PART.test(part) || part === "." || part === "..") {
      throw new InvalidCoordinatesError(`${JSON.stringify(part)} is no artifact type or classifier`);
    }
  }
  const file = `${gav.artifactId}-${gav.version}${classifier ? `-${classifier}` : ""}.${extension}`;
  return [...folder, gav.version, file];
}

/** Path of a file of an artifact inside a Maven repository layout (on disk); throws InvalidCoordinatesError. */
export function repositoryPath(gav: Gav, extension: string, classifier = ""): string {
  return artifactSegments(gav, extension, classifier).join("/");
}

const urlOf = (base: string, segments: readonly string[]) =>
  `${base.replace(/\/+$/, "")}/${segments.map(encodeURIComponent).join("/")}`;

/** URL of an artifact file in the repository at `base`, each segment encoded; throws InvalidCoordinatesError. */
export function repositoryUrl(base: string, gav: Gav, extension: string, classifier = ""): string {
  return urlOf(base, artifactSegments(gav, extension, classifier));
}

/** URL (or, with `base` "", the path) of a file of groupId:artifactId (`maven-metadata.xml`...). */
export function artifactFileUrl(base: string, groupId: string, artifactId: string, file: string): string {
  const segments = [...artifactFolder(groupId, artifactId), file];
  return base === "" ? segments.join("/") : urlOf(base, segments);
}
