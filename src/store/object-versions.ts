/**
 * Which version of its package an external object belongs to: the version the referring code loads. The
 * analysis says it (`version`); documents of earlier scanners did not, and stores written before it was
 * recorded (migration 024) did not keep it, so the same rule reads it back from what they hold.
 */
import { parsePackageKey } from "./input-records.ts";

/**
 * The version an object's id names, as imaging-services' JavaScript extractor has always written npm ids
 * (`npm:lodash@4.17.15:lodash.merge`): undefined for any other id.
 */
export function versionNamedById(id: string, packageKey: string): string | undefined {
  const { ecosystem, name } = parsePackageKey(packageKey);
  if (ecosystem !== "npm") return undefined;
  const prefix = `npm:${name}@`;
  if (!id.startsWith(prefix)) return undefined;
  const rest = id.slice(prefix.length);
  const colon = rest.indexOf(":");
  return colon > 0 ? rest.slice(0, colon) : undefined;
}

export type ObjectVersion =
  | { ok: true; version: string }
  | { ok: false; reason: "not-used" | "ambiguous"; versions: readonly string[] };

/**
 * The version of an object among `versions`, the versions of its package in the analysis: the stated
 * one (it must be one of them), else the one its id names, else the only one.
 */
export function objectVersion(
  object: { id: string; package: string; version?: string | undefined },
  versions: readonly string[],
): ObjectVersion {
  if (object.version !== undefined) {
    return versions.includes(object.version)
      ? { ok: true, version: object.version }
      : { ok: false, reason: "not-used", versions };
  }
  const named = versionNamedById(object.id, object.package);
  if (named !== undefined && versions.includes(named)) return { ok: true, version: named };
  if (versions.length === 1) return { ok: true, version: versions[0] as string };
  return { ok: false, reason: "ambiguous", versions };
}
