import type { Kysely } from "kysely";
import type { AnalysisInput, ExternalObjectInput, ReferenceInput } from "../../src/scanner/analysis.ts";
import { loadAdvisory, loadPublishedVersions } from "../../src/store/catalog.ts";
import { ingestAnalysis } from "../../src/store/ingest.ts";
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
