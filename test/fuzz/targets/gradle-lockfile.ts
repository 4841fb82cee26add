/** gradle.lockfile (Gradle 6+) and the older per-configuration gradle/dependency-locks/*.lockfile. */
import { parseGradleLockfile } from "../../../src/scanner/maven/gradle-lockfile.ts";
import { expectScanInputError, utf8 } from "./kit.ts";

const FILE = "gradle.lockfile";
const LEGACY = "gradle/dependency-locks/compileClasspath.lockfile";

export function fuzz(data: Buffer): void {
  const text = utf8(data);
  try {
    parseGradleLockfile(text, FILE);
  } catch (error) {
    expectScanInputError(error, FILE);
  }
  try {
    parseGradleLockfile(text, LEGACY, "compileClasspath");
  } catch (error) {
    expectScanInputError(error, LEGACY);
  }
}
