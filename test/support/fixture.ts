import type { Kysely } from "kysely";
import { ingestAnalysis, loadAdvisory, loadPublishedVersions } from "../../src/domain/package-facts.ts";
import type { AnalysisInput, ExternalObjectInput, ReferenceInput } from "../../src/store/input-records.ts";
import type { Database } from "../../src/store/schema.ts";

/**
 * A small store with known answers: application `shop` uses 12 packages `lib-01`..`lib-12`, all
 * affected by CVE-2099-1000 (alias GHSA-2222-3333-4444) at version 1.0.0; in its second analysis
 * `lib-01` is upgraded to the fixed 1.1.0. Application `secret` is another team's.
 */
export const FIXTURE = {
  cve: "CVE-2099-1000",
  ghsa: "GHSA-2222-3333-4444",
  firstAnalysis: "2024-01-10T08:00:00.000Z",
  secondAnalysis: "2024-03-10T08:00:00.000Z",
  packageCount: 12,
};

const lib = (i: number) => `lib-${String(i).padStart(2, "0")}`;

function objectsOf(name: string): ExternalObjectInput[] {
  return ["parse", "format"].map((fn) => ({
    id: `${name}/${fn}`,
    package: `npm:${name}`,
    name: fn,
    fullName: `${name}.${fn}`,
    mangling: `${fn}(input)`,
    type: "JavaScript Function",
    typeId: "JS_FUNCTION",
  }));
}

function analysis(analyzedAt: string, upgraded: boolean): AnalysisInput {
  const names = Array.from({ length: FIXTURE.packageCount }, (_, i) => lib(i + 1));
  const objects = names.flatMap(objectsOf);
  const references: ReferenceInput[] = objects.map((o) => ({
    from: {
      id: `src/${o.id}`,
      name: `use_${o.name}`,
      fullName: `shop.src.use_${o.id}`,
      type: "JavaScript Function",
      typeId: "JS_FUNCTION",
    },
    to: o.id,
  }));
  return {
    analyzedAt,
    packages: names.map((name, i) => ({
      ecosystem: "npm",
      name,
      version: upgraded && i === 0 ? "1.1.0" : "1.0.0",
    })),
    objects,
    references,
  };
}

export async function loadFixture(db: Kysely<Database>): Promise<void> {
  for (let i = 1; i <= FIXTURE.packageCount; i++) {
    await loadPublishedVersions(db, "npm", lib(i), [
      { version: "1.0.0", releasedAt: "2022-05-01T10:00:00.000Z" },
      { version: "1.1.0", releasedAt: "2023-05-01T10:00:00.000Z" },
    ]);
  }
  await loadAdvisory(db, {
    id: FIXTURE.cve,
    aliases: [FIXTURE.ghsa],
    severity: "CRITICAL",
    cvssScore: 9.8,
    summary: "Fixture advisory",
    publishedAt: "2023-06-01T00:00:00.000Z",
    affected: Array.from({ length: FIXTURE.packageCount }, (_, i) => ({
      ecosystem: "npm" as const,
      package: lib(i + 1),
      ranges: [{ introduced: "0", fixed: "1.1.0" }],
    })),
  });
  await ingestAnalysis(db, "shop", analysis(FIXTURE.firstAnalysis, false), { description: "Fixture shop" });
  await ingestAnalysis(db, "shop", analysis(FIXTURE.secondAnalysis, true), { description: "Fixture shop" });
  await ingestAnalysis(db, "secret", analysis(FIXTURE.firstAnalysis, false), { description: "Not yours" });
}

/**
 * Application `portal` for packages, interactions, objects, quality gates and comparisons; three
 * analyses with known verdicts under the default gate rules:
 * - January: churn 1.0.0 (15 releases behind its safest 1.15.0), quiet-lib 1.0.0 (MEDIUM CVE, referred),
 *   unused-vuln 1.0.0 (HIGH CVE, not referred) -> fails max-releases-behind-safest.
 * - February: churn 1.15.0, quiet-lib 1.0.0, org.example:core 1.1 (CRITICAL + LOW CVEs without a fix,
 *   referred) -> fails no-referenced-severe-cve and no-unfixable-vulnerability.
 * - March: churn 1.15.0, quiet-lib 1.1.0 (fixed), unused-vuln 1.0.0 again -> passes.
 * Application `twins` uses an npm and a Maven package both named `twin`.
 */
export const PORTAL = {
  january: "2024-01-01T00:00:00.000Z",
  february: "2024-02-01T00:00:00.000Z",
  march: "2024-03-01T00:00:00.000Z",
  cves: {
    quiet: "CVE-2099-2002",
    unused: "CVE-2099-2003",
    coreCritical: "CVE-2099-3001",
    coreLow: "CVE-2099-3002",
  },
};

const jsFunction = (pkg: string, id: string, fullName: string): ExternalObjectInput => ({
  id,
  package: pkg,
  name: fullName.split(".").pop() as string,
  fullName,
  mangling: `${fullName.split(".").pop()}()`,
  type: "JavaScript Function",
  typeId: "JS_FUNCTION",
});

const javaObject = (id: string, fullName: string, kind: "class" | "method"): ExternalObjectInput => ({
  id,
  package: "maven:org.example:core",
  name: fullName.split(".").pop() as string,
  fullName,
  mangling: kind === "method" ? `${fullName.split(".").pop()}()` : "",
  type: kind === "method" ? "Java Method" : "Java Class",
  typeId: kind === "method" ? "JV_METHOD" : "JV_CLASS",
});

const portalCaller = (name: "main" | "admin") => ({
  id: `app/${name}`,
  name,
  fullName: `portal.app.${name}`,
  type: "JavaScript Function",
  typeId: "JS_FUNCTION",
});

const PORTAL_OBJECTS = {
  spin: jsFunction("npm:churn", "churn/spin", "churn.spin"),
  stop: jsFunction("npm:churn", "churn/stop", "churn.stop"),
  hush: jsFunction("npm:quiet-lib", "quiet/hush", "quiet.hush"),
  never: jsFunction("npm:unused-vuln", "unused/never", "unused.never"),
  util: javaObject("core/Util", "org.example.core.Util", "class"),
  run: javaObject("core/Util.run", "org.example.core.Util.run", "method"),
  halt: javaObject("core/Util.halt", "org.example.core.Util.halt", "method"),
};

function portalAnalyses(): AnalysisInput[] {
  const o = PORTAL_OBJECTS;
  const main = portalCaller("main");
  const admin = portalCaller("admin");
  return [
    {
      analyzedAt: PORTAL.january,
      packages: [
        { ecosystem: "npm", name: "churn", version: "1.0.0" },
        { ecosystem: "npm", name: "quiet-lib", version: "1.0.0" },
        { ecosystem: "npm", name: "unused-vuln", version: "1.0.0" },
      ],
      objects: [o.spin, o.stop, o.hush, o.never],
      references: [
        { from: main, to: o.spin.id },
        { from: main, to: o.hush.id },
      ],
    },
    {
      analyzedAt: PORTAL.february,
      packages: [
        { ecosystem: "npm", name: "churn", version: "1.15.0" },
        { ecosystem: "npm", name: "quiet-lib", version: "1.0.0" },
        { ecosystem: "maven", name: "org.example:core", version: "1.1" },
      ],
      objects: [o.spin, o.stop, o.hush, o.util, o.run, o.halt],
      references: [
        { from: main, to: o.spin.id },
        { from: main, to: o.hush.id },
        { from: main, to: o.run.id },
        { from: admin, to: o.run.id },
        { from: admin, to: o.halt.id },
        { from: admin, to: o.util.id },
      ],
    },
    {
      analyzedAt: PORTAL.march,
      packages: [
        { ecosystem: "npm", name: "churn", version: "1.15.0" },
        { ecosystem: "npm", name: "quiet-lib", version: "1.1.0" },
        { ecosystem: "npm", name: "unused-vuln", version: "1.0.0" },
      ],
      objects: [o.spin, o.stop, o.hush, o.never],
      references: [
        { from: main, to: o.spin.id },
        { from: admin, to: o.stop.id },
        { from: main, to: o.hush.id },
      ],
    },
  ];
}

export async function loadPortalFixture(db: Kysely<Database>): Promise<void> {
  const month = (i: number) => new Date(Date.UTC(2020, i, 1)).toISOString();
  await loadPublishedVersions(db, "npm", "churn", [
    ...Array.from({ length: 16 }, (_, i) => ({ version: `1.${i}.0`, releasedAt: month(i) })),
    { version: "1.5.0-beta.1", releasedAt: month(4) },
  ]);
  for (const name of ["quiet-lib", "unused-vuln"]) {
    await loadPublishedVersions(db, "npm", name, [
      { version: "1.0.0", releasedAt: "2023-01-01T00:00:00.000Z" },
      { version: "1.1.0", releasedAt: "2023-07-01T00:00:00.000Z" },
    ]);
  }
  await loadPublishedVersions(db, "maven", "org.example:core", [
    { version: "1.0", releasedAt: "2021-01-01T00:00:00.000Z" },
    { version: "1.1", releasedAt: "2022-01-01T00:00:00.000Z" },
    { version: "2.0", releasedAt: "2023-01-01T00:00:00.000Z" },
  ]);
  const advisory = (
    id: string,
    severity: string,
    ecosystem: "npm" | "maven",
    pkg: string,
    fixed: string | null,
  ) =>
    loadAdvisory(db, {
      id,
      aliases: [],
      severity,
      cvssScore: null,
      summary: `Fixture advisory ${id}`,
      publishedAt: "2023-06-01T00:00:00.000Z",
      affected: [{ ecosystem, package: pkg, ranges: [{ introduced: "0", fixed }] }],
    });
  await advisory(PORTAL.cves.quiet, "MEDIUM", "npm", "quiet-lib", "1.1.0");
  await advisory(PORTAL.cves.unused, "HIGH", "npm", "unused-vuln", "1.1.0");
  await advisory(PORTAL.cves.coreCritical, "CRITICAL", "maven", "org.example:core", null);
  await advisory(PORTAL.cves.coreLow, "LOW", "maven", "org.example:core", null);
  for (const input of portalAnalyses()) {
    await ingestAnalysis(db, "portal", input, { description: "Fixture portal" });
  }

  const twin = (ecosystem: "npm" | "maven", id: string): ExternalObjectInput => ({
    id,
    package: `${ecosystem}:twin`,
    name: id,
    fullName: `twin.${id}`,
    mangling: "",
    type: "Function",
    typeId: "FUNCTION",
  });
  const caller = { id: "t/main", name: "main", fullName: "twins.main", type: "Function", typeId: "FUNCTION" };
  await ingestAnalysis(db, "twins", {
    analyzedAt: PORTAL.january,
    packages: [
      { ecosystem: "npm", name: "twin", version: "1.0.0" },
      { ecosystem: "maven", name: "twin", version: "1.0" },
    ],
    objects: [twin("npm", "js"), twin("maven", "java")],
    references: [
      { from: caller, to: "js" },
      { from: caller, to: "java" },
    ],
  });
}
