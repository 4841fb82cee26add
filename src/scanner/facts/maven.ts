/**
 * Maven: `maven-metadata.xml` lists the versions. Release dates: the `Last-Modified` of the version's
 * POM signature (`<artifact>-<version>.pom.asc`) where the repository sends one; otherwise the creation
 * time inside that OpenPGP signature, i.e. when the release was signed for upload (Maven Central as
 * reached here sends no Last-Modified). One small, immutable, cached request per version; a version
 * without a signature (uploads before Central required them) keeps no date.
 */
import { XMLParser } from "fast-xml-parser";
import { packageNameProblem, versionProblem } from "../../domain/package-names.ts";
import type { PublishedVersionInput } from "../../store/input-records.ts";
import { artifactFileUrl, repositoryUrl } from "../maven/coordinates.ts";
import type { RegistryFetcher } from "../registry/cached-fetch.ts";
import type { VersionsLookup } from "./lookup.ts";

const xml = new XMLParser({
  ignoreAttributes: true,
  parseTagValue: false,
  isArray: (name) => name === "version",
});

export async function mavenVersions(
  fetcher: RegistryFetcher,
  registryBase: string,
  name: string,
): Promise<VersionsLookup> {
  const problem = packageNameProblem("maven", name);
  if (problem) return { kind: "failed", reason: `${JSON.stringify(name)} ${problem}` };
  const [groupId, artifactId] = name.split(":") as [string, string];
  const outcome = await fetcher.get(artifactFileUrl(registryBase, groupId, artifactId, "maven-metadata.xml"));
  if (outcome.kind !== "ok") return outcome;
  let listed: string[];
  try {
    const metadata = xml.parse(outcome.body.toString("utf8")) as {
      metadata?: { versioning?: { versions?: { version?: string[] } } };
    };
    listed = (metadata.metadata?.versioning?.versions?.version ?? []).map((v) => String(v).trim());
  } catch {
    return { kind: "failed", reason: "the repository's maven-metadata.xml is not XML" };
  }
  // A version the repository lists but Maven would refuse (`../x`) is no release: never looked up.
  const releases = [...new Set(listed)].filter(
    (v) => v !== "" && !/-SNAPSHOT$/i.test(v) && versionProblem("maven", v) === undefined,
  );
  const versions: PublishedVersionInput[] = await Promise.all(
    releases.map(async (version) => ({
      version,
      releasedAt: await signedAt(
        fetcher,
        `${repositoryUrl(registryBase, { groupId, artifactId, version }, "pom")}.asc`,
      ),
    })),
  );
  return { kind: "ok", versions };
}

async function signedAt(fetcher: RegistryFetcher, url: string): Promise<string | null> {
  const outcome = await fetcher.get(url, { immutable: true });
  if (outcome.kind !== "ok") return null;
  const lastModified = outcome.headers.get("last-modified");
  if (lastModified && !Number.isNaN(Date.parse(lastModified))) return iso(new Date(lastModified));
  try {
    // Loaded here, not with the module: every service start loads this module, few ever read a signature.
    const { readSignature } = await import("openpgp");
    const signature = await readSignature({ armoredSignature: outcome.body.toString("utf8") });
    const created = signature.packets[0]?.created;
    return created instanceof Date && !Number.isNaN(created.getTime()) ? iso(created) : null;
  } catch {
    return null;
  }
}

const iso = (date: Date) => date.toISOString().replace(".000Z", "Z");
