import type { Kysely } from "kysely";
import { ingestAnalysis, loadAdvisory, loadPublishedVersions } from "../../src/domain/package-facts.ts";
import type { AnalysisInput } from "../../src/store/input-records.ts";
import type { Database } from "../../src/store/schema.ts";

/** A CVE that affects every package of `wide`: its occurrences page is a few hundred KB of JSON. */
export const WIDE = { app: "wide", cve: "CVE-2099-7000", packages: 40, objectsPerPackage: 60 };
export const pkg = (i: number) => `wide-${String(i).padStart(2, "0")}`;

export async function seedWide(db: Kysely<Database>): Promise<void> {
  const names = Array.from({ length: WIDE.packages }, (_, i) => pkg(i + 1));
  for (const name of names) {
    await loadPublishedVersions(db, "npm", name, [
      { version: "1.0.0", releasedAt: "2022-05-01T10:00:00.000Z" },
      { version: "1.1.0", releasedAt: "2023-05-01T10:00:00.000Z" },
    ]);
  }
  await loadAdvisory(db, {
    id: WIDE.cve,
    aliases: [],
    severity: "HIGH",
    cvssScore: 7.5,
    summary: "Wide fixture advisory",
    publishedAt: "2023-06-01T00:00:00.000Z",
    affected: names.map((name) => ({
      ecosystem: "npm" as const,
      package: name,
      ranges: [{ introduced: "0", fixed: "1.1.0" }],
    })),
  });
  const objects = names.flatMap((name) =>
    Array.from({ length: WIDE.objectsPerPackage }, (_, j) => ({
      id: `${name}/fn${j}`,
      package: `npm:${name}`,
      name: `fn${j}`,
      fullName: `${name}.module${j % 7}.fn${j}`,
      mangling: `fn${j}(input, options)`,
      type: "JavaScript Function",
      typeId: "JS_FUNCTION",
    })),
  );
  const analysis: AnalysisInput = {
    analyzedAt: "2024-01-10T08:00:00.000Z",
    packages: names.map((name) => ({ ecosystem: "npm", name, version: "1.0.0" })),
    objects,
    references: objects.map((o) => ({
      from: {
        id: `src/${o.id}`,
        name: `use_${o.name}`,
        fullName: `wide.src.use_${o.id}`,
        type: "JavaScript Function",
        typeId: "JS_FUNCTION",
      },
      to: o.id,
    })),
  };
  await ingestAnalysis(db, WIDE.app, analysis, { description: "Wide fixture" });
}
