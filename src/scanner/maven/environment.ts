/**
 * What Maven would know about the machine it runs on: the JDK and OS that decide which profiles are active,
 * the system properties POMs may reference, and the user properties (`-D`, `.mvn/maven.config`).
 * The scanner does not run a JDK: it assumes the one stated here (Java 17 on Linux by default).
 */
import { existsSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { compareMavenVersions } from "../../domain/versions/maven-version.ts";
import type { RawActivation, RawProfile } from "./pom-xml.ts";
import { parseVersionRange, rangeContains } from "./version-range.ts";

export interface MavenEnvironment {
  /** `java.version` as Maven would see it, e.g. "17.0.15". */
  javaVersion: string;
  os: { name: string; family: string; arch: string; version: string };
  /** `-Dname=value` given to Maven (here: from `.mvn/maven.config`); win over POM properties. */
  userProperties: ReadonlyMap<string, string>;
}

export const DEFAULT_ENVIRONMENT: MavenEnvironment = {
  javaVersion: "17.0.15",
  os: { name: "linux", family: "unix", arch: "amd64", version: "6.1.0" },
  userProperties: new Map(),
};

/** The system properties a POM may read (`${java.version}`...). */
export function systemProperties(env: MavenEnvironment): Map<string, string> {
  const spec = env.javaVersion.startsWith("1.") ? env.javaVersion.slice(0, 3) : env.javaVersion.split(".")[0];
  return new Map([
    ["java.version", env.javaVersion],
    ["java.specification.version", spec ?? env.javaVersion],
    ["os.name", env.os.name],
    ["os.arch", env.os.arch],
    ["os.version", env.os.version],
    ["file.separator", "/"],
    ["path.separator", ":"],
    ["line.separator", "\n"],
    ["file.encoding", "UTF-8"],
  ]);
}

function jdkMatches(jdk: string, javaVersion: string): boolean {
  const negated = jdk.startsWith("!");
  const spec = negated ? jdk.slice(1) : jdk;
  let matches: boolean;
  if (spec.startsWith("[") || spec.startsWith("(")) {
    const range = parseVersionRange(spec);
    // Maven compares the running JDK against the range with its own version ordering
    matches = range !== undefined && rangeContains(range, javaVersion, compareMavenVersions);
  } else {
    // Maven's own rule: a plain prefix test ("1" matches "17")
    matches = javaVersion.startsWith(spec);
  }
  return negated ? !matches : matches;
}

function osMatches(os: NonNullable<RawActivation["os"]>, env: MavenEnvironment): boolean {
  const test = (expected: string | undefined, actual: string) => {
    if (expected === undefined) return true;
    const negated = expected.startsWith("!");
    const value = (negated ? expected.slice(1) : expected).toLowerCase();
    return (value === actual.toLowerCase()) !== negated;
  };
  const family = (expected: string | undefined) => {
    if (expected === undefined) return true;
    const negated = expected.startsWith("!");
    const value = (negated ? expected.slice(1) : expected).toLowerCase();
    // plexus-utils Os.isFamily: the known families, else "the OS name contains it" (Linux for linux)
    const osName = env.os.name.toLowerCase();
    const known: Record<string, boolean> = {
      windows: osName.includes("windows"),
      dos: osName.includes("windows"),
      mac: osName.includes("mac"),
      unix: env.os.family === "unix",
      netware: false,
      "os/2": false,
      tandem: false,
      "z/os": false,
      "os/400": false,
      openvms: false,
    };
    return (known[value] ?? osName.includes(value)) !== negated;
  };
  return (
    test(os.name, env.os.name) &&
    family(os.family) &&
    test(os.arch, env.os.arch) &&
    test(os.version, env.os.version)
  );
}

function propertyMatches(property: NonNullable<RawActivation["property"]>, env: MavenEnvironment): boolean {
  if (!property.name) return false;
  const negatedName = property.name.startsWith("!");
  const name = negatedName ? property.name.slice(1) : property.name;
  // profile activation sees system and user properties, never the POM's own properties
  const actual = env.userProperties.get(name) ?? systemProperties(env).get(name);
  if (property.value === undefined) return negatedName ? actual === undefined : actual !== undefined;
  const negatedValue = property.value.startsWith("!");
  const value = negatedValue ? property.value.slice(1) : property.value;
  return negatedValue ? actual !== value : actual === value;
}

function fileMatches(file: NonNullable<RawActivation["file"]>, basedir: string | undefined): boolean {
  const check = (path: string) => {
    const resolved = path.replace(/\$\{(?:project\.)?basedir\}/g, basedir ?? "");
    if (basedir === undefined && !isAbsolute(resolved)) return false;
    return existsSync(isAbsolute(resolved) ? resolved : join(basedir ?? "", resolved));
  };
  if (file.exists !== undefined) return check(file.exists);
  if (file.missing !== undefined) return !check(file.missing);
  return false;
}

/**
 * The profiles of one POM that Maven would activate: every condition given must hold; `activeByDefault`
 * ones only when no other profile of that POM is active.
 */
export function activeProfiles(
  profiles: readonly RawProfile[],
  env: MavenEnvironment,
  basedir: string | undefined,
): RawProfile[] {
  const active = profiles.filter((profile) => {
    const a = profile.activation;
    if (!a) return false;
    const conditions: boolean[] = [];
    if (a.jdk !== undefined) conditions.push(jdkMatches(a.jdk, env.javaVersion));
    if (a.os !== undefined) conditions.push(osMatches(a.os, env));
    if (a.property !== undefined) conditions.push(propertyMatches(a.property, env));
    if (a.file !== undefined) conditions.push(fileMatches(a.file, basedir));
    return conditions.length > 0 && conditions.every(Boolean);
  });
  if (active.length > 0) return active;
  return profiles.filter((p) => p.activation?.activeByDefault === true);
}
