/**
 * The upload's published schema states the package naming rules as patterns; the server checks them with
 * npm's and Maven's own rules. Both must agree, or a schema-driven client (and Schemathesis) sends a
 * schema-valid package that is refused, or a refused one the schema allows.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  MAVEN_NAME_PATTERN,
  MAVEN_VERSION_PATTERN,
  NPM_NAME_PATTERN,
  NPM_VERSION_PATTERN,
  packageNameProblem,
  versionProblem,
} from "../../../src/domain/package-names.ts";

const agree = (pattern: string, problem: (value: string) => string | undefined, values: string[]) => {
  const re = new RegExp(pattern);
  for (const value of values) {
    assert.equal(re.test(value), problem(value) === undefined, `${JSON.stringify(value)}: ${problem(value)}`);
  }
};

describe("package naming rules: the schema's patterns and the checks agree", () => {
  it("npm names", () => {
    agree(NPM_NAME_PATTERN, (n) => packageNameProblem("npm", n), [
      "lodash",
      "@babel/core",
      "JSONStream",
      "string-width-cjs",
      "-",
      "-a",
      "@-a/b",
      "@a/-b",
      "@a/.b",
      "@a/_b",
      "@.a/b",
      "a-",
      "a~b",
      "a!b",
      "(x)",
      "@types/node",
      ".hidden",
      "_private",
      "lodash?write=true",
      "lodash#x",
      "../../-/user/x",
      "a b",
      " lodash",
      "<script>",
      "@scope",
      "@/x",
      "@a/b/c",
      "ü",
      "",
    ]);
  });
  it("npm versions", () => {
    agree(NPM_VERSION_PATTERN, (v) => versionProblem("npm", v), [
      "1.0.0",
      "0.0.0-20230101",
      "1.2.3-beta.1+build.5",
      "1.0.0-01",
      "1.0.0-0a",
      "v1.0.0",
      "=1.0.0",
      "1.0",
      "01.0.0",
      "999999999999999.0.0",
      "9999999999999999.0.0",
      "1.0.0+",
      "1.0.0-",
      "../1.0.0",
      "*",
    ]);
  });
  it("Maven names", () => {
    agree(MAVEN_NAME_PATTERN, (n) => packageNameProblem("maven", n), [
      "org.apache.logging.log4j:log4j-core",
      "commons-io:commons-io",
      "a:...",
      "a:.b",
      "org.example:..",
      "org.example:.",
      "org..example:core",
      ".org:core",
      "org.:core",
      "../../etc:passwd",
      "org.example:a?b",
      "a:b:c",
      "ab",
      "a:",
      ":b",
    ]);
  });
  it("Maven versions", () => {
    agree(MAVEN_VERSION_PATTERN, (v) => versionProblem("maven", v), [
      "1.0",
      "2.17.1",
      "1.0-SNAPSHOT",
      "9999.0-empty-to-avoid-conflict-with-guava",
      "...",
      ".",
      "..",
      ".1",
      "1.0/../../x",
      "1 0",
      "a:b",
      'x"y',
      "1.0\u0007",
      "",
    ]);
  });
});
