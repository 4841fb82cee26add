/** Package URLs (purl) of npm and Maven packages, parsed by packageurl-js. */
import { PackageURL } from "packageurl-js";
import type { Ecosystem } from "../../domain/versions/index.ts";

type PurlPackage =
  | { kind: "package"; ecosystem: Ecosystem; name: string; version: string }
  | { kind: "other"; type: string }
  | { kind: "invalid"; reason: string };

export function packageFromPurl(purl: string): PurlPackage {
  let parsed: PackageURL;
  try {
    parsed = PackageURL.fromString(purl);
  } catch (error) {
    return { kind: "invalid", reason: (error as Error).message.split("\n")[0] ?? "invalid package URL" };
  }
  if (parsed.type !== "npm" && parsed.type !== "maven") return { kind: "other", type: parsed.type };
  if (!parsed.version) return { kind: "invalid", reason: `${purl} has no version` };
  if (parsed.type === "npm") {
    const name = parsed.namespace ? `${parsed.namespace}/${parsed.name}` : parsed.name;
    return { kind: "package", ecosystem: "npm", name, version: parsed.version };
  }
  if (!parsed.namespace) return { kind: "invalid", reason: `${purl} has no Maven groupId` };
  return {
    kind: "package",
    ecosystem: "maven",
    name: `${parsed.namespace}:${parsed.name}`,
    version: parsed.version,
  };
}
