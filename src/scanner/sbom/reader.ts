/**
 * SBOMs made elsewhere: CycloneDX 1.4–1.6 JSON and SPDX 2.3 JSON. Packages are taken from their package
 * URLs (purl); components of other ecosystems and components without a purl are counted in a warning.
 */
import type { PackageScope } from "../../contracts/platform.ts";
import { displayPath, isObject, lineOf, parseJson, readText } from "../input-files.ts";
import { type InputReader, type Inventory, type InventoryPackage, ScanInputError } from "../inventory.ts";
import { packageFromPurl } from "./purl.ts";

/** bom.json, sbom.json, *.cdx.json, *.bom.json, *.spdx.json, *-cyclonedx.json and the like. */
const SBOM_NAME = /(^|[./_-])(bom|sbom|cdx|spdx|cyclonedx)\.json$/i;

export const sbomReader: InputReader = {
  name: "sbom",
  claims: (relativePath) => SBOM_NAME.test(relativePath.slice(relativePath.lastIndexOf("/") + 1)),
  async read(files, context) {
    const inventory: Inventory = { packages: [], warnings: [] };
    for (const file of files) {
      const shown = displayPath(context.root, file);
      context.progress(`reading ${shown}`);
      const text = readText(file, shown);
      const read = readSbom(text, shown);
      // One at a time: spreading a large SBOM's packages into push() overflows the stack.
      for (const p of read.packages) inventory.packages.push(p);
      for (const w of read.warnings) inventory.warnings.push(w);
    }
    return inventory;
  },
};

interface Candidate {
  purl: unknown;
  dev: boolean;
  /** What the document says of the component's scope (sbomScope); null: nothing. */
  scope: "required" | "optional" | "excluded" | null;
  direct: boolean;
  label: string;
  /** The name the document spells out beside the purl (CycloneDX group/name, SPDX name). */
  name: string | undefined;
}

export function readSbom(text: string, shown: string): Inventory {
  const document = parseJson(text, shown);
  if (!isObject(document)) throw new ScanInputError(shown, "is neither a CycloneDX nor an SPDX document", 1);
  const candidates =
    document.bomFormat === "CycloneDX"
      ? cycloneDxComponents(document, text, shown)
      : typeof document.spdxVersion === "string"
        ? spdxPackages(document, text, shown)
        : undefined;
  if (!candidates) {
    throw new ScanInputError(
      shown,
      'is neither a CycloneDX ("bomFormat") nor an SPDX ("spdxVersion") document',
      1,
    );
  }
  const packages: InventoryPackage[] = [];
  const warnings: Inventory["warnings"] = [];
  const others = new Map<string, number>();
  let withoutPurl = 0;
  for (const candidate of candidates) {
    if (typeof candidate.purl !== "string" || candidate.purl === "") {
      withoutPurl++;
      continue;
    }
    const found = packageFromPurl(candidate.purl);
    if (found.kind === "other") others.set(found.type, (others.get(found.type) ?? 0) + 1);
    else if (found.kind === "invalid") {
      warnings.push({
        file: shown,
        line: lineOf(text, candidate.purl),
        message: `${candidate.label}: ${found.reason}, skipped`,
      });
    } else {
      const { ecosystem, version } = found;
      // purls lower-case npm names, yet the registry keeps a few legacy mixed-case ones (JSONStream).
      const name =
        ecosystem === "npm" && candidate.name?.toLowerCase() === found.name ? candidate.name : found.name;
      packages.push({
        ecosystem,
        name,
        version,
        dev: candidate.dev,
        scope: sbomScope(ecosystem, candidate),
        direct: candidate.direct,
        source: shown,
      });
    }
  }
  if (others.size > 0) {
    const list = [...others].map(([type, count]) => `${type} ${count}`).join(", ");
    const total = [...others.values()].reduce((a, b) => a + b, 0);
    warnings.push({ file: shown, message: `${total} components of other ecosystems skipped (${list})` });
  }
  if (withoutPurl > 0) {
    warnings.push({ file: shown, message: `${withoutPurl} components without a package URL (purl) skipped` });
  }
  return { packages, warnings };
}

/**
 * CycloneDX's scope (SPDX's dev and test edges read as "excluded") in the ecosystem's terms: excluded is
 * npm's dev and Maven's test; optional and required are npm's optional and production. A Maven
 * component's required or optional says nothing of compile, runtime or provided: unknown.
 */
function sbomScope(ecosystem: "npm" | "maven", candidate: Candidate): PackageScope | null {
  if (candidate.scope === "excluded") return ecosystem === "npm" ? "dev" : "test";
  if (ecosystem === "maven" || candidate.scope === null) return null;
  return candidate.scope === "optional" ? "optional" : "production";
}

const CYCLONEDX_VERSIONS = new Set(["1.4", "1.5", "1.6"]);

function cycloneDxComponents(bom: Record<string, unknown>, text: string, shown: string): Candidate[] {
  if (!CYCLONEDX_VERSIONS.has(String(bom.specVersion))) {
    throw new ScanInputError(
      shown,
      `CycloneDX specVersion ${JSON.stringify(bom.specVersion)} is not supported (1.4, 1.5 and 1.6 are read)`,
      lineOf(text, '"specVersion"'),
    );
  }
  if (bom.components !== undefined && !Array.isArray(bom.components)) {
    throw new ScanInputError(shown, '"components" is not an array', lineOf(text, '"components"'));
  }
  const metadata = isObject(bom.metadata) ? bom.metadata : {};
  const rootRef = isObject(metadata.component) ? metadata.component["bom-ref"] : undefined;
  const directRefs = new Set<unknown>();
  if (Array.isArray(bom.dependencies)) {
    for (const dependency of bom.dependencies) {
      if (isObject(dependency) && dependency.ref === rootRef && Array.isArray(dependency.dependsOn)) {
        for (const ref of dependency.dependsOn) directRefs.add(ref);
      }
    }
  }
  const candidates: Candidate[] = [];
  const visit = (components: unknown[]) => {
    for (const component of components) {
      if (!isObject(component))
        throw new ScanInputError(shown, "a component is not an object", lineOf(text, '"components"'));
      const properties = Array.isArray(component.properties) ? component.properties : [];
      // @cyclonedx/cyclonedx-npm marks devDependencies with this property; the spec's scope says "excluded".
      const dev =
        component.scope === "excluded" ||
        properties.some((p) => isObject(p) && p.name === "cdx:npm:package:development" && p.value === "true");
      candidates.push({
        purl: component.purl,
        dev,
        scope: dev
          ? "excluded"
          : component.scope === "optional" || component.scope === "required"
            ? component.scope
            : null,
        direct: component["bom-ref"] !== undefined && directRefs.has(component["bom-ref"]),
        label: `component ${String(component.name)}`,
        name:
          typeof component.name === "string"
            ? typeof component.group === "string" && component.group !== ""
              ? `${component.group}/${component.name}`
              : component.name
            : undefined,
      });
      if (Array.isArray(component.components)) visit(component.components);
    }
  };
  visit(Array.isArray(bom.components) ? bom.components : []);
  return candidates;
}

function spdxPackages(spdx: Record<string, unknown>, text: string, shown: string): Candidate[] {
  if (spdx.spdxVersion !== "SPDX-2.3") {
    throw new ScanInputError(
      shown,
      `${JSON.stringify(spdx.spdxVersion)} is not supported (SPDX-2.3 JSON is read)`,
      lineOf(text, '"spdxVersion"'),
    );
  }
  if (!Array.isArray(spdx.packages))
    throw new ScanInputError(shown, '"packages" is missing or not an array', lineOf(text, '"packages"'));
  const described = new Set<unknown>(Array.isArray(spdx.documentDescribes) ? spdx.documentDescribes : []);
  const relationships = Array.isArray(spdx.relationships) ? spdx.relationships.filter(isObject) : [];
  for (const r of relationships) {
    if (r.relationshipType === "DESCRIBES" && r.spdxElementId === spdx.SPDXID)
      described.add(r.relatedSpdxElement);
  }
  // The dependency graph, parent → child: `A DEPENDS_ON B` and `B *_DEPENDENCY_OF A` / `B PREREQUISITE_FOR A`.
  // Dev: reachable from the application only through a dev or test edge (npm sbom marks the direct ones).
  const edges = new Map<unknown, { child: unknown; dev: boolean }[]>();
  const link = (parent: unknown, child: unknown, dev: boolean) =>
    edges.set(parent, [...(edges.get(parent) ?? []), { child, dev }]);
  for (const r of relationships) {
    const type = String(r.relationshipType);
    if (type === "DEPENDS_ON") link(r.spdxElementId, r.relatedSpdxElement, false);
    else if (type.endsWith("DEPENDENCY_OF") || type === "PREREQUISITE_FOR") {
      link(
        r.relatedSpdxElement,
        r.spdxElementId,
        type === "DEV_DEPENDENCY_OF" || type === "TEST_DEPENDENCY_OF",
      );
    }
  }
  const direct = new Set<unknown>(
    [...described].flatMap((root) => (edges.get(root) ?? []).map((e) => e.child)),
  );
  const reach = (throughDev: boolean) => {
    const seen = new Set<unknown>();
    const stack = [...described];
    while (stack.length > 0) {
      const id = stack.pop();
      if (seen.has(id)) continue;
      seen.add(id);
      for (const edge of edges.get(id) ?? []) if (throughDev || !edge.dev) stack.push(edge.child);
    }
    return seen;
  };
  const production = reach(false);
  const linked = reach(true);
  const candidates: Candidate[] = [];
  for (const pkg of spdx.packages) {
    if (!isObject(pkg))
      throw new ScanInputError(shown, "a package is not an object", lineOf(text, '"packages"'));
    if (described.has(pkg.SPDXID)) continue; // the application itself
    const refs = Array.isArray(pkg.externalRefs) ? pkg.externalRefs.filter(isObject) : [];
    const purl = refs.find((r) => r.referenceType === "purl")?.referenceLocator;
    const dev = linked.has(pkg.SPDXID) && !production.has(pkg.SPDXID);
    candidates.push({
      purl,
      dev,
      scope: dev ? "excluded" : null,
      direct: direct.has(pkg.SPDXID),
      label: `package ${String(pkg.name)}`,
      name: typeof pkg.name === "string" ? pkg.name : undefined,
    });
  }
  return candidates;
}
