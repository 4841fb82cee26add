/**
 * npm: the packument (`<registry>/<name>`) lists the published versions and, in `time`, when each was
 * published. Read as served: a registry mirror that writes its own copy times there gives copy times.
 */
import { packageNameProblem } from "../../domain/package-names.ts";
import type { PublishedVersionInput } from "../../store/input-records.ts";
import type { RegistryFetcher } from "../registry/cached-fetch.ts";
import type { VersionsLookup } from "./lookup.ts";

/**
 * Scoped names keep their `@` and encode the slash, as the registry API wants (`@babel%2fcore`); each
 * part is encoded. A name npm's rules refuse (`../x`, `a?b`) is never looked up: undefined.
 */
export function packumentUrl(registryUrl: string, name: string): string | undefined {
  if (packageNameProblem("npm", name)) return undefined;
  const base = registryUrl.replace(/\/+$/, "");
  const scoped = /^@([^/]+)\/([^/]+)$/.exec(name);
  return scoped
    ? `${base}/@${encodeURIComponent(scoped[1] as string)}%2f${encodeURIComponent(scoped[2] as string)}`
    : `${base}/${encodeURIComponent(name)}`;
}

export async function npmVersions(
  fetcher: RegistryFetcher,
  registryUrl: string,
  name: string,
): Promise<VersionsLookup> {
  const url = packumentUrl(registryUrl, name);
  if (url === undefined)
    return { kind: "failed", reason: `${JSON.stringify(name)} is not a valid npm package name` };
  // The full packument: the abbreviated install format has no per-version `time`.
  const outcome = await fetcher.get(url, {
    headers: { accept: "application/json" },
  });
  if (outcome.kind !== "ok") return outcome;
  let packument: { versions?: Record<string, unknown>; time?: Record<string, unknown> };
  try {
    packument = JSON.parse(outcome.body.toString("utf8"));
  } catch {
    return { kind: "failed", reason: "the registry's answer is not JSON" };
  }
  const time = packument.time ?? {};
  const versions: PublishedVersionInput[] = Object.keys(packument.versions ?? {}).map((version) => {
    const at = time[version];
    const parsed = typeof at === "string" ? new Date(at) : null;
    const releasedAt =
      parsed && !Number.isNaN(parsed.getTime()) ? parsed.toISOString().replace(".000Z", "Z") : null;
    return { version, releasedAt, releasedAtSource: releasedAt === null ? null : "registry" };
  });
  return { kind: "ok", versions };
}
