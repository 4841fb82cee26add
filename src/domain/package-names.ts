/**
 * What a package name and version may be, per ecosystem, checked wherever one enters the platform (a
 * scan's inputs, an uploaded analysis document) and before one becomes part of a registry URL: a name
 * holding `../`, `?` or `#` would otherwise choose any path on the registry host, and markup or control
 * characters would be stored and shown.
 *
 * npm: the registry's own rules (validate-npm-package-name, as npm itself applies them; names published
 * before the current rules, with capitals or over 214 characters, stay valid) and a semver version.
 * Maven: groupId and artifactId of Maven's model validator (`[A-Za-z0-9_\-.]+`), a groupId of non-empty
 * dot-separated segments (it becomes folders), neither of them `.` or `..`; a version without the
 * characters Maven refuses in one (`\/:"<>|?*`), whitespace or control characters.
 */
import semver from "semver";
import validateNpmName from "validate-npm-package-name";
import { WHITESPACE } from "./text-patterns.ts";
import type { Ecosystem } from "./versions/index.ts";

/**
 * The same rules as JSON Schema patterns, for the OpenAPI document of an upload (a schema-valid request must
 * be accepted, a schema-violating one refused): npm's URL-friendly names, scoped or not, not starting with
 * `.`, `_` or `-` (nor a scoped name's package with `.`; npm's two reserved names aside); npm's strict
 * semver, numbers under 2^53 (15 digits); Maven's dot-separated groupId and its artifactId, neither `.` nor
 * `..`; a Maven version as above. Ranges, not `\p{...}`, so that they read the same without the `u` flag
 * (Python's `re`, Schemathesis). test/unit/domain/package-name-patterns.test.ts holds them to the checks.
 */
const URL_FRIENDLY = "A-Za-z0-9\\-_.!~*'()";
export const NPM_NAME_PATTERN = `^(?:@[${URL_FRIENDLY}]+/[A-Za-z0-9\\-_!~*'()][${URL_FRIENDLY}]*|[A-Za-z0-9!~*'()][${URL_FRIENDLY}]*)$`;
const SEMVER_NUMBER = "(?:0|[1-9]\\d{0,14})";
const PRERELEASE_ID = "(?:0|[1-9]\\d*|\\d*[A-Za-z-][0-9A-Za-z-]*)";
export const NPM_VERSION_PATTERN =
  `^${SEMVER_NUMBER}\\.${SEMVER_NUMBER}\\.${SEMVER_NUMBER}` +
  `(?:-${PRERELEASE_ID}(?:\\.${PRERELEASE_ID})*)?(?:\\+[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?$`;
const MAVEN_CHAR = "A-Za-z0-9_\\-";
export const MAVEN_NAME_PATTERN = `^[${MAVEN_CHAR}]+(?:\\.[${MAVEN_CHAR}]+)*:(?:[${MAVEN_CHAR}.]*[${MAVEN_CHAR}][${MAVEN_CHAR}.]*|\\.{3,})$`;
const MAVEN_VERSION_CHAR = `\\\\/:"<>|?*${WHITESPACE}\\u0000-\\u001f\\u007f-\\u009f`;
export const MAVEN_VERSION_PATTERN = `^(?:[^${MAVEN_VERSION_CHAR}]*[^${MAVEN_VERSION_CHAR}.][^${MAVEN_VERSION_CHAR}]*|\\.{3,})$`;
const NPM_VERSION = new RegExp(NPM_VERSION_PATTERN);

const MAVEN_ID = /^[A-Za-z0-9_\-.]+$/;
const MAVEN_VERSION_REFUSED = /[\\/:"<>|?*\s\p{Cc}]/u;
const CONTROL = /\p{Cc}/u;

/** Why `name` is no valid package name of `ecosystem`, or undefined when it is one. */
export function packageNameProblem(ecosystem: Ecosystem, name: string): string | undefined {
  if (CONTROL.test(name)) return "contains control characters";
  if (ecosystem === "npm") {
    const result = validateNpmName(name);
    if (result.validForOldPackages) return undefined;
    return `is not a valid npm package name (${(result.errors ?? []).join("; ")})`;
  }
  const parts = name.split(":");
  if (parts.length !== 2) return "is not a Maven groupId:artifactId";
  const [groupId, artifactId] = parts as [string, string];
  const idProblem = (id: string, what: string) =>
    !MAVEN_ID.test(id)
      ? `has a ${what} with characters Maven refuses (letters, digits, '_', '-' and '.' only)`
      : id === "." || id === ".."
        ? `has '${id}' as ${what}`
        : undefined;
  const problem = idProblem(groupId, "groupId") ?? idProblem(artifactId, "artifactId");
  if (problem) return problem;
  if (groupId.split(".").some((segment) => segment === "")) return "has a groupId with an empty segment";
  return undefined;
}

/** Why `version` is no valid version of a package of `ecosystem`, or undefined when it is one. */
export function versionProblem(ecosystem: Ecosystem, version: string): string | undefined {
  if (version === "") return "is empty";
  if (ecosystem === "npm") {
    // valid() also takes "v1.2.3" and "=1.2.3", which no registry version is written as
    return semver.valid(version) !== null && NPM_VERSION.test(version)
      ? undefined
      : "is not a semver version (npm publishes no other)";
  }
  if (MAVEN_VERSION_REFUSED.test(version)) {
    return 'contains characters Maven refuses in a version (\\ / : " < > | ? * whitespace or control characters)';
  }
  if (version === "." || version === "..") return `is '${version}'`;
  return undefined;
}
