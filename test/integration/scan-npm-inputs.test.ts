/**
 * The npm and SBOM readers on real public software (firebase-tools 8.4.0, see test/support/scan-subjects.ts),
 * checked against what the package managers themselves list for the same lockfiles.
 */
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import { createRegistryFetcher } from "../../src/scanner/registry/cached-fetch.ts";
import { INPUT_READERS, type ScanResult, scanPath } from "../../src/scanner/scan.ts";
import {
  type FirebaseSubject,
  firebaseTools,
  treePackages,
  type WorkspaceSubject,
  workspaceMonorepo,
  yarnBerryProductionInstall,
  yarnClassicProductionInstall,
  yarnInfoClosure,
  yarnInfoPackages,
  yarnWorkspaceMonorepo,
} from "../support/scan-subjects.ts";

async function scan(path: string, extra: { lockfile?: string } = {}): Promise<ScanResult> {
  return scanPath(path, {
    ...extra,
    readers: INPUT_READERS,
    fetcher: createRegistryFetcher({ cacheDir: "/nonexistent-cache", offline: true }),
    offline: true,
    npmRegistryUrl: "https://registry.npmjs.org",
    mavenRepositoryUrl: "https://repo.maven.apache.org/maven2",
    mavenLocalRepository: "/nonexistent-m2",
    progress: () => {},
  });
}

const all = (result: ScanResult) => new Set(result.packages.map((p) => `${p.name}@${p.version}`));
const production = (result: ScanResult) =>
  new Set(result.packages.filter((p) => !p.dev).map((p) => `${p.name}@${p.version}`));

/** Set equality with the differences spelled out when it fails. */
function assertSameSet(actual: Set<string>, expected: Set<string>, what: string): void {
  const missing = [...expected].filter((x) => !actual.has(x));
  const extra = [...actual].filter((x) => !expected.has(x));
  assert.deepEqual({ missing, extra }, { missing: [], extra: [] }, what);
  assert.ok(expected.size > 0, `${what}: the oracle lists nothing`);
}

describe("npm lockfiles and SBOMs of firebase-tools 8.4.0, against the package managers' own listings", () => {
  let subject: FirebaseSubject;
  before(() => {
    subject = firebaseTools();
  });

  for (const format of ["v1", "v2", "v3"] as const) {
    it(`package-lock.json ${format}: the packages and versions of npm ls --all, dev ones as npm ls --omit=dev says`, async () => {
      const result = await scan(subject.npm[format]);
      assert.deepEqual(result.inputs, [{ reader: "npm", file: "package-lock.json" }]);
      assertSameSet(all(result), treePackages(`${subject.npm[format]}/npm-ls.json`), "all packages");
      assertSameSet(
        production(result),
        treePackages(`${subject.npm[format]}/npm-ls-prod.json`),
        "production packages",
      );
      const lodash = result.packages.filter((p) => p.name === "lodash");
      assert.deepEqual(
        lodash.map((p) => [p.version, p.dev, p.direct]),
        [["4.17.15", false, true]],
      );
      assert.deepEqual(result.warnings, []);
    });
  }

  it("a lockfile given as the path itself is read with the package.json beside it", async () => {
    const result = await scan(`${subject.npm.v1}/package-lock.json`);
    assert.deepEqual(result.inputs, [{ reader: "npm", file: "package-lock.json" }]);
    assertSameSet(all(result), treePackages(`${subject.npm.v1}/npm-ls.json`), "all packages");
    const lodash = result.packages.find((p) => p.name === "lodash");
    assert.deepEqual(lodash && [lodash.dev, lodash.direct], [false, true]);
  });

  it("npm-shrinkwrap.json wins over the package-lock.json beside it, as npm ls says", async () => {
    const result = await scan(subject.npm.shrinkwrap);
    assertSameSet(all(result), treePackages(`${subject.npm.shrinkwrap}/npm-ls.json`), "all packages");
    assert.ok(!result.packages.some((p) => p.name === "left-pad"), "the decoy package-lock.json was read");
  });

  it("the published package: templates' package.json files are not dependencies of the application", async () => {
    const result = await scan(subject.published);
    assert.deepEqual(
      result.inputs.map((i) => i.file),
      ["package-lock.json"],
    );
    assertSameSet(all(result), treePackages(`${subject.published}/npm-ls.json`), "all packages");
  });

  for (const format of ["v6", "v9"] as const) {
    it(`pnpm-lock.yaml ${format}: the packages and versions of pnpm ls, production ones as pnpm ls --prod says`, async () => {
      const dir = subject.pnpm[format];
      const result = await scan(dir);
      assert.deepEqual(result.inputs, [{ reader: "npm", file: "pnpm-lock.yaml" }]);
      assertSameSet(all(result), treePackages(`${dir}/pnpm-ls.json`), "all packages");
      assertSameSet(production(result), treePackages(`${dir}/pnpm-ls-prod.json`), "production packages");
    });
  }

  it("yarn.lock v1 (imported by yarn 1 from npm's lockfile): the packages and versions npm ls lists", async () => {
    const result = await scan(subject.yarn.classic);
    assert.deepEqual(result.inputs, [{ reader: "npm", file: "yarn.lock" }]);
    assertSameSet(all(result), treePackages(`${subject.npm.v1}/npm-ls.json`), "all packages");
    const lodash = result.packages.find((p) => p.name === "lodash");
    assert.deepEqual(lodash && [lodash.version, lodash.dev, lodash.direct], ["4.17.15", false, true]);
    // devDependencies nothing in production needs are flagged dev.
    const mocha = result.packages.find((p) => p.name === "mocha");
    assert.deepEqual(mocha && [mocha.dev, mocha.direct], [true, true]);
  });

  it("yarn.lock v1: production packages are what yarn install --production installs", async () => {
    const result = await scan(subject.yarn.classic);
    const { installed } = yarnClassicProductionInstall();
    // yarn skips optional packages made for other platforms; npm's lockfile of the same tree says which.
    const npmLock = JSON.parse(readFileSync(`${subject.npm.v3}/package-lock.json`, "utf8")) as {
      packages: Record<string, { version?: string; os?: string[] }>;
    };
    const incompatible = Object.entries(npmLock.packages)
      .filter(([, entry]) => entry.os && !entry.os.includes(process.platform))
      .map(([path, entry]) => `${path.slice(path.lastIndexOf("node_modules/") + 13)}@${entry.version}`);
    assert.ok(incompatible.length > 0, "fsevents (darwin only) is expected in this tree");
    const locked = all(result);
    // Copies bundled inside other packages' tarballs are installed without being in the lockfile.
    const expected = new Set(installed.filter((p) => locked.has(p)));
    // Those (fsevents) are in the inventory all the same: the lockfile pins them.
    const actual = new Set([...production(result)].filter((p) => !incompatible.includes(p)));
    assertSameSet(actual, expected, "production packages");
  });

  it("one lockfile per project: package-lock.json over a stale yarn.lock, packageManager and --lockfile choose", async () => {
    // firebase-tools locked by npm, with the yarn.lock yarn 4 wrote for the same package.json left beside it.
    const dir = mkdtempSync(join(tmpdir(), "two-lockfiles-"));
    try {
      const manifest = JSON.parse(readFileSync(`${subject.npm.v3}/package.json`, "utf8")) as Record<
        string,
        unknown
      >;
      writeFileSync(join(dir, "package.json"), JSON.stringify(manifest));
      copyFileSync(`${subject.npm.v3}/package-lock.json`, join(dir, "package-lock.json"));
      copyFileSync(`${subject.yarn.berry}/yarn.lock`, join(dir, "yarn.lock"));
      const npmPackages = treePackages(`${subject.npm.v3}/npm-ls.json`);
      const yarnPackages = yarnInfoPackages(`${subject.yarn.berry}/yarn-info.ndjson`);

      const byDefault = await scan(dir);
      assert.deepEqual(byDefault.inputs, [{ reader: "npm", file: "package-lock.json" }]);
      assertSameSet(all(byDefault), npmPackages, "all packages");
      assert.deepEqual(byDefault.warnings, [
        {
          file: "yarn.lock",
          message:
            "not read: package-lock.json is the project's lockfile (no packageManager in package.json: the " +
            "first present of npm-shrinkwrap.json, package-lock.json, pnpm-lock.yaml, yarn.lock is read); " +
            "--lockfile chooses another",
        },
      ]);

      const chosen = await scan(dir, { lockfile: join(dir, "yarn.lock") });
      assert.deepEqual(chosen.inputs, [{ reader: "npm", file: "yarn.lock" }]);
      assertSameSet(all(chosen), yarnPackages, "all packages");
      assert.deepEqual(
        chosen.warnings.map((w) => [w.file, w.message.split(" (")[0]]),
        [["package-lock.json", "not read: yarn.lock is the project's lockfile"]],
      );

      writeFileSync(join(dir, "package.json"), JSON.stringify({ ...manifest, packageManager: "yarn@4.9.1" }));
      const managed = await scan(dir);
      assert.deepEqual(managed.inputs, [{ reader: "npm", file: "yarn.lock" }]);
      assertSameSet(all(managed), yarnPackages, "all packages");
      assert.match(managed.warnings[0]?.message ?? "", /package\.json's packageManager is yarn/);

      await assert.rejects(
        scan(dir, { lockfile: join(dir, "package.json") }),
        /--lockfile names no lockfile/,
      );
      await assert.rejects(scan(dir, { lockfile: join(dir, "pnpm-lock.yaml") }), /--lockfile: no such file/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("yarn.lock of yarn 4 (Berry): the packages and versions yarn info --all --recursive lists", async () => {
    const result = await scan(subject.yarn.berry);
    assertSameSet(all(result), yarnInfoPackages(`${subject.yarn.berry}/yarn-info.ndjson`), "all packages");
    const mocha = result.packages.find((p) => p.name === "mocha");
    assert.deepEqual(mocha && [mocha.dev, mocha.direct], [true, true]);
  });

  it("yarn.lock of yarn 4: what yarn workspaces focus --production installs is production here", async () => {
    const result = await scan(subject.yarn.berry);
    const { installed } = yarnBerryProductionInstall();
    const locked = all(result);
    const ours = production(result);
    // No package yarn installs for production may be flagged dev (bundled copies are not in the lockfile).
    assert.ok(installed.length > 500, `yarn installed ${installed.length} packages`);
    assert.deepEqual(
      installed.filter((p) => locked.has(p) && !ours.has(p)),
      [],
      "installed for production but flagged dev",
    );
    // The other way round, only what no lockfile entry lists as a dependency: node-gyp and its own
    // dependencies (yarn adds it to packages that build native code; not installed without scripts)
    // and fsevents (darwin only).
    const implicit = yarnInfoClosure(`${subject.yarn.berry}/yarn-info.ndjson`, "node-gyp");
    const extra = [...ours].filter(
      (p) => !installed.includes(p) && !implicit.has(p) && !p.startsWith("fsevents@"),
    );
    assert.deepEqual(extra, []);
  });

  for (const [label, file] of [
    ["CycloneDX 1.4 (@cyclonedx/cyclonedx-npm)", "cyclonedx14"],
    ["CycloneDX 1.6 (@cyclonedx/cyclonedx-npm)", "cyclonedx16"],
    ["SPDX 2.3 (npm sbom)", "spdx"],
  ] as const) {
    it(`${label}: the packages and versions npm ls lists, from their package URLs, dev ones too`, async () => {
      const result = await scan(subject.sbom[file]);
      assert.equal(result.inputs[0]?.reader, "sbom");
      assertSameSet(all(result), treePackages(`${subject.published}/npm-ls.json`), "all packages");
      assertSameSet(
        production(result),
        treePackages(`${subject.published}/npm-ls-prod.json`),
        "production packages",
      );
      assert.ok(result.packages.every((p) => p.ecosystem === "npm"));
    });
  }
});

describe("workspaces (a monorepo of two workspaces on real registry packages)", () => {
  let subject: WorkspaceSubject;
  before(() => {
    subject = workspaceMonorepo();
  });

  it("npm workspaces: every workspace's packages as npm ls lists them; fixtures and node_modules are not inputs", async () => {
    const result = await scan(subject.npm);
    assert.deepEqual(result.inputs, [{ reader: "npm", file: "package-lock.json" }]);
    assertSameSet(all(result), treePackages(`${subject.npm}/npm-ls.json`), "all packages");
    assertSameSet(production(result), treePackages(`${subject.npm}/npm-ls-prod.json`), "production packages");
    assert.ok(!result.packages.some((p) => p.name.startsWith("@shop/")), "workspaces are the application");
    assert.deepEqual(
      result.packages.filter((p) => p.name === "lodash").map((p) => p.version),
      ["4.17.15"],
    );
    const isNumber = result.packages.find((p) => p.name === "is-number");
    assert.deepEqual(isNumber && [isNumber.dev, isNumber.direct], [true, true]);
  });

  it("yarn 1 workspaces: every workspace's packages as yarn installs them, production ones as --production does", async () => {
    const yarn = yarnWorkspaceMonorepo();
    const result = await scan(yarn.dir);
    assert.deepEqual(result.inputs, [{ reader: "npm", file: "yarn.lock" }]);
    assertSameSet(all(result), new Set(yarn.installed), "all packages");
    assertSameSet(production(result), new Set(yarn.production), "production packages");
  });

  it("pnpm workspaces: every importer's packages as pnpm ls --recursive lists them", async () => {
    const result = await scan(subject.pnpm);
    assert.deepEqual(result.inputs, [{ reader: "npm", file: "pnpm-lock.yaml" }]);
    assertSameSet(all(result), treePackages(`${subject.pnpm}/pnpm-ls.json`), "all packages");
    assertSameSet(
      production(result),
      treePackages(`${subject.pnpm}/pnpm-ls-prod.json`),
      "production packages",
    );
  });
});
