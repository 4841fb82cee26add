/** The fuzz targets: one per parser of untrusted input (test/fuzz/targets/<name>.ts, seeds in seeds/<name>/). */
export interface FuzzTarget {
  name: string;
  /** What it parses, for the report. */
  parses: string;
  /** Longest input libFuzzer makes (bytes): above the largest seed, below sizes that are only slow. */
  maxLen: number;
  /** The target is a promise-returning function (Jazzer's async mode). */
  async?: boolean;
}

export const FUZZ_TARGETS: readonly FuzzTarget[] = [
  { name: "npm-package-lock", parses: "package-lock.json / npm-shrinkwrap.json v1–v3", maxLen: 32_768 },
  { name: "npm-yarn-lock", parses: "yarn.lock, classic and Berry", maxLen: 16_384 },
  { name: "npm-pnpm-lock", parses: "pnpm-lock.yaml 6 and 9", maxLen: 16_384 },
  { name: "npm-package-json", parses: "package.json (dependencies, workspaces globs)", maxLen: 8_192 },
  { name: "maven-pom", parses: "pom.xml, validated and lenient", maxLen: 24_576 },
  { name: "maven-model", parses: "POM with parents and BOMs, resolved", maxLen: 49_152, async: true },
  {
    name: "gradle-lockfile",
    parses: "gradle.lockfile and legacy per-configuration lockfiles",
    maxLen: 16_384,
  },
  { name: "java-class-file", parses: ".class files (constant pool, bytecode, descriptors)", maxLen: 8_192 },
  {
    name: "maven-archive",
    parses: "jar/war/ear: nested jars, zip64, prefixed zips, embedded POMs",
    maxLen: 98_304,
    async: true,
  },
  { name: "osv-record", parses: "OSV/GHSA records (one or an array)", maxLen: 16_384 },
  { name: "sbom", parses: "CycloneDX 1.4–1.6 and SPDX 2.3 JSON", maxLen: 24_576 },
  {
    name: "cimd-document",
    parses: "CIMD client_id, redirect_uri, Cache-Control and document",
    maxLen: 8_192,
    async: true,
  },
  {
    name: "js-extractor",
    parses: "JavaScript/TypeScript sources (oxc-parser + extractor walk)",
    maxLen: 16_384,
  },
];
