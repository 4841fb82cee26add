/**
 * The scope of a package version (src/contracts/platform.ts, PACKAGE_SCOPES) as each input states it,
 * and how two statements of the same version merge: the scope under which the version is installed in
 * more situations wins (a version both a production and a dev dependency is production).
 */
import { DEVELOPMENT_SCOPES, MAVEN_SCOPES, NPM_SCOPES, type PackageScope } from "../contracts/platform.ts";

/** Widest first: what a production install keeps before what only some installs keep. */
const NPM_ORDER: readonly PackageScope[] = ["production", "optional", "peer", "dev"];
/** Maven's own order (JavaScopeSelector: compile, runtime, provided, test), system beside provided. */
const MAVEN_ORDER: readonly PackageScope[] = ["compile", "runtime", "provided", "system", "test"];

/** The wider of two scopes of one version (null: not stated, so the other wins). */
export function widerScope(a: PackageScope | null, b: PackageScope | null): PackageScope | null {
  if (a === null) return b;
  if (b === null) return a;
  const order = NPM_ORDER.includes(a) ? NPM_ORDER : MAVEN_ORDER;
  const ia = order.indexOf(a);
  const ib = order.indexOf(b);
  if (ia < 0 || ib < 0) return a; // scopes of two ecosystems never describe one version
  return ia <= ib ? a : b;
}

/** Whether a production install leaves the version out (npm dev, Maven test). */
export function isDevelopmentScope(scope: PackageScope | null): boolean {
  return scope !== null && (DEVELOPMENT_SCOPES as readonly string[]).includes(scope);
}

/**
 * A package-lock.json entry's flags (npm's own): `dev` only in the dev tree; `optional` only in the
 * optional tree; `devOptional` in both the dev and the optional trees (npm --omit=dev still installs it,
 * so it is optional); `peer` only as a peer dependency.
 */
export function npmLockScope(entry: Record<string, unknown>): PackageScope {
  if (entry.dev === true) return "dev";
  if (entry.optional === true || entry.devOptional === true) return "optional";
  if (entry.peer === true) return "peer";
  return "production";
}

/** A Maven scope as POMs write it; anything else (or nothing) is compile, as Maven reads it. */
export function mavenScope(scope: string | undefined): PackageScope {
  return (MAVEN_SCOPES as readonly string[]).includes(scope ?? "") ? (scope as PackageScope) : "compile";
}

export const isNpmScope = (scope: string): scope is PackageScope =>
  (NPM_SCOPES as readonly string[]).includes(scope);
export const isMavenScope = (scope: string): scope is PackageScope =>
  (MAVEN_SCOPES as readonly string[]).includes(scope);
