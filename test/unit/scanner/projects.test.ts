/**
 * One application per scan for Maven modules and Gradle builds (issue 28 point 2; the npm case runs on
 * real software in test/integration/scan-projects.test.ts): the root POM and the modules it names (its
 * profiles' too), the Gradle settings and the projects they include, are the application; other builds
 * below it are skipped with the reason, and read with allProjects.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, describe, it } from "node:test";
import { selectApplication } from "../../../src/scanner/projects.ts";

const pom = (
  artifactId: string,
  modules: string[] = [],
  profileModules: string[] = [],
) => `<?xml version="1.0"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>org.example</groupId><artifactId>${artifactId}</artifactId><version>1.0</version>
  <packaging>${modules.length + profileModules.length > 0 ? "pom" : "jar"}</packaging>
  <modules>${modules.map((m) => `<module>${m}</module>`).join("")}</modules>
  <profiles><profile><id>extra</id><modules>${profileModules.map((m) => `<module>${m}</module>`).join("")}</modules></profile></profiles>
</project>
`;

const roots: string[] = [];
function tree(files: Record<string, string>): { root: string; files: string[] } {
  const root = mkdtempSync(join(tmpdir(), "projects-"));
  roots.push(root);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), text);
  }
  return { root, files: Object.keys(files).sort() };
}

describe("selectApplication", () => {
  after(() => {
    for (const root of roots) rmSync(root, { recursive: true, force: true });
  });

  it("Maven: the root POM and its modules (profiles' included); other POMs skipped with the reason", () => {
    const { root, files } = tree({
      "pom.xml": pom("parent", ["core", "web"], ["extra"]),
      "core/pom.xml": pom("core"),
      "web/pom.xml": pom("web"),
      "extra/pom.xml": pom("extra"),
      "tools/generator/pom.xml": pom("generator"),
      "examples/demo/pom.xml": pom("demo"),
      "core/src/test/resources/fixture/pom.xml": pom("fixture"),
    });
    const selected = selectApplication(root, files, { allProjects: false });
    assert.deepEqual(selected.files, ["core/pom.xml", "extra/pom.xml", "pom.xml", "web/pom.xml"]);
    assert.deepEqual(selected.skipped, [
      {
        path: "core/src/test/resources/fixture/pom.xml",
        reason: "under the src/ folder of core/pom.xml: a test resource or an archetype template, never read",
      },
      {
        path: "examples/demo/pom.xml",
        reason: "an example or test fixture: a project of its own, not the application",
      },
      {
        path: "tools/generator/pom.xml",
        reason: "a project of its own inside the application, not one of the modules of pom.xml",
      },
    ]);
    const all = selectApplication(root, files, { allProjects: true });
    assert.deepEqual(all.files, [
      "core/pom.xml",
      "examples/demo/pom.xml",
      "extra/pom.xml",
      "pom.xml",
      "tools/generator/pom.xml",
      "web/pom.xml",
    ]);
    assert.deepEqual(
      all.skipped.map((s) => s.path),
      ["core/src/test/resources/fixture/pom.xml"],
      "a POM under src/ is a test resource even with allProjects",
    );
  });

  it("Gradle: the settings' included projects; another build below it is skipped", () => {
    const { root, files } = tree({
      "settings.gradle": "rootProject.name = 'shop'\ninclude 'api', ':lib:util'\n",
      "gradle.lockfile": "",
      "api/build.gradle": "",
      "api/gradle.lockfile": "",
      "lib/util/build.gradle": "",
      "lib/util/gradle.lockfile": "",
      "buildSrc-old/settings.gradle": "include 'x'\n",
      "buildSrc-old/gradle.lockfile": "",
    });
    const selected = selectApplication(root, files, { allProjects: false });
    assert.deepEqual(selected.files, [
      "api/build.gradle",
      "api/gradle.lockfile",
      "gradle.lockfile",
      "lib/util/build.gradle",
      "lib/util/gradle.lockfile",
      "settings.gradle",
    ]);
    assert.deepEqual(selected.skipped, [
      {
        path: "buildSrc-old/gradle.lockfile",
        reason:
          "a project of its own inside the application, not one of the included projects of gradle.lockfile",
      },
    ]);
    assert.equal(selectApplication(root, files, { allProjects: true }).files.length, files.length);
  });

  it("no project at the scanned folder: the nearest projects below it are the application", () => {
    const { root, files } = tree({
      "frontend/package.json": JSON.stringify({ name: "front" }),
      "frontend/package-lock.json": JSON.stringify({ lockfileVersion: 3, packages: {} }),
      "backend/pom.xml": pom("back"),
      "backend/examples/pom.xml": pom("example"),
    });
    const selected = selectApplication(root, files, { allProjects: false });
    assert.deepEqual(selected.files, [
      "backend/pom.xml",
      "frontend/package-lock.json",
      "frontend/package.json",
    ]);
    assert.deepEqual(
      selected.skipped.map((s) => s.path),
      ["backend/examples/pom.xml"],
    );
  });
});
