/**
 * Integrity of the demo dataset (src/scanner/demo/*.json): real package versions and advisories, fictional
 * applications whose analyses only use published versions and only list objects they refer to.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import {
  compareVersions,
  type Ecosystem,
  isAffected,
  isPrerelease,
} from "../../src/domain/versions/index.ts";
import type {
  AdvisoryInput,
  AnalysisInput,
  ExternalObjectInput,
  PublishedVersionInput,
} from "../../src/store/input-records.ts";

interface DemoApplication {
  name: string;
  description: string;
  analyses: AnalysisInput[];
}

const readJson = <T>(file: string): T =>
  JSON.parse(readFileSync(new URL(`../../src/scanner/demo/${file}`, import.meta.url), "utf8")) as T;

const versions = readJson<Record<string, PublishedVersionInput[]>>("package-versions.json");
const advisories = readJson<AdvisoryInput[]>("advisories.json");
const applications = readJson<DemoApplication[]>("applications.json");
/** Hand-collected npm release dates merged into package-versions.json by scripts/fetch-demo-facts.ts. */
const npmReleaseDates =
  readJson<Record<string, { source: string | string[]; note?: string; dates: Record<string, string> }>>(
    "npm-release-dates.json",
  );

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/;
const isIsoUtc = (value: string) => ISO_UTC.test(value) && !Number.isNaN(Date.parse(value));

const TYPES: Record<string, string> = {
  "Java Class": "JV_CLASS",
  "Java Interface": "JV_INTERFACE",
  "Java Method": "JV_METHOD",
  "JavaScript Function": "JS_FUNCTION",
  "JavaScript Module": "JS_MODULE",
};
const JAVA_TYPE = String.raw`[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*(\[\])*`;
const JAVA_METHOD_MANGLING = new RegExp(
  String.raw`^([\w$]+|<init>)\((${JAVA_TYPE}(, ${JAVA_TYPE})*)?\)( return ${JAVA_TYPE})?$`,
);
const JS_FUNCTION_MANGLING = /^[\w$]+\(((\.\.\.)?[\w$]+(, (\.\.\.)?[\w$]+)*)?\)$/;

const LOG4J_KEY = "org.apache.logging.log4j:log4j-core";
const ecosystemOf = (key: string): Ecosystem => (key.startsWith("maven:") ? "maven" : "npm");
const releaseOf = (key: string, version: string) => versions[key]?.find((v) => v.version === version);

function analysisPackages(analysis: AnalysisInput): Map<string, string> {
  return new Map(analysis.packages.map((p) => [`${p.ecosystem}:${p.name}`, p.version]));
}

/** The advisories affecting the packages of an analysis, as "CVE id -> package keys". */
function advisoriesAffecting(analysis: AnalysisInput): Map<string, string[]> {
  const used = analysisPackages(analysis);
  const result = new Map<string, string[]>();
  for (const advisory of advisories) {
    for (const affected of advisory.affected) {
      const key = `${affected.ecosystem}:${affected.package}`;
      const version = used.get(key);
      if (version !== undefined && isAffected(affected.ecosystem, version, affected.ranges)) {
        result.set(advisory.id, [...(result.get(advisory.id) ?? []), key]);
      }
    }
  }
  return result;
}

function application(name: string): DemoApplication {
  const found = applications.find((a) => a.name === name);
  assert.ok(found, `application ${name}`);
  return found;
}

function analysisAt(app: DemoApplication, index: number): AnalysisInput {
  const found = app.analyses[index];
  assert.ok(found, `${app.name} analysis #${index}`);
  return found;
}

describe("demo dataset: package-versions.json", () => {
  it("lists, per package, distinct versions with ISO UTC release times in ascending order", () => {
    assert.ok(Object.keys(versions).length >= 30, "a few dozen packages");
    for (const [key, list] of Object.entries(versions)) {
      assert.match(key, /^(npm:(@[\w.-]+\/)?[\w.-]+|maven:[\w.-]+:[\w.-]+)$/, key);
      assert.ok(list.length > 0, key);
      assert.equal(new Set(list.map((v) => v.version)).size, list.length, `${key}: duplicate version`);
      for (const entry of list) {
        if (entry.releasedAt !== null) assert.ok(isIsoUtc(entry.releasedAt), `${key} ${entry.version}`);
      }
      const dated = list.every((v) => v.releasedAt !== null);
      for (let i = 1; i < list.length; i++) {
        const [previous, current] = [list[i - 1], list[i]] as [PublishedVersionInput, PublishedVersionInput];
        if (dated) {
          assert.ok(
            (previous.releasedAt as string) <= (current.releasedAt as string),
            `${key}: publish order`,
          );
        } else {
          assert.ok(
            compareVersions(ecosystemOf(key), previous.version, current.version) < 0,
            `${key}: order`,
          );
        }
      }
    }
  });

  it("knows the release times of the Maven versions the demo relies on", () => {
    const log4j = versions["maven:org.apache.logging.log4j:log4j-core"] ?? [];
    for (const version of ["2.14.1", "2.15.0", "2.16.0", "2.17.0", "2.17.1"]) {
      const entry = log4j.find((v) => v.version === version);
      assert.ok(entry?.releasedAt, `log4j-core ${version}`);
    }
    assert.ok(
      (log4j.find((v) => v.version === "2.14.1")?.releasedAt ?? "") < "2021-12-09",
      "2.14.1 predates Log4Shell",
    );
  });

  it("records the full published history, not a window around the versions in use", () => {
    const log4j = versions["maven:org.apache.logging.log4j:log4j-core"] ?? [];
    // Pre-releases are published too (the advisories start at 2.0-beta9); the platform never recommends them.
    for (const version of ["2.0-beta9", "2.0", "2.3.1", "2.12.4"])
      assert.ok(releaseOf(`maven:${LOG4J_KEY}`, version), version);
    const laterReleases = log4j.filter(
      (v) =>
        compareVersions("maven", v.version, "2.17.1") > 0 &&
        !isPrerelease("maven", v.version) &&
        v.releasedAt !== null &&
        v.releasedAt > "2022-01-01",
    );
    assert.ok(laterReleases.length >= 10, "log4j-core kept releasing after 2.17.1");
    assert.ok(releaseOf("npm:lodash", "0.1.0"), "lodash's first release");
    assert.ok(releaseOf("npm:react", "0.14.0"), "react before 18");
    assert.ok(
      !Object.values(versions)
        .flat()
        .some((v) => /-SNAPSHOT$|^0\.0\.0-/i.test(v.version)),
      "no snapshots",
    );
  });

  it("dates npm releases from the public publish record", () => {
    assert.equal(releaseOf("npm:lodash", "4.17.15")?.releasedAt, "2019-07-19T02:28:46.584Z");
    assert.equal(releaseOf("npm:lodash", "4.17.20")?.releasedAt, "2020-08-13T16:53:54.152Z");
    assert.equal(releaseOf("npm:lodash", "4.17.21")?.releasedAt, "2021-02-20T00:00:00Z", "day precision");
    assert.equal(releaseOf("npm:react", "18.2.0")?.releasedAt, "2022-06-14T00:00:00Z");
    assert.equal(releaseOf("npm:react-router-dom", "6.21.1")?.releasedAt, "2023-12-21T00:00:00Z");
  });

  it("merges every date of npm-release-dates.json, each with its public source", () => {
    for (const [name, entry] of Object.entries(npmReleaseDates)) {
      const list = versions[`npm:${name}`];
      assert.ok(list, `${name} is a demo package`);
      const sources = Array.isArray(entry.source) ? entry.source : [entry.source];
      assert.ok(sources.length > 0 && sources.every((url) => /^https:\/\//.test(url)), `${name}: source`);
      for (const [version, date] of Object.entries(entry.dates)) {
        const expected = /^\d{4}-\d{2}-\d{2}$/.test(date)
          ? `${date}T00:00:00Z`
          : new Date(date).toISOString().replace(".000Z", "Z");
        assert.equal(releaseOf(`npm:${name}`, version)?.releasedAt, expected, `${name}@${version}`);
      }
    }
  });
});

describe("demo dataset: advisories.json", () => {
  it("has well-formed advisories on packages of package-versions.json", () => {
    assert.equal(new Set(advisories.map((a) => a.id)).size, advisories.length, "unique ids");
    for (const advisory of advisories) {
      assert.match(advisory.id, /^CVE-\d{4}-\d{4,}$/);
      assert.ok(advisory.aliases.length > 0, advisory.id);
      for (const alias of advisory.aliases) assert.match(alias, /^GHSA(-[23456789cfghjmpqrvwx]{4}){3}$/);
      assert.ok(["CRITICAL", "HIGH", "MEDIUM", "LOW"].includes(advisory.severity), advisory.id);
      if (advisory.cvssScore !== null) {
        assert.ok(advisory.cvssScore >= 0 && advisory.cvssScore <= 10, advisory.id);
        assert.equal(
          Math.round(advisory.cvssScore * 10),
          advisory.cvssScore * 10,
          `${advisory.id}: one decimal`,
        );
      }
      assert.ok(advisory.summary.length > 0, advisory.id);
      assert.ok(advisory.publishedAt !== null && isIsoUtc(advisory.publishedAt), advisory.id);
      assert.ok(advisory.affected.length > 0, advisory.id);
      for (const affected of advisory.affected) {
        assert.ok(
          versions[`${affected.ecosystem}:${affected.package}`],
          `${advisory.id}: ${affected.package}`,
        );
        assert.ok(affected.ranges.length > 0, advisory.id);
        for (const range of affected.ranges) {
          assert.ok(typeof range.introduced === "string" && range.introduced.length > 0, advisory.id);
          assert.ok(!(range.fixed && range.lastAffected), `${advisory.id}: fixed or lastAffected, not both`);
        }
      }
    }
  });

  const rangesOf = (id: string, pkg: string) => {
    const advisory = advisories.find((a) => a.id === id);
    assert.ok(advisory, id);
    return advisory.affected.filter((a) => a.package === pkg).flatMap((a) => a.ranges);
  };
  const LOG4J = "org.apache.logging.log4j:log4j-core";

  it("has the Log4j advisories with their ranges", () => {
    assert.deepEqual(rangesOf("CVE-2021-44228", LOG4J), [
      { introduced: "2.0-beta9", fixed: "2.3.1" },
      { introduced: "2.4", fixed: "2.12.2" },
      { introduced: "2.13.0", fixed: "2.15.0" },
    ]);
    assert.deepEqual(rangesOf("CVE-2021-45046", LOG4J), [
      { introduced: "0", fixed: "2.12.2" },
      { introduced: "2.13.0", fixed: "2.16.0" },
    ]);
    assert.deepEqual(rangesOf("CVE-2021-45105", LOG4J), [
      { introduced: "0", fixed: "2.3.1" },
      { introduced: "2.4.0", fixed: "2.12.3" },
      { introduced: "2.13.0", fixed: "2.17.0" },
    ]);
    assert.deepEqual(rangesOf("CVE-2021-44832", LOG4J), [
      { introduced: "2.0-beta7", fixed: "2.3.2" },
      { introduced: "2.4", fixed: "2.12.4" },
      { introduced: "2.13.0", fixed: "2.17.1" },
    ]);
    for (const id of ["CVE-2021-44228", "CVE-2021-45046", "CVE-2021-45105", "CVE-2021-44832"]) {
      const ranges = rangesOf(id, LOG4J);
      assert.equal(isAffected("maven", "2.14.1", ranges), true, `${id} affects 2.14.1`);
      assert.equal(isAffected("maven", "2.17.1", ranges), false, `${id} is fixed in 2.17.1`);
    }
  });

  it("has the lodash advisories with their ranges; CVE-2019-10744 does not affect 4.17.15", () => {
    assert.deepEqual(rangesOf("CVE-2020-8203", "lodash"), [{ introduced: "3.7.0", fixed: "4.17.19" }]);
    assert.deepEqual(rangesOf("CVE-2021-23337", "lodash"), [{ introduced: "0", fixed: "4.17.21" }]);
    assert.deepEqual(rangesOf("CVE-2019-10744", "lodash"), [{ introduced: "0", fixed: "4.17.12" }]);
    assert.equal(isAffected("npm", "4.17.15", rangesOf("CVE-2020-8203", "lodash")), true);
    assert.equal(isAffected("npm", "4.17.15", rangesOf("CVE-2021-23337", "lodash")), true);
    assert.equal(isAffected("npm", "4.17.15", rangesOf("CVE-2019-10744", "lodash")), false);
    assert.equal(isAffected("npm", "4.17.11", rangesOf("CVE-2019-10744", "lodash")), true);
  });
});

describe("demo dataset: applications.json", () => {
  it("has uniquely named applications with analyses in chronological order", () => {
    assert.ok(applications.length >= 3);
    assert.equal(new Set(applications.map((a) => a.name)).size, applications.length);
    for (const app of applications) {
      assert.ok(app.description.length > 0, app.name);
      assert.ok(app.analyses.length > 0, app.name);
      for (const analysis of app.analyses) assert.ok(isIsoUtc(analysis.analyzedAt), app.name);
      const dates = app.analyses.map((a) => a.analyzedAt);
      assert.deepEqual([...dates].sort(), dates, `${app.name}: chronological`);
      assert.equal(new Set(dates).size, dates.length, `${app.name}: distinct dates`);
    }
  });

  it("only uses published versions, released before the analysis", () => {
    for (const app of applications) {
      for (const analysis of app.analyses) {
        const keys = analysis.packages.map((p) => `${p.ecosystem}:${p.name}`);
        assert.equal(new Set(keys).size, keys.length, `${app.name}: a package listed twice`);
        for (const p of analysis.packages) {
          assert.ok(p.ecosystem === "maven" || p.ecosystem === "npm");
          const release = releaseOf(`${p.ecosystem}:${p.name}`, p.version);
          assert.ok(release, `${app.name} ${analysis.analyzedAt}: ${p.name}@${p.version} is not published`);
          if (release.releasedAt !== null) {
            assert.ok(release.releasedAt <= analysis.analyzedAt, `${p.name}@${p.version} released later`);
          }
        }
      }
    }
  });

  it("lists well-formed external objects of the analysis's packages, each referred to", () => {
    for (const app of applications) {
      for (const analysis of app.analyses) {
        const where = `${app.name} ${analysis.analyzedAt}`;
        const used = analysisPackages(analysis);
        const ids = analysis.objects.map((o) => o.id);
        assert.equal(new Set(ids).size, ids.length, `${where}: duplicate object id`);
        const referenced = new Set(analysis.references.map((r) => r.to));
        for (const object of analysis.objects) {
          assert.ok(used.has(object.package), `${where}: ${object.fullName} of unused ${object.package}`);
          assert.ok(referenced.has(object.id), `${where}: ${object.fullName} is not referred to`);
          assert.equal(TYPES[object.type], object.typeId, `${where}: ${object.fullName} type`);
          assert.ok(object.fullName.includes(object.name), `${where}: ${object.fullName} name`);
          if (object.typeId === "JV_METHOD") assert.match(object.mangling, JAVA_METHOD_MANGLING);
          else if (object.typeId === "JS_FUNCTION") assert.match(object.mangling, JS_FUNCTION_MANGLING);
          else assert.equal(object.mangling, "", `${where}: ${object.fullName} mangling`);
          if (object.mangling !== "")
            assert.ok(object.mangling.startsWith(`${object.name}(`), object.mangling);
        }
        const objectIds = new Set(ids);
        const sources = new Map<string, string>();
        for (const reference of analysis.references) {
          assert.ok(objectIds.has(reference.to), `${where}: reference to unknown object ${reference.to}`);
          const from = reference.from;
          assert.equal(TYPES[from.type], from.typeId, `${where}: ${from.fullName} type`);
          assert.ok(from.fullName.includes(from.name), `${where}: ${from.fullName} name`);
          assert.ok(!objectIds.has(from.id), `${where}: source id ${from.id} is also an external id`);
          assert.equal(
            sources.get(from.id) ?? from.fullName,
            from.fullName,
            `${where}: source id ${from.id}`,
          );
          sources.set(from.id, from.fullName);
        }
        const pairs = analysis.references.map((r) => `${r.from.id}->${r.to}`);
        assert.equal(new Set(pairs).size, pairs.length, `${where}: duplicate reference`);
      }
    }
  });

  it("keeps object ids stable and unique within an application, across its analyses", () => {
    const identity = (o: ExternalObjectInput) => `${o.package}|${o.type}|${o.fullName}|${o.mangling}`;
    for (const app of applications) {
      const byId = new Map<string, string>();
      const byIdentity = new Map<string, string>();
      for (const object of app.analyses.flatMap((a) => a.objects)) {
        assert.equal(
          byId.get(object.id) ?? identity(object),
          identity(object),
          `${app.name}: id ${object.id}`,
        );
        assert.equal(
          byIdentity.get(identity(object)) ?? object.id,
          object.id,
          `${app.name}: ${object.fullName}`,
        );
        byId.set(object.id, identity(object));
        byIdentity.set(identity(object), object.id);
      }
    }
  });

  it("payments-service: Log4j 2.14.1 then 2.17.1, with a meaningful history", () => {
    const app = application("payments-service");
    const [before, after] = [analysisAt(app, 0), analysisAt(app, 1)];
    assert.equal(before.analyzedAt, "2024-01-15T09:00:00Z");
    assert.equal(after.analyzedAt, "2024-06-01T09:00:00Z");
    assert.equal(analysisPackages(before).get("maven:org.apache.logging.log4j:log4j-core"), "2.14.1");
    assert.equal(analysisPackages(before).get("maven:org.apache.logging.log4j:log4j-api"), "2.14.1");
    assert.equal(analysisPackages(after).get("maven:org.apache.logging.log4j:log4j-core"), "2.17.1");
    assert.equal(analysisPackages(after).get("maven:org.apache.logging.log4j:log4j-api"), "2.17.1");
    assert.ok(before.packages.length >= 12);

    const log4jObjects = before.objects.filter(
      (o) => o.package === "maven:org.apache.logging.log4j:log4j-core",
    );
    assert.ok(log4jObjects.length >= 8, "several log4j-core objects");
    const affecting = advisoriesAffecting(before);
    for (const id of ["CVE-2021-44228", "CVE-2021-45046", "CVE-2021-45105", "CVE-2021-44832"]) {
      assert.deepEqual(affecting.get(id), ["maven:org.apache.logging.log4j:log4j-core"], id);
    }
    assert.equal(advisoriesAffecting(after).size, 0, "fixed by the upgrades");

    const changed = before.packages.filter(
      (p) => analysisPackages(after).get(`${p.ecosystem}:${p.name}`) !== p.version,
    );
    assert.equal(changed.length, 3, "log4j-core, log4j-api and one other package upgraded");
    assertOneReferenceSwapped(before, after);
  });

  it("storefront-web: lodash 4.17.15 then 4.17.21", () => {
    const app = application("storefront-web");
    const [before, after] = [analysisAt(app, 0), analysisAt(app, 1)];
    assert.equal(analysisPackages(before).get("npm:lodash"), "4.17.15");
    assert.equal(analysisPackages(after).get("npm:lodash"), "4.17.21");
    assert.equal(after.analyzedAt, "2024-09-10T10:00:00Z");
    const lodashFunctions = new Set(
      before.objects
        .filter((o) => o.package === "npm:lodash" && o.typeId === "JS_FUNCTION")
        .map((o) => o.name),
    );
    for (const name of ["merge", "template", "set", "zipObjectDeep", "defaultsDeep", "get"]) {
      assert.ok(lodashFunctions.has(name), `lodash.${name}`);
    }
    const affecting = advisoriesAffecting(before);
    assert.ok(affecting.has("CVE-2020-8203") && affecting.has("CVE-2021-23337"));
    assert.ok(!affecting.has("CVE-2019-10744"), "fixed in 4.17.12");
    const others = before.packages.filter((p) => p.name !== "lodash");
    assert.ok(others.length >= 12);
    for (const p of others) {
      assert.ok(
        !advisories.some((a) => a.affected.some((x) => x.package === p.name)),
        `${p.name} has advisories`,
      );
    }
    assert.equal(advisoriesAffecting(after).size, 0);
    assertOneReferenceSwapped(before, after);
  });

  it("claims-portal: vulnerable Spring and Jackson, then upgraded", () => {
    const app = application("claims-portal");
    const [before, after] = [analysisAt(app, 0), analysisAt(app, 1)];
    assert.equal(analysisPackages(before).get("maven:org.springframework:spring-beans"), "5.3.17");
    const affecting = advisoriesAffecting(before);
    assert.deepEqual(affecting.get("CVE-2022-22965"), [
      "maven:org.springframework:spring-beans",
      "maven:org.springframework:spring-webmvc",
    ]);
    assert.ok(affecting.has("CVE-2020-36518"));
    assert.ok(before.objects.some((o) => o.package === "maven:org.springframework:spring-beans"));
    assert.ok(before.objects.some((o) => o.package === "maven:com.fasterxml.jackson.core:jackson-databind"));
    assert.equal(advisoriesAffecting(after).size, 0);
    assertOneReferenceSwapped(before, after);
  });

  it("has a few dozen distinct packages overall", () => {
    const all = new Set(
      applications.flatMap((a) =>
        a.analyses.flatMap((x) => x.packages.map((p) => `${p.ecosystem}:${p.name}`)),
      ),
    );
    assert.ok(all.size >= 30, `${all.size} packages`);
  });
});

/** Between two analyses exactly one reference disappeared and one appeared. */
function assertOneReferenceSwapped(before: AnalysisInput, after: AnalysisInput): void {
  const pairs = (a: AnalysisInput) => new Set(a.references.map((r) => `${r.from.id}->${r.to}`));
  const [b, a] = [pairs(before), pairs(after)];
  assert.equal([...b].filter((p) => !a.has(p)).length, 1, "one reference removed");
  assert.equal([...a].filter((p) => !b.has(p)).length, 1, "one reference added");
}
