/**
 * Maven: `maven-metadata.xml` lists the versions. Release dates, the earliest trustworthy time of two:
 * - the `Last-Modified` of the version's POM signature (`<artifact>-<version>.pom.asc`) where the
 *   repository sends one (source "last-modified"), otherwise the creation time inside that OpenPGP
 *   signature (source "signature"), i.e. when the release was signed for upload (Maven Central as reached
 *   here sends no Last-Modified). OpenPGP v4 signatures and the v3 ones GnuPG 1.x wrote before ~2012;
 * - when the version's jar was packaged, from its entries' times (source "archive-entries"): earlier
 *   than the signature for artifacts signed again years after their release.
 * Two small requests per version, both kept between scans; a version with neither keeps no date.
 */
import { XMLParser } from "fast-xml-parser";
import type { ReleaseDateSource } from "../../contracts/platform.ts";
import { packageNameProblem, versionProblem } from "../../domain/package-names.ts";
import type { PublishedVersionInput } from "../../store/input-records.ts";
import { artifactFileUrl, repositoryUrl } from "../maven/coordinates.ts";
import { remoteJarPackagedAt } from "../maven/packaged-at.ts";
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
    releases.map(async (version) => {
      const gav = { groupId, artifactId, version };
      const [signed, packagedMs] = await Promise.all([
        signedAt(fetcher, `${repositoryUrl(registryBase, gav, "pom")}.asc`),
        remoteJarPackagedAt(fetcher, repositoryUrl(registryBase, gav, "jar")),
      ]);
      const dated = earliest(signed, packagedMs);
      return { version, releasedAt: dated?.at ?? null, releasedAtSource: dated?.source ?? null };
    }),
  );
  return { kind: "ok", versions };
}

async function signedAt(fetcher: RegistryFetcher, url: string): Promise<Dated | null> {
  const outcome = await fetcher.get(url, { immutable: true });
  if (outcome.kind !== "ok") return null;
  const lastModified = outcome.headers.get("last-modified");
  if (lastModified && !Number.isNaN(Date.parse(lastModified))) {
    return { at: iso(new Date(lastModified)), source: "last-modified" };
  }
  const created = await signatureCreatedAt(outcome.body.toString("utf8"));
  return created === null ? null : { at: iso(created), source: "signature" };
}

type Dated = { at: string; source: ReleaseDateSource };

/**
 * Entry times are mostly DOS times, the builder's local time without its zone: up to 14 hours off UTC.
 * A packaging time less than that before the signature is the same release day, and the signature's
 * exact time stands; one further back means the artifact was signed (again) later than it was released.
 */
const ZONE_UNCERTAINTY_MS = 14 * 60 * 60 * 1000;

/** The earliest trustworthy of the signature's (or Last-Modified's) time and the jar's packaging time. */
function earliest(signed: Dated | null, packagedMs: number | null): Dated | null {
  if (packagedMs === null) return signed;
  if (signed !== null && packagedMs > Date.parse(signed.at) - ZONE_UNCERTAINTY_MS) return signed;
  return { at: iso(new Date(packagedMs)), source: "archive-entries" };
}

/** When an armored OpenPGP signature was made: its first signature packet's creation time, v3 or v4. */
export async function signatureCreatedAt(armored: string): Promise<Date | null> {
  try {
    // Loaded here, not with the module: every service start loads this module, few ever read a signature.
    const { readSignature } = await import("openpgp");
    const packet = (await readSignature({ armoredSignature: armored })).packets[0] as
      | { created?: unknown; rawContent?: unknown }
      | undefined;
    if (packet?.created instanceof Date) {
      return Number.isNaN(packet.created.getTime()) ? null : packet.created;
    }
    // openpgp.js parses v4+ only and keeps a v3 packet unparsed (RFC 4880 5.2.2): version 3, hashed
    // length 5, signature type, then the creation time as 4 bytes of seconds since 1970, big-endian.
    const raw = packet?.rawContent;
    if (raw instanceof Uint8Array && raw.length >= 7 && raw[0] === 3 && raw[1] === 5) {
      const seconds = Buffer.from(raw.subarray(3, 7)).readUInt32BE(0);
      return seconds > 0 ? new Date(seconds * 1000) : null;
    }
    return null;
  } catch {
    return null;
  }
}

const iso = (date: Date) => date.toISOString().replace(".000Z", "Z");
