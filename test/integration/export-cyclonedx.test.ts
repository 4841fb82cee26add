import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { ingestAnalysis } from "../../src/domain/package-facts.ts";
import { openStore, type StoreHandle } from "../../src/store/database.ts";
import { runCli } from "../support/cli.ts";
import { ensureCycloneDxPython, READ_CYCLONEDX } from "../support/cyclonedx-python.ts";
import { validateCycloneDx as validate } from "../support/cyclonedx-schema.ts";
import { lodashAnalysis } from "../support/lodash-analysis.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

/**
 * `imaging export cyclonedx` on an analysis with objects and references (shaped as the code extractors
 * write them) and real GHSA records naming affected functions (test/fixtures/osv/SOURCES.md). Every
 * document is checked against the CycloneDX 1.6 JSON schema (test/support/cyclonedx-schema.ts).
 */
const OSV = fileURLToPath(new URL("../fixtures/osv/", import.meta.url));
const RECORDS = [
  join(OSV, "lodash-template-2022", "GHSA-35jh-r3h4-6jhm.json"),
  join(OSV, "affected-functions", "GHSA-jf85-cpcp-j695.json"),
  join(OSV, "affected-functions", "GHSA-4xc9-xhrj-v574.json"),
  join(OSV, "GHSA-jfh8-c2jp-5v3q.json"),
];

type Bom = {
  bomFormat: string;
  specVersion: string;
  serialNumber: string;
  metadata: { component: { name: string }; properties: { name: string; value: string }[] };
  components: {
    "bom-ref": string;
    group?: string;
    name: string;
    version: string;
    purl: string;
    evidence?: {
      occurrences: { location: string; symbol: string; additionalContext: string }[];
      callstack: { frames: { package?: string; module: string; function?: string; parameters?: string[] }[] };
    };
    properties?: { name: string; value: string }[];
  }[];
  dependencies: { ref: string; dependsOn: string[] }[];
  vulnerabilities: {
    id: string;
    source: { name: string; url: string };
    references?: { id: string; source: { name: string } }[];
    ratings: { score?: number; severity: string }[];
    affects: { ref: string; versions: { version: string; status: string }[] }[];
    recommendation?: string;
    properties?: { name: string; value: string }[];
  }[];
};

for (const kind of STORE_KINDS) {
  describe(`imaging export cyclonedx on ${kind}`, () => {
    let store: TestStore;
    let handle: StoreHandle;
    let work: string;
    const env = () => ({ DATABASE_URL: store.databaseUrl ?? "", IMAGING_DATA_DIR: store.dataDir });
    const exportBom = async (...args: string[]) => {
      const result = await runCli(["export", "cyclonedx", "--app", "webshop", ...args], env());
      assert.equal(result.code, 0, result.stderr);
      const bom = JSON.parse(result.stdout) as Bom;
      assert.ok(validate(bom), JSON.stringify(validate.errors?.slice(0, 3)));
      return bom;
    };
    const refused = async (args: string[], message: RegExp) => {
      const result = await runCli(["export", "cyclonedx", ...args], env());
      assert.notEqual(result.code, 0);
      assert.equal(result.stdout, "");
      const lines = result.stderr.trim().split("\n");
      assert.match(lines[0] ?? "", message);
      assert.doesNotMatch(result.stderr, /\n\s+at /, "no stack trace");
      return lines;
    };

    before(async () => {
      work = mkdtempSync(join(tmpdir(), "export-cyclonedx-"));
      store = await createTestStore(kind);
      const imported = await runCli(["advisories", "import", ...RECORDS], env());
      assert.equal(imported.code, 0, imported.stderr);
      handle = await openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile });
      // Two analyses: the later one no longer calls lodash.template.
      await ingestAnalysis(handle.db, "webshop", lodashAnalysis("2024-01-15T10:00:00Z", true) as never, {
        description: "A shop calling lodash",
      });
      await ingestAnalysis(handle.db, "webshop", lodashAnalysis("2024-06-01T10:00:00Z", false) as never);
    });
    after(async () => {
      await handle?.close();
      await store?.drop();
      rmSync(work, { recursive: true, force: true });
    });

    it("components: every package version with its purl (npm scope and Maven groupId as group), by ecosystem and name", async () => {
      const bom = await exportBom();
      assert.equal(bom.bomFormat, "CycloneDX");
      assert.equal(bom.specVersion, "1.6");
      assert.match(bom.serialNumber, /^urn:uuid:[0-9a-f-]{36}$/);
      assert.equal(bom.metadata.component.name, "webshop");
      assert.deepEqual(bom.metadata.properties, [
        { name: "imaging:analyzedAt", value: "2024-06-01T10:00:00Z" },
      ]);
      assert.deepEqual(
        bom.components.map((c) => [c.group ?? null, c.name, c.version, c.purl]),
        [
          [
            "org.apache.logging.log4j",
            "log4j-core",
            "2.14.1",
            "pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1",
          ],
          ["@babel", "traverse", "7.22.20", "pkg:npm/%40babel/traverse@7.22.20"],
          [null, "lodash", "4.17.4", "pkg:npm/lodash@4.17.4"],
          [null, "lodash-es", "4.17.20", "pkg:npm/lodash-es@4.17.20"],
          [null, "lodash.defaultsdeep", "4.6.0", "pkg:npm/lodash.defaultsdeep@4.6.0"],
        ],
      );
      assert.ok(bom.components.every((c) => c["bom-ref"] === c.purl));
      assert.deepEqual(bom.dependencies[0]?.dependsOn.sort(), bom.components.map((c) => c.purl).sort());
    });

    it("vulnerabilities: ids, GHSA aliases, ratings, the affected components and the upgrade", async () => {
      const bom = await exportBom();
      assert.deepEqual(
        bom.vulnerabilities.map((v) => v.id),
        ["CVE-2018-16487", "CVE-2019-10744", "CVE-2021-23337", "CVE-2021-44228"],
      );
      const log4shell = bom.vulnerabilities.find((v) => v.id === "CVE-2021-44228");
      assert.deepEqual(log4shell?.source, {
        name: "NVD",
        url: "https://nvd.nist.gov/vuln/detail/CVE-2021-44228",
      });
      assert.deepEqual(
        log4shell?.references?.map((r) => [r.id, r.source.name]),
        [["GHSA-jfh8-c2jp-5v3q", "GitHub"]],
      );
      assert.deepEqual(log4shell?.ratings, [{ score: 10, severity: "critical" }]);
      assert.deepEqual(log4shell?.affects, [
        {
          ref: "pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1",
          versions: [{ version: "2.14.1", status: "affected" }],
        },
      ]);
      const defaultsDeep = bom.vulnerabilities.find((v) => v.id === "CVE-2019-10744");
      assert.deepEqual(defaultsDeep?.affects.map((a) => a.ref).sort(), [
        "pkg:npm/lodash.defaultsdeep@4.6.0",
        "pkg:npm/lodash@4.17.4",
      ]);
      // No severity in the record's vector list, GitHub's label HIGH: a rating without score.
      assert.deepEqual(bom.vulnerabilities.find((v) => v.id === "CVE-2018-16487")?.ratings, [
        { severity: "high" },
      ]);
    });

    it("evidence: an occurrence per reference, a call stack (callee, then caller) preferring an affected function", async () => {
      const bom = await exportBom("--date", "2024-02-01T00:00:00Z");
      assert.deepEqual(bom.metadata.properties, [
        { name: "imaging:analyzedAt", value: "2024-01-15T10:00:00Z" },
      ]);
      const lodash = bom.components.find((c) => c.name === "lodash");
      assert.deepEqual(
        lodash?.evidence?.occurrences.map((o) => `${o.location} -> ${o.symbol}`),
        [
          "src/config.js.config -> lodash.defaultsDeep",
          "src/util.js.util -> lodash.get",
          "src/config.js.config -> lodash.merge",
          "src/store.js.store -> lodash.set",
          "src/render.js.render -> lodash.template",
        ],
      );
      assert.equal(
        lodash?.evidence?.occurrences[0]?.additionalContext,
        "JavaScript Function src/config.js.config refers to JavaScript Function lodash.defaultsDeep",
      );
      assert.deepEqual(lodash?.evidence?.callstack.frames, [
        { package: "lodash", module: "lodash", function: "defaultsDeep" },
        { module: "src/config.js", function: "config" },
      ]);
      const log4j = bom.components.find((c) => c.name === "log4j-core");
      assert.deepEqual(log4j?.evidence?.callstack.frames, [
        {
          package: "org.apache.logging.log4j.core",
          module: "org.apache.logging.log4j.core.LoggerContext",
          function: "getContext",
          parameters: ["getContext(boolean) return org.apache.logging.log4j.core.LoggerContext"],
        },
        { package: "com.example.web", module: "com.example.web.Logs", function: "init" },
      ]);
      assert.equal(bom.components.find((c) => c.name === "traverse")?.evidence, undefined);
      const template = bom.vulnerabilities.find((v) => v.id === "CVE-2021-23337");
      assert.deepEqual(template?.properties, [
        { name: "imaging:affectedFunction", value: "lodash: lodash.template" },
        { name: "imaging:reachesAffectedFunction", value: "lodash@4.17.4: true" },
        { name: "imaging:reachingReference", value: "src/render.js.render -> lodash.template" },
        { name: "imaging:affectedFunction", value: "lodash-es: lodash.template" },
        { name: "imaging:reachesAffectedFunction", value: "lodash-es@4.17.20: true" },
        { name: "imaging:reachingReference", value: "src/view.js.view -> lodash-es.template" },
      ]);
      // The latest analysis no longer calls lodash.template.
      const latest = await exportBom();
      const latestTemplate = latest.vulnerabilities.find((v) => v.id === "CVE-2021-23337");
      assert.ok(latestTemplate?.properties?.some((p) => p.value === "lodash@4.17.4: false"));
      assert.ok(
        !latest.components
          .find((c) => c.name === "lodash")
          ?.evidence?.occurrences.some((o) => o.symbol === "lodash.template"),
      );
    });

    it("--output writes the file whole and says so on stderr", async () => {
      const file = join(work, "webshop.cdx.json");
      const result = await runCli(["export", "cyclonedx", "--app", "webshop", "--output", file], env());
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, "");
      assert.match(result.stderr, /written to .*webshop\.cdx\.json: 5 components, 4 vulnerabilities/);
      const bom = JSON.parse(readFileSync(file, "utf8")) as Bom;
      assert.ok(validate(bom));
      assert.deepEqual(readdirSync(work), ["webshop.cdx.json"], "no temporary file left");
    });

    it("reads back: imaging scan of the exported SBOM finds the same package versions", async () => {
      const bomFile = join(work, "roundtrip.cdx.json");
      const exported = await runCli(["export", "cyclonedx", "--app", "webshop", "--output", bomFile], env());
      assert.equal(exported.code, 0, exported.stderr);
      const analysisFile = join(work, "roundtrip-analysis.json");
      const scanned = await runCli(
        ["scan", bomFile, "--app", "copy", "--offline", "--output", analysisFile],
        env(),
      );
      assert.equal(scanned.code, 0, scanned.stderr);
      const document = JSON.parse(readFileSync(analysisFile, "utf8")) as {
        packages: { ecosystem: string; name: string; version: string }[];
      };
      assert.deepEqual(
        document.packages.map((p) => `${p.ecosystem}:${p.name}@${p.version}`).sort(),
        lodashAnalysis("2024-06-01T10:00:00Z", false)
          .packages.map((p) => `${p.ecosystem}:${p.name}@${p.version}`)
          .sort(),
      );
      rmSync(bomFile);
      rmSync(analysisFile);
    });

    it("cyclonedx-python-lib validates it and reads components, evidence and vulnerabilities", {
      timeout: 300_000,
    }, async () => {
      const python = ensureCycloneDxPython();
      const file = join(work, "python.cdx.json");
      const exported = await runCli(
        ["export", "cyclonedx", "--app", "webshop", "--date", "2024-02-01T00:00:00Z", "--output", file],
        env(),
      );
      assert.equal(exported.code, 0, exported.stderr);
      const read = JSON.parse(execFileSync(python, [READ_CYCLONEDX, file], { encoding: "utf8" })) as {
        error: string | null;
        components: { purl: string; occurrences: string[]; frames: (string | null)[][] }[];
        vulnerabilities: { id: string; affects: string[] }[];
      };
      rmSync(file);
      assert.equal(read.error, null);
      assert.deepEqual(
        read.components.map((c) => c.purl),
        [
          "pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1",
          "pkg:npm/%40babel/traverse@7.22.20",
          "pkg:npm/lodash-es@4.17.20",
          "pkg:npm/lodash.defaultsdeep@4.6.0",
          "pkg:npm/lodash@4.17.4",
        ],
      );
      const lodash = read.components.find((c) => c.purl === "pkg:npm/lodash@4.17.4");
      assert.deepEqual(lodash?.occurrences, [
        "src/config.js.config -> lodash.defaultsDeep",
        "src/config.js.config -> lodash.merge",
        "src/render.js.render -> lodash.template",
        "src/store.js.store -> lodash.set",
        "src/util.js.util -> lodash.get",
      ]);
      assert.deepEqual(lodash?.frames, [
        ["lodash", "lodash", "defaultsDeep"],
        [null, "src/config.js", "config"],
      ]);
      assert.deepEqual(read.vulnerabilities, [
        { id: "CVE-2018-16487", affects: ["pkg:npm/lodash@4.17.4"] },
        { id: "CVE-2019-10744", affects: ["pkg:npm/lodash.defaultsdeep@4.6.0", "pkg:npm/lodash@4.17.4"] },
        { id: "CVE-2021-23337", affects: ["pkg:npm/lodash-es@4.17.20", "pkg:npm/lodash@4.17.4"] },
        { id: "CVE-2021-44228", affects: ["pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1"] },
      ]);
    });

    it("bad input: one readable line, nothing written", async () => {
      await refused(["--app", "nowhere"], /^imaging: no application named 'nowhere'$/);
      await refused(
        ["--app", "webshop", "--date", "yesterday"],
        /^imaging: --date must be an ISO 8601 date-time/,
      );
      await refused(
        ["--app", "webshop", "--date", "2023-01-01T00:00:00Z"],
        /^imaging: application 'webshop' has no analysis at or before 2023-01-01T00:00:00/,
      );
      await refused([], /required option '--app <name>' not specified/);
      const missing = join(work, "no-such-dir", "bom.json");
      await refused(
        ["--app", "webshop", "--output", missing],
        /^imaging: cannot write .*bom\.json: the directory .* does not exist$/,
      );
      mkdirSync(join(work, "a-directory"));
      await refused(
        ["--app", "webshop", "--output", join(work, "a-directory")],
        /^imaging: cannot write .*a-directory: /,
      );
      assert.equal(existsSync(missing), false);
      assert.deepEqual(readdirSync(join(work, "a-directory")), []);
    });
  });
}
