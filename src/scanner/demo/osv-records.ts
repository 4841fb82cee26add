/**
 * The demo's advisories (advisories.json: facts of the GitHub Advisory Database, see SOURCES.md) written
 * as the OSV records they come from, so that `imaging demo load` imports them through the same path as
 * `imaging advisories import`: OSV validation, the OSV range algorithm, alias indexing, record revisions.
 * The dataset keeps no CVSS vectors, so each record states its score in `database_specific.cvss_score`.
 */
import type { AdvisoryInput } from "../../store/input-records.ts";

const GHSA_SEVERITY: Record<string, string> = { MEDIUM: "MODERATE" };

export function demoOsvRecord(advisory: AdvisoryInput): Record<string, unknown> {
  const ghsa = advisory.aliases.find((a) => a.startsWith("GHSA-")) ?? advisory.id;
  const published = advisory.publishedAt ?? "2000-01-01T00:00:00Z";
  return {
    schema_version: "1.4.0",
    id: ghsa,
    // Fixed revision: loading the demo twice finds every record unchanged.
    modified: published,
    published,
    aliases: [advisory.id, ...advisory.aliases.filter((a) => a !== ghsa)],
    summary: advisory.summary,
    // The pages every GitHub and NVD advisory has, derived from the ids (the dataset keeps no references).
    references: [
      ...(ghsa.startsWith("GHSA-")
        ? [{ type: "ADVISORY", url: `https://github.com/advisories/${ghsa}` }]
        : []),
      ...(advisory.id.startsWith("CVE-")
        ? [{ type: "ADVISORY", url: `https://nvd.nist.gov/vuln/detail/${advisory.id}` }]
        : []),
    ],
    affected: advisory.affected.map((a) => ({
      package: { ecosystem: a.ecosystem === "maven" ? "Maven" : "npm", name: a.package },
      ...(a.functions ? { ecosystem_specific: { affected_functions: a.functions } } : {}),
      ranges: a.ranges.map((r) => ({
        type: "ECOSYSTEM",
        events: [
          { introduced: r.introduced ?? "0" },
          ...(r.fixed ? [{ fixed: r.fixed }] : r.lastAffected ? [{ last_affected: r.lastAffected }] : []),
        ],
      })),
    })),
    database_specific: {
      severity: GHSA_SEVERITY[advisory.severity] ?? advisory.severity,
      ...(advisory.cvssScore === null ? {} : { cvss_score: advisory.cvssScore }),
    },
  };
}
