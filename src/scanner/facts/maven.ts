/**
 * Maven: `maven-metadata.xml` lists the versions. Release dates: the `Last-Modified` of the version's
 * POM signature (`<artifact>-<version>.pom.asc`) where the repository sends one; otherwise the creation
 * time inside that OpenPGP signature, i.e. when the release was signed for upload (Maven Central as
 * reached here sends no Last-Modified). One small, immutable, cached request per version; a version
 * without a signature (uploads before Central required them) keeps no date.
 */
import { XMLParser } from "fast-xml-parser";
import type { PublishedVersionInput } from "../../store/input-records.ts";
import type { RegistryFetcher } from "../registry/cached-fetch.ts";
import type { VersionsLookup } from "./lookup.ts";

const xml = new XMLParser({
  ignoreAttributes: true,
  parseTagValue: false,
  isArray: (name) => name === "version",
});

function mavenBaseUrl(repositoryUrl: string, name: string): string | null {
  const [groupId, artifactId, ...rest] = name.split(":");
  if (!groupId || !artifactId || rest.length > 0) return null;
  return `${repositoryUrl.replace(/\/+$/, "")}/${groupId.replaceAll(".", "/")}/${artifactId}`;
}

export async function mavenVersions(
  fetcher: RegistryFetcher,
  repositoryUrl: string,
  name: string,
): Promise<VersionsLookup> {
  const base = mavenBaseUrl(repositoryUrl, name);
  if (base === null) return { kind: "failed", reason: `'${name}' is not groupId:artifactId` };
  const artifactId = name.split(":")[1] as string;
  const outcome = await fetcher.get(`${base}/maven-metadata.xml`);
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
  const releases = [...new Set(listed)].filter((v) => v !== "" && !/-SNAPSHOT$/i.test(v));
  const versions: PublishedVersionInput[] = await Promise.all(
    releases.map(async (version) => ({
      version,
      releasedAt: await signedAt(fetcher, `${base}/${version}/${artifactId}-${version}.pom.asc`),
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
