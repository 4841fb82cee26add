/**
 * A CycloneDX 1.6 SBOM (JSON) of one analysis: the package versions in use as components (purls), the
 * advisories affecting them as vulnerabilities (ids, aliases, ratings, affects, the upgrade to make),
 * and what no package-level scanner says — which of each package's external objects the application's
 * own objects refer to, as `evidence.occurrences` (one per reference) and `evidence.callstack` (the
 * caller → callee frames of one reference, preferring one that reaches a function an advisory names).
 * `evidence.identity` names the lockfiles or manifests each package was read from.
 *
 * Written as plain JSON: @cyclonedx/cyclonedx-library (10.3) has no model for evidence occurrences or
 * call stacks. The tests check the documents against the 1.6 JSON schema it ships; the export does not
 * (the schema's uniqueItems on components and vulnerabilities make validation quadratic in their number).
 */
import { randomUUID } from "node:crypto";
import { PackageURL } from "packageurl-js";
import { SCOPE_UNKNOWN } from "../../contracts/platform.ts";
import { memberOfObject } from "../../store/affected-functions.ts";
import type { AnalysisExport, ExportedPackage, ExportedReference } from "../../store/analysis-export.ts";

interface CycloneDxOptions {
  application: { name: string; description: string };
  analyzedAt: string;
  tool: { name: string; version: string };
  /** When the document is made (default: now). */
  timestamp?: string;
  serialNumber?: string;
}

type Json = Record<string, unknown>;

const SEVERITY: Record<string, string> = {
  CRITICAL: "critical",
  HIGH: "high",
  MEDIUM: "medium",
  LOW: "low",
};

/** Where an id is published: CVE at NVD, GHSA at GitHub, other OSV ids (MAL-...) at osv.dev. */
function sourceOf(id: string): { name: string; url: string } {
  if (/^CVE-\d{4}-\d+$/i.test(id)) return { name: "NVD", url: `https://nvd.nist.gov/vuln/detail/${id}` };
  if (/^GHSA-/i.test(id)) return { name: "GitHub", url: `https://github.com/advisories/${id}` };
  return { name: "OSV", url: `https://osv.dev/vulnerability/${encodeURIComponent(id)}` };
}

export function purlOf(p: Pick<ExportedPackage, "ecosystem" | "name" | "version">): string {
  const { group, name } = coordinates(p);
  return new PackageURL(p.ecosystem, group ?? undefined, name, p.version, undefined, undefined).toString();
}

/** npm scopes and Maven groupIds are the component's group, as CycloneDX tools write them. */
function coordinates(p: Pick<ExportedPackage, "ecosystem" | "name">): { group: string | null; name: string } {
  if (p.ecosystem === "maven") {
    const colon = p.name.indexOf(":");
    return { group: p.name.slice(0, colon), name: p.name.slice(colon + 1) };
  }
  const slash = p.name.startsWith("@") ? p.name.indexOf("/") : -1;
  return slash > 0
    ? { group: p.name.slice(0, slash), name: p.name.slice(slash + 1) }
    : { group: null, name: p.name };
}

/**
 * CycloneDX's component scope for a package scope: what a production install or runtime needs is
 * required; npm optional and Maven provided and system (present at run time, not shipped) are optional;
 * npm dev and Maven test are excluded (the spec: "for test and other non-runtime purposes"). Unknown: no
 * scope (CycloneDX reads a missing one as required). The exact scope is in the `imaging:scope` property.
 */
function cycloneDxScope(scope: string | null): "required" | "optional" | "excluded" | undefined {
  switch (scope) {
    case "production":
    case "peer":
    case "compile":
    case "runtime":
      return "required";
    case "optional":
    case "provided":
    case "system":
      return "optional";
    case "dev":
    case "test":
      return "excluded";
    default:
      return undefined;
  }
}

/** Types that enclose code rather than being a callable of it (`JV_CLASS`, `JS_MODULE`...). */
const ENCLOSING = /(CLASS|INTERFACE|ENUM|MODULE|FILE|PACKAGE)$/;
const FIELD = /FIELD$/;

/**
 * A frame of an object: a class or module is the frame's module; a method or function is the frame's
 * function in the module its full name names; a field is a frame of its class (fields are not called).
 */
function frame(
  object: { name: string; fullName: string; typeId: string; mangling?: string },
  namespace: (module: string) => string | undefined,
): Json {
  const member =
    !ENCLOSING.test(object.typeId) && object.name !== "" && object.fullName.endsWith(`.${object.name}`);
  const module = member ? object.fullName.slice(0, -(object.name.length + 1)) : object.fullName;
  const pkg = namespace(module);
  const callable = member && !FIELD.test(object.typeId);
  return {
    ...(pkg ? { package: pkg } : {}),
    module,
    ...(callable ? { function: object.name } : {}),
    ...(callable && object.mangling ? { parameters: [object.mangling] } : {}),
  };
}

/** Java classes live in the package their binary name starts with. */
const javaPackage = (module: string) => {
  const dot = module.lastIndexOf(".");
  return dot > 0 ? module.slice(0, dot) : undefined;
};
const isJava = (typeId: string) => typeId.startsWith("JV_");

export function buildCycloneDx(analysis: AnalysisExport, options: CycloneDxOptions): Json {
  const applicationRef = `application:${options.application.name}`;
  const refs = new Map(analysis.packages.map((p) => [p.versionId, purlOf(p)]));
  // Each version's own references: an object belongs to the version the referring code loads.
  const referencesOf = new Map<number, ExportedReference[]>();
  for (const r of analysis.references)
    referencesOf.set(r.versionId, [...(referencesOf.get(r.versionId) ?? []), r]);
  const packageNames = new Map(analysis.packages.map((p) => [p.packageId, p.name]));

  /** Does the reference's target match a function the vulnerability names for its package? */
  const reaches = (v: AnalysisExport["vulnerabilities"][number], r: ExportedReference) => {
    const named = v.functions.get(r.packageId) ?? [];
    const member = memberOfObject(packageNames.get(r.packageId) ?? "", r.target.fullName);
    return named.filter((f) => f.member === member).map((f) => f.function);
  };
  const vulnerabilitiesOf = (p: ExportedPackage) =>
    analysis.vulnerabilities.filter((v) => v.versionIds.includes(p.versionId));

  const components = analysis.packages.map((p) => {
    const { group, name } = coordinates(p);
    const references = referencesOf.get(p.versionId) ?? [];
    const reaching = references.find((r) => vulnerabilitiesOf(p).some((v) => reaches(v, r).length > 0));
    const stacked = reaching ?? references[0];
    const evidence: Json = {};
    if (p.sources.length > 0) {
      // Where the scanner read the package: the lockfile, POM, archive or SBOM (as cdxgen records it).
      evidence.identity = [
        {
          field: "purl",
          confidence: 1,
          methods: p.sources.map((source) => ({
            technique: "manifest-analysis",
            confidence: 1,
            value: source,
          })),
        },
      ];
    }
    if (references.length > 0) {
      evidence.occurrences = references.map((r) => ({
        location: r.source.fullName,
        symbol: r.target.fullName,
        additionalContext:
          `${r.source.type} ${r.source.fullName} refers to ${r.target.type} ${r.target.fullName}` +
          (r.target.mangling ? ` ${r.target.mangling}` : ""),
      }));
    }
    if (stacked) {
      // Innermost first, as stack traces are written: the package's object, then its caller.
      evidence.callstack = {
        frames: [
          frame(stacked.target, (module) =>
            p.ecosystem === "maven" && isJava(stacked.target.typeId) ? javaPackage(module) : p.name,
          ),
          frame(stacked.source, (module) =>
            isJava(stacked.source.typeId) ? javaPackage(module) : undefined,
          ),
        ],
      };
    }
    const properties = [
      { name: "imaging:scope", value: p.scope ?? SCOPE_UNKNOWN },
      p.releasedAt ? { name: "imaging:releaseDate", value: p.releasedAt } : null,
      p.releasedAt && p.releasedAtSource
        ? { name: "imaging:releaseDateSource", value: p.releasedAtSource }
        : null,
      p.saferClosestVersion ? { name: "imaging:saferClosestVersion", value: p.saferClosestVersion } : null,
      p.safestVersion ? { name: "imaging:safestVersion", value: p.safestVersion } : null,
    ].filter((x) => x !== null);
    return {
      type: "library",
      "bom-ref": refs.get(p.versionId),
      ...(group ? { group } : {}),
      name,
      version: p.version,
      ...(cycloneDxScope(p.scope) ? { scope: cycloneDxScope(p.scope) } : {}),
      purl: refs.get(p.versionId),
      ...(Object.keys(evidence).length > 0 ? { evidence } : {}),
      ...(properties.length > 0 ? { properties } : {}),
    };
  });

  const vulnerabilities = analysis.vulnerabilities.map((v) => {
    const affected = analysis.packages.filter((p) => v.versionIds.includes(p.versionId));
    const properties: { name: string; value: string }[] = [];
    for (const p of affected) {
      const named = v.functions.get(p.packageId) ?? [];
      for (const f of named)
        properties.push({ name: "imaging:affectedFunction", value: `${p.name}: ${f.function}` });
      if (named.length === 0) continue;
      const reaching = (referencesOf.get(p.versionId) ?? []).filter((r) => reaches(v, r).length > 0);
      properties.push({
        name: "imaging:reachesAffectedFunction",
        value: `${p.name}@${p.version}: ${reaching.length > 0}`,
      });
      for (const r of reaching) {
        properties.push({
          name: "imaging:reachingReference",
          value: `${r.source.fullName} -> ${r.target.fullName}`,
        });
      }
    }
    const recommendation = affected
      .map((p) =>
        p.saferClosestVersion
          ? `Upgrade ${p.name} ${p.version} to ${p.saferClosestVersion} (the smallest upgrade with no known vulnerability).`
          : `No version of ${p.name} without known vulnerabilities is known.`,
      )
      .join(" ");
    const severity = SEVERITY[v.severity] ?? "unknown";
    return {
      "bom-ref": `vulnerability:${v.cveId}`,
      id: v.cveId,
      source: sourceOf(v.cveId),
      ...(v.aliases.length > 0 ? { references: v.aliases.map((id) => ({ id, source: sourceOf(id) })) } : {}),
      ratings: [v.cvssScore === null ? { severity } : { score: v.cvssScore, severity }],
      ...(v.summary ? { description: v.summary } : {}),
      ...(recommendation ? { recommendation } : {}),
      ...(v.publishedAt ? { published: v.publishedAt } : {}),
      affects: affected.map((p) => ({
        ref: refs.get(p.versionId),
        versions: [{ version: p.version, status: "affected" }],
      })),
      ...(properties.length > 0 ? { properties } : {}),
    };
  });

  return {
    bomFormat: "CycloneDX",
    specVersion: "1.6",
    serialNumber: options.serialNumber ?? `urn:uuid:${randomUUID()}`,
    version: 1,
    metadata: {
      timestamp: options.timestamp ?? new Date().toISOString(),
      tools: {
        components: [{ type: "application", name: options.tool.name, version: options.tool.version }],
      },
      component: {
        type: "application",
        "bom-ref": applicationRef,
        name: options.application.name,
        ...(options.application.description ? { description: options.application.description } : {}),
      },
      properties: [{ name: "imaging:analyzedAt", value: options.analyzedAt }],
    },
    components,
    dependencies: [{ ref: applicationRef, dependsOn: components.map((c) => c["bom-ref"]) }],
    vulnerabilities,
  };
}
