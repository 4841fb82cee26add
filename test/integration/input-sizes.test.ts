/**
 * Inputs too large for `push(...array)` (issue 28 point 4, the audit's size findings): a 150,000-entry
 * lockfile, a 200,000-package dependency ring, a 150,000-component SBOM and an OSV record listing
 * 200,000 versions are read or imported without `Maximum call stack size exceeded`. Spreading that many
 * arguments overflows V8's stack, which no test of ordinary size shows.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { createRegistryFetcher } from "../../src/scanner/registry/cached-fetch.ts";
import { INPUT_READERS, type ScanResult, scanPath } from "../../src/scanner/scan.ts";
import { openStore } from "../../src/store/database.ts";
import { runCli } from "../support/cli.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

async function scan(path: string): Promise<ScanResult> {
  return scanPath(path, {
    readers: INPUT_READERS,
    fetcher: createRegistryFetcher({ cacheDir: "/nonexistent-cache", offline: true }),
    offline: true,
    npmRegistryUrl: "https://registry.npmjs.org",
    mavenRepositoryUrl: "https://repo.maven.apache.org/maven2",
    mavenLocalRepository: "/nonexistent-m2",
    progress: () => {},
  });
}

const name = (i: number) => `pkg-${i}`;

/** A package-lock.json v3 of `count` packages; `next(i)` is the package i depends on (none when undefined). */
function writeLockfile(dir: string, count: number, next: (i: number) => number | undefined): void {
  mkdirSync(dir, { recursive: true });
  const packages: Record<string, unknown> = {
    "": { name: "big", version: "1.0.0", dependencies: { [name(0)]: "1.0.0" } },
  };
  for (let i = 0; i < count; i++) {
    const dependency = next(i);
    packages[`node_modules/${name(i)}`] = {
      version: "1.0.0",
      resolved: `https://registry.npmjs.org/${name(i)}/-/${name(i)}-1.0.0.tgz`,
      ...(dependency === undefined ? {} : { dependencies: { [name(dependency)]: "1.0.0" } }),
    };
  }
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name: "big", version: "1.0.0", dependencies: { [name(0)]: "1.0.0" } }),
  );
  writeFileSync(
    join(dir, "package-lock.json"),
    JSON.stringify({ name: "big", version: "1.0.0", lockfileVersion: 3, requires: true, packages }),
  );
}

describe("inputs too large to spread into one call", () => {
  let scratch: string;
  before(() => {
    scratch = mkdtempSync(join(tmpdir(), "input-sizes-"));
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  it("a 150,000-entry lockfile: every package read", async () => {
    const dir = join(scratch, "flat");
    writeLockfile(dir, 150_000, () => undefined);
    const result = await scan(dir);
    assert.equal(result.packages.length, 150_000);
    assert.deepEqual(result.warnings, []);
  });

  it("a 200,000-package dependency ring: every package read, all production", async () => {
    const dir = join(scratch, "ring");
    writeLockfile(dir, 200_000, (i) => (i + 1) % 200_000);
    const result = await scan(dir);
    assert.equal(result.packages.length, 200_000);
    assert.ok(result.packages.every((p) => !p.dev));
    assert.deepEqual(
      result.packages.filter((p) => p.direct).map((p) => p.name),
      [name(0)],
    );
  });

  it("a CycloneDX SBOM of 150,000 components: every package read", async () => {
    const dir = join(scratch, "sbom");
    mkdirSync(dir);
    const components = Array.from({ length: 150_000 }, (_, i) => ({
      type: "library",
      "bom-ref": `pkg:npm/${name(i)}@1.0.0`,
      name: name(i),
      version: "1.0.0",
      purl: `pkg:npm/${name(i)}@1.0.0`,
    }));
    writeFileSync(
      join(dir, "bom.cdx.json"),
      JSON.stringify({ bomFormat: "CycloneDX", specVersion: "1.6", version: 1, components }),
    );
    const result = await scan(dir);
    assert.equal(result.packages.length, 150_000);
  });
});

describe("an OSV record listing 200,000 versions", () => {
  let store: TestStore;
  let scratch: string;
  before(async () => {
    store = await createTestStore("sqlite");
    scratch = mkdtempSync(join(tmpdir(), "input-sizes-osv-"));
  });
  after(async () => {
    await store?.drop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("is imported: the advisory names the package, with every listed version", async () => {
    const osv = fileURLToPath(new URL("../fixtures/osv/GHSA-jfh8-c2jp-5v3q.json", import.meta.url));
    const record = JSON.parse(readFileSync(osv, "utf8")) as Record<string, unknown>;
    // The real record's ranges, plus 200,000 listed versions none of them covers (as OSV exports list them).
    record.affected = [
      {
        package: { ecosystem: "Maven", name: "org.example:huge" },
        versions: Array.from({ length: 200_000 }, (_, i) => `9.${Math.floor(i / 1000)}.${i % 1000}`),
      },
    ];
    const file = join(scratch, "GHSA-huge.json");
    writeFileSync(file, JSON.stringify(record));
    const result = await runCli(["advisories", "import", file, "--json"], {
      DATABASE_URL: store.databaseUrl ?? "",
      IMAGING_DATA_DIR: store.dataDir,
    });
    assert.equal(result.code, 0, result.stderr);
    assert.equal((JSON.parse(result.stdout) as { imported: number }).imported, 1);
    const handle = await openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile });
    try {
      const listed = await handle.db
        .selectFrom("vulnerability_ranges as r")
        .innerJoin("vulnerabilities as v", "v.id", "r.vulnerability_id")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("v.cve_id", "=", "CVE-2021-44228")
        .executeTakeFirstOrThrow();
      assert.equal(Number(listed.n), 200_000);
    } finally {
      await handle.close();
    }
  });
});
