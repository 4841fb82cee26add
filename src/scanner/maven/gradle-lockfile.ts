/**
 * Gradle dependency locking: `gradle.lockfile` (Gradle ≥ 6: `group:name:version=conf1,conf2` per line,
 * `empty=...` last) and the older per-configuration `gradle/dependency-locks/<configuration>.lockfile`
 * (`group:name:version` per line). A lockfile holds the whole resolved graph with exact versions. A
 * package is dev when no production runtime classpath locks it (test-only, or compileOnly like Maven's
 * provided scope); a lockfile that locks no runtime classpath at all falls back to "only test
 * configurations lock it".
 */
import type { PackageScope } from "../../contracts/platform.ts";
import { ScanInputError } from "../inventory.ts";

interface LockedModule {
  groupId: string;
  artifactId: string;
  version: string;
  configurations: string[];
  dev: boolean;
  /** Maven's scope for what the configurations say (gradleScope); null when they say nothing known. */
  scope: PackageScope | null;
}

const isTestConfiguration = (name: string) => /^test|Test[A-Z]|Test$/.test(name);
const isRuntimeClasspath = (name: string) =>
  /(?:^r|R)untimeClasspath$/.test(name) && !isTestConfiguration(name);
const isCompileClasspath = (name: string) =>
  /(?:^c|C)ompileClasspath$/.test(name) && !isTestConfiguration(name);

/**
 * The Maven scope a locked module's configurations amount to: on a production compile and runtime class
 * path, compile; runtime only (runtimeOnly), runtime; compile only (compileOnly), provided; test
 * configurations only, test. Other configurations (annotation processors, custom ones) say nothing.
 */
function gradleScope(configurations: readonly string[]): PackageScope | null {
  const runtime = configurations.some(isRuntimeClasspath);
  const compile = configurations.some(isCompileClasspath);
  if (runtime) return compile ? "compile" : "runtime";
  if (compile) return "provided";
  if (configurations.length > 0 && configurations.every(isTestConfiguration)) return "test";
  return null;
}

/**
 * Parses one lockfile. `configuration` is given for the per-configuration format (the file's name);
 * `file` names the input in errors.
 */
export function parseGradleLockfile(text: string, file: string, configuration?: string): LockedModule[] {
  const modules: LockedModule[] = [];
  const lines = text.split(/\r?\n/);
  for (const [index, rawLine] of lines.entries()) {
    const line = rawLine.trim();
    if (line === "" || line.startsWith("#")) continue;
    const [coordinates = "", configurationList] = line.split("=", 2);
    if (coordinates === "empty") continue;
    const parts = coordinates.split(":");
    if (parts.length !== 3 || parts.some((p) => p === "" || /\s/.test(p))) {
      throw new ScanInputError(
        file,
        `not a Gradle lockfile line (expected group:name:version=configurations): ${line.slice(0, 80)}`,
        index + 1,
      );
    }
    const configurations =
      configurationList !== undefined
        ? configurationList
            .split(",")
            .map((c) => c.trim())
            .filter((c) => c !== "")
        : configuration !== undefined
          ? [configuration]
          : [];
    if (configurationList === undefined && configuration === undefined) {
      throw new ScanInputError(file, `missing "=configurations" after ${coordinates}`, index + 1);
    }
    const [groupId, artifactId, version] = parts as [string, string, string];
    modules.push({
      groupId,
      artifactId,
      version,
      configurations,
      dev: false,
      scope: gradleScope(configurations),
    });
  }
  const locksRuntime = modules.some((m) => m.configurations.some(isRuntimeClasspath));
  for (const m of modules) {
    m.dev = locksRuntime
      ? !m.configurations.some(isRuntimeClasspath)
      : m.configurations.length > 0 && m.configurations.every(isTestConfiguration);
  }
  return modules;
}
