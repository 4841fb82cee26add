/**
 * Precision and recall of the JavaScript extractor against hand-checked lists (test/fixtures/js-oracles):
 * the references `imaging scan` finds from one module of a real application, compared with what a person
 * reading that module listed. A reference is "from -> package.member" (versions left out).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { createRegistryFetcher } from "../../src/scanner/registry/cached-fetch.ts";
import { INPUT_READERS, type ScanResult, scanPath } from "../../src/scanner/scan.ts";

export interface Oracle {
  subject: string;
  how: string;
  /** Hand-checked references by module (relative path). */
  modules: Record<string, string[]>;
}

export interface ModuleScore {
  module: string;
  expected: number;
  found: number;
  truePositives: number;
  /** Over every reference (module imports, calls of a module itself, member uses). */
  precision: number;
  recall: number;
  /** Over direct member uses only (`package.member`). */
  memberPrecision: number;
  memberRecall: number;
  missed: string[];
  extra: string[];
}

export function readOracle(name: string): Oracle {
  return JSON.parse(
    readFileSync(new URL(`../fixtures/js-oracles/${name}.json`, import.meta.url), "utf8"),
  ) as Oracle;
}

/** Scans `dir` as `imaging scan` does (offline: package facts are not needed here). */
export async function scanOffline(dir: string): Promise<ScanResult> {
  const scratch = mkdtempSync(join(os.tmpdir(), "imaging-js-oracle-"));
  try {
    return await scanPath(dir, {
      readers: INPUT_READERS,
      fetcher: createRegistryFetcher({ cacheDir: join(scratch, "cache"), offline: true }),
      offline: true,
      npmRegistryUrl: "https://registry.npmjs.org",
      mavenRepositoryUrl: "https://repo.maven.apache.org/maven2",
      mavenLocalRepository: join(scratch, "m2"),
      progress: () => {},
    });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

const isMember = (reference: string) => {
  const target = reference.slice(reference.indexOf(" -> ") + 4);
  // A scoped name (@scope/name) carries its own "/" but no "." before the member path.
  const name = target.startsWith("@") ? target.slice(target.indexOf("/") + 1) : target;
  return name.includes(".");
};

const ratio = (part: number, whole: number) => (whole === 0 ? 1 : part / whole);

export function scoreModules(scan: ScanResult, oracle: Oracle): ModuleScore[] {
  const fullNames = new Map(scan.objects.map((o) => [o.id, o.fullName]));
  return Object.entries(oracle.modules).map(([module, listed]) => {
    const prefix = `[${module}]`;
    const found = new Set(
      scan.references
        .filter((r) => r.from.fullName === prefix || r.from.fullName.startsWith(`${prefix}.`))
        .map((r) => `${r.from.fullName} -> ${fullNames.get(r.to)}`),
    );
    const expected = new Set(listed);
    const hits = [...found].filter((r) => expected.has(r));
    const memberFound = [...found].filter(isMember);
    const memberExpected = [...expected].filter(isMember);
    const memberHits = hits.filter(isMember);
    return {
      module,
      expected: expected.size,
      found: found.size,
      truePositives: hits.length,
      precision: ratio(hits.length, found.size),
      recall: ratio(hits.length, expected.size),
      memberPrecision: ratio(memberHits.length, memberFound.length),
      memberRecall: ratio(memberHits.length, memberExpected.length),
      missed: [...expected].filter((r) => !found.has(r)),
      extra: [...found].filter((r) => !expected.has(r)),
    };
  });
}
