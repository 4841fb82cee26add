import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { Zip, ZipDeflate, zipSync } from "fflate";
import { loadPublishedVersions } from "../../src/domain/package-facts.ts";
import { openStore, type StoreHandle } from "../../src/store/database.ts";
import { findVulnerability } from "../../src/store/vulnerabilities.ts";
import { runCli } from "../support/cli.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

const OSV = fileURLToPath(new URL("../fixtures/osv/", import.meta.url));
const LOG4SHELL = join(OSV, "GHSA-jfh8-c2jp-5v3q.json");
const LODASH_PP = join(OSV, "GHSA-p6mc-m468-83gw.json");
const TEMPLATE_2022 = join(OSV, "lodash-template-2022", "GHSA-35jh-r3h4-6jhm.json");
const TEMPLATE_2025 = join(OSV, "lodash-template-2025", "GHSA-35jh-r3h4-6jhm.json");
const record = (file: string) => JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;

interface Counts {
  imported: number;
  updated: number;
  unchanged: number;
  skipped: number;
  withdrawn: number;
  malformed: { file: string; reason: string }[];
}

for (const kind of STORE_KINDS) {
  describe(`imaging advisories import on ${kind}`, () => {
    let store: TestStore;
    let work: string;
    let handle: StoreHandle;
    const env = () => ({ DATABASE_URL: store.databaseUrl ?? "", IMAGING_DATA_DIR: store.dataDir });
    const importJson = async (...paths: string[]) => {
      const result = await runCli(["advisories", "import", ...paths, "--json"], env());
      assert.equal(result.code, 0, result.stderr);
      return { counts: JSON.parse(result.stdout) as Counts, stderr: result.stderr };
    };
    /** Versions of a package (name order) with the advisories affecting each, as the REST API reads them. */
    const affectedVersions = async (name: string) => {
      const rows = await handle.db
        .selectFrom("package_versions as pv")
        .innerJoin("packages as p", "p.id", "pv.package_id")
        .leftJoin("version_vulnerabilities as vv", "vv.package_version_id", "pv.id")
        .leftJoin("vulnerabilities as v", "v.id", "vv.vulnerability_id")
        .select(["pv.version", "pv.rank", "v.cve_id"])
        .where("p.name", "=", name)
        .orderBy("pv.rank")
        .execute();
      return rows.filter((r) => r.cve_id !== null).map((r) => `${r.version} ${r.cve_id}`);
    };
    const safest = async (name: string) =>
      (
        await handle.db
          .selectFrom("packages")
          .select("safest_version")
          .where("name", "=", name)
          .executeTakeFirstOrThrow()
      ).safest_version;

    before(async () => {
      store = await createTestStore(kind);
      work = mkdtempSync(join(tmpdir(), "imaging-osv-test-"));
      handle = await openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile });
      // Published versions known before the advisories arrive: facts must follow each import.
      await loadPublishedVersions(handle.db, "npm", "lodash", [
        { version: "4.17.19", releasedAt: "2020-07-08T17:14:40Z" },
        { version: "4.17.20", releasedAt: "2020-08-13T16:53:54Z" },
        { version: "4.17.21", releasedAt: "2021-02-20T15:42:16Z" },
      ]);
      await loadPublishedVersions(handle.db, "npm", "lodash.template", [
        { version: "4.4.0", releasedAt: null },
        { version: "4.5.0", releasedAt: null },
      ]);
    });
    after(async () => {
      await handle?.close();
      await store?.drop();
      rmSync(work, { recursive: true, force: true });
    });

    it("imports single records and prints the counts as JSON", async () => {
      const { counts, stderr } = await importJson(LOG4SHELL, LODASH_PP, TEMPLATE_2022);
      assert.deepEqual(counts, {
        imported: 3,
        updated: 0,
        unchanged: 0,
        skipped: 0,
        withdrawn: 0,
        malformed: [],
      });
      assert.match(stderr, /advisories: reading /);
    });

    it("indexes aliases both ways, with the severity label and the CVSS base score of the vector", async () => {
      const byCve = await findVulnerability(handle.db, "CVE-2021-44228");
      const byGhsa = await findVulnerability(handle.db, "GHSA-jfh8-c2jp-5v3q");
      assert.ok(byCve && byGhsa);
      assert.equal(byGhsa.cveId, "CVE-2021-44228");
      assert.deepEqual(byCve.aliases, ["GHSA-jfh8-c2jp-5v3q"]);
      assert.equal(byCve.severity, "CRITICAL");
      assert.equal(byCve.cvssScore, 10); // CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H
      assert.equal(byCve.summary, "Remote code injection in Log4j");
      const pp = await findVulnerability(handle.db, "GHSA-p6mc-m468-83gw");
      assert.equal(pp?.cveId, "CVE-2020-8203");
      assert.equal(pp?.cvssScore, 7.4); // CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:N/I:H/A:H
      assert.equal(pp?.severity, "HIGH");
    });

    it("recomputes the facts of the packages the advisories name", async () => {
      assert.deepEqual(await affectedVersions("lodash"), [
        "4.17.19 CVE-2020-8203",
        "4.17.19 CVE-2021-23337",
        "4.17.20 CVE-2021-23337",
      ]);
      assert.equal(await safest("lodash"), "4.17.21");
      // The 2022 revision of the template advisory does not name lodash.template yet.
      assert.deepEqual(await affectedVersions("lodash.template"), []);
      assert.equal(await safest("lodash.template"), "4.5.0");
    });

    it("is idempotent: importing the same records again changes nothing", async () => {
      const before = await affectedVersions("lodash");
      const { counts } = await importJson(LOG4SHELL, LODASH_PP, TEMPLATE_2022);
      assert.deepEqual(counts, {
        imported: 0,
        updated: 0,
        unchanged: 3,
        skipped: 0,
        withdrawn: 0,
        malformed: [],
      });
      assert.deepEqual(await affectedVersions("lodash"), before);
    });

    it("replaces a record by its newer revision and recomputes every package it touches", async () => {
      const { counts } = await importJson(TEMPLATE_2025);
      assert.equal(counts.updated, 1);
      // last_affected 4.5.0: every published lodash.template version is affected, none is safe.
      assert.deepEqual(await affectedVersions("lodash.template"), [
        "4.4.0 CVE-2021-23337",
        "4.5.0 CVE-2021-23337",
      ]);
      assert.equal(await safest("lodash.template"), null);
      const ranges = await handle.db
        .selectFrom("vulnerability_ranges as r")
        .innerJoin("packages as p", "p.id", "r.package_id")
        .select(["p.ecosystem", "p.name", "r.last_affected"])
        .where("r.record_id", "=", "GHSA-35jh-r3h4-6jhm")
        .orderBy("p.name")
        .execute();
      // The RubyGems entry is someone else's ecosystem: not kept.
      assert.deepEqual(
        ranges.map((r) => `${r.ecosystem}:${r.name} ${r.last_affected ?? ""}`.trim()),
        ["npm:lodash", "npm:lodash-es", "npm:lodash-template 1.0.0", "npm:lodash.template 4.5.0"],
      );
      // An older revision arriving later does not undo the newer one.
      const older = await importJson(TEMPLATE_2022);
      assert.equal(older.counts.unchanged, 1);
      assert.equal(await safest("lodash.template"), null);
    });

    it("reads zip archives (OSV's all.zip) and directories, skipping other ecosystems", async () => {
      const pypi: Record<string, unknown> = { ...record(LODASH_PP), id: "GHSA-xxxx-pypi-only", aliases: [] };
      (pypi.affected as { package: { ecosystem: string } }[]).forEach((a) => {
        a.package.ecosystem = "PyPI";
      });
      const zip = join(work, "npm-all.zip");
      writeFileSync(
        zip,
        zipSync({
          "GHSA-p6mc-m468-83gw.json": readFileSync(LODASH_PP),
          "GHSA-xxxx-pypi-only.json": Buffer.from(JSON.stringify(pypi)),
        }),
      );
      const dir = join(work, "tree");
      mkdirSync(join(dir, "2021", "12"), { recursive: true });
      cpSync(LOG4SHELL, join(dir, "2021", "12", "GHSA-jfh8-c2jp-5v3q.json"));
      // Written as a stream (sizes in data descriptors after each entry), as streaming zip writers do.
      const streamed = join(work, "maven-all.zip");
      const parts: Uint8Array[] = [];
      const writer = new Zip((error, data) => {
        if (error) throw error;
        parts.push(data);
      });
      const entry = new ZipDeflate("GHSA-jfh8-c2jp-5v3q.json", { level: 6 });
      writer.add(entry);
      entry.push(readFileSync(LOG4SHELL), true);
      writer.end();
      writeFileSync(streamed, Buffer.concat(parts));
      const { counts } = await importJson(zip, dir, streamed);
      assert.deepEqual(counts, {
        imported: 0,
        updated: 0,
        unchanged: 3,
        skipped: 1,
        withdrawn: 0,
        malformed: [],
      });
    });

    it("names the file and the field of a malformed record, skips it and imports the rest", async () => {
      const dir = join(work, "malformed");
      mkdirSync(dir, { recursive: true });
      const noModified: Record<string, unknown> = { ...record(LOG4SHELL), id: "GHSA-0000-0000-0001" };
      delete noModified.modified;
      const twoKeys = record(LODASH_PP);
      twoKeys.id = "GHSA-0000-0000-0002";
      const [, second] = twoKeys.affected as { ranges: { events: object[] }[] }[];
      second?.ranges[0]?.events.splice(1, 1, { introduced: "1.0.0", fixed: "2.0.0" });
      const good = { ...record(LODASH_PP), id: "GHSA-0000-0000-0003", aliases: ["CVE-2099-0003"] };
      writeFileSync(join(dir, "a.json"), JSON.stringify(noModified));
      writeFileSync(join(dir, "b.json"), JSON.stringify(twoKeys));
      writeFileSync(join(dir, "c.json"), "{ truncated");
      writeFileSync(join(dir, "d.json"), JSON.stringify(good));
      const { counts, stderr } = await importJson(dir);
      assert.equal(counts.imported, 1);
      assert.equal(counts.skipped, 3);
      assert.deepEqual(
        counts.malformed.map((m) => [m.file.slice(dir.length + 1), m.reason.split(":")[0]]),
        [
          ["a.json", "modified"],
          ["b.json", "affected[1].ranges[0].events[1]"],
          [
            "c.json",
            "not valid JSON (Expected property name or '}' in JSON at position 2 (line 1 column 3))",
          ],
        ],
      );
      assert.match(stderr, /a\.json: modified: .* \(record skipped\)/);
      assert.ok(await findVulnerability(handle.db, "CVE-2099-0003"));
    });

    it("removes the advisory of a withdrawn record, by CVE and by alias", async () => {
      const withdrawn = {
        ...record(LOG4SHELL),
        modified: "2030-01-01T00:00:00Z",
        withdrawn: "2030-01-01T00:00:00Z",
      };
      const file = join(work, "withdrawn.json");
      writeFileSync(file, JSON.stringify(withdrawn));
      const { counts } = await importJson(file);
      assert.equal(counts.withdrawn, 1);
      assert.equal(await findVulnerability(handle.db, "CVE-2021-44228"), undefined);
      assert.equal(await findVulnerability(handle.db, "GHSA-jfh8-c2jp-5v3q"), undefined);
      // The original revision, older than the withdrawal, does not bring it back.
      const again = await importJson(LOG4SHELL);
      assert.equal(again.counts.unchanged, 1);
      assert.equal(await findVulnerability(handle.db, "CVE-2021-44228"), undefined);
    });

    it("stops with one readable line for a damaged archive", async () => {
      const whole = zipSync({ "a.json": readFileSync(LODASH_PP), "b.json": readFileSync(LOG4SHELL) });
      const cut = join(work, "cut.zip");
      writeFileSync(cut, whole.subarray(0, Math.floor(whole.length * 0.6)));
      const garbage = join(work, "garbage.zip");
      writeFileSync(
        garbage,
        Buffer.concat([Buffer.from([0x50, 0x4b, 3, 4]), Buffer.from("not a zip at all")]),
      );
      for (const [file, reason] of [
        [cut, "damaged zip archive"],
        [garbage, "not a readable zip archive"],
      ] as const) {
        const result = await runCli(["advisories", "import", file], env());
        assert.equal(result.code, 1);
        const last = result.stderr.trim().split("\n").at(-1) ?? "";
        assert.ok(last.startsWith(`imaging: ${file}: ${reason}`), last);
      }
    });

    it("stops with one readable line for a path that does not exist", async () => {
      const result = await runCli(["advisories", "import", join(work, "missing.zip")], env());
      assert.equal(result.code, 1);
      assert.equal(result.stderr.trim(), `imaging: ${join(work, "missing.zip")}: no such file or directory`);
    });
  });
}
