/**
 * The tools users would pick instead of our scanner for an inventory, installed once into
 * ~/.cache/imaging-ci/peers at pinned versions and run on the same inputs:
 *
 * - cdxgen (`@cyclonedx/cdxgen` from npm), `-t js` on an npm application, `-t java` on a Maven input;
 * - Syft, built from the Go module proxy with `go install` (needs a Go toolchain; without one the peer is
 *   reported as unavailable, never silently dropped).
 *
 * Both write CycloneDX JSON; an inventory is read from the components' package URLs.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { withCacheLockSync } from "../cache-lock.ts";

export const PEERS_DIR = join(
  process.env.IMAGING_CI_CACHE ?? join(homedir(), ".cache", "imaging-ci"),
  "peers",
);
export const CDXGEN_VERSION = "12.8.4";
export const SYFT_VERSION = "v1.57.2";

/** cdxgen's entry point, installed once with npm. */
export function cdxgen(): string {
  const dir = join(PEERS_DIR, `cdxgen-${CDXGEN_VERSION}`);
  const bin = join(dir, "node_modules", "@cyclonedx", "cdxgen", "bin", "cdxgen.js");
  if (existsSync(bin)) return bin;
  return withCacheLockSync(dir, () => {
    if (existsSync(bin)) return bin;
    mkdirSync(dir, { recursive: true });
    const r = spawnSync(
      "npm",
      [
        "install",
        "--prefix",
        dir,
        "--no-audit",
        "--no-fund",
        "--ignore-scripts",
        `@cyclonedx/cdxgen@${CDXGEN_VERSION}`,
      ],
      { encoding: "utf8", timeout: 900_000 },
    );
    if (r.status !== 0) throw new Error(`corpus setup: npm install cdxgen failed: ${r.stderr.slice(-1500)}`);
    return bin;
  });
}

/** Syft's binary, built once from the Go module proxy; undefined (with the reason) when it cannot be. */
export function syft(): { bin?: string; unavailable?: string } {
  const gobin = join(PEERS_DIR, "go-bin");
  const bin = join(gobin, "syft");
  if (existsSync(bin)) return { bin };
  if (spawnSync("go", ["version"]).status !== 0) return { unavailable: "no Go toolchain on PATH" };
  return withCacheLockSync(bin, () => {
    if (existsSync(bin)) return { bin };
    const r = spawnSync("go", ["install", `github.com/anchore/syft/cmd/syft@${SYFT_VERSION}`], {
      encoding: "utf8",
      env: { ...process.env, GOBIN: gobin },
      timeout: 3_600_000,
    });
    return r.status === 0 && existsSync(bin)
      ? { bin }
      : { unavailable: `go install syft ${SYFT_VERSION} failed: ${(r.stderr ?? "").slice(-300)}` };
  });
}

export interface PeerRun {
  ms: number;
  /** `name@version` (npm) or `groupId:artifactId@version` (Maven) of every component. */
  packages: Set<string>;
  error?: string;
}

/** Runs a command, resolving with its wall time; the output file is read by the caller. */
export function timed(command: string, args: string[], env: NodeJS.ProcessEnv, cwd?: string) {
  return new Promise<{ ms: number; code: number | null; stderr: string }>((resolve) => {
    const start = performance.now();
    const child = spawn(command, args, {
      env: { ...process.env, ...env },
      cwd,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr = (stderr + d).slice(-4000);
    });
    child.on("error", (e) => resolve({ ms: performance.now() - start, code: -1, stderr: e.message }));
    child.on("close", (code) => resolve({ ms: performance.now() - start, code, stderr }));
  });
}

/** The inventory of a CycloneDX document from its components' package URLs (nested ones too). */
export function cyclonedxPackages(file: string, ecosystem: "npm" | "maven"): Set<string> {
  type Component = { purl?: string; components?: Component[] };
  const found = new Set<string>();
  const visit = (list: Component[] | undefined) => {
    for (const c of list ?? []) {
      const id = purlPackage(c.purl, ecosystem);
      if (id) found.add(id);
      visit(c.components);
    }
  };
  visit((JSON.parse(readFileSync(file, "utf8")) as { components?: Component[] }).components);
  return found;
}

export function purlPackage(purl: string | undefined, ecosystem: "npm" | "maven"): string | undefined {
  if (!purl?.startsWith(`pkg:${ecosystem}/`)) return undefined;
  const body = purl.slice(`pkg:${ecosystem}/`.length).replace(/[?#].*$/, "");
  const at = body.lastIndexOf("@");
  if (at < 0) return undefined;
  const path = decodeURIComponent(body.slice(0, at));
  const version = decodeURIComponent(body.slice(at + 1));
  if (ecosystem === "npm") return `${path}@${version}`;
  const slash = path.lastIndexOf("/");
  return slash < 0 ? undefined : `${path.slice(0, slash)}:${path.slice(slash + 1)}@${version}`;
}

/**
 * cdxgen on an input, no network look-ups of licences: `-t js` for npm, `-t java` for a Maven project,
 * `-t jar` for an artifact alone (`-t java` finds nothing without a build file: 0 packages on every jar,
 * war and Spring Boot jar of the corpus).
 */
export async function runCdxgen(input: string, ecosystem: "npm" | "maven", out: string): Promise<PeerRun> {
  const type = ecosystem === "npm" ? "js" : existsSync(join(input, "pom.xml")) ? "java" : "jar";
  const r = await timed(process.execPath, [cdxgen(), "-t", type, "-o", out, input], {
    FETCH_LICENSE: "false",
    CDXGEN_TELEMETRY: "false",
    MVN_ARGS: "-B",
  });
  if (!existsSync(out))
    return { ms: r.ms, packages: new Set(), error: `cdxgen exited ${r.code}: ${r.stderr.slice(-300)}` };
  return { ms: r.ms, packages: cyclonedxPackages(out, ecosystem) };
}

export async function runSyft(
  bin: string,
  input: string,
  ecosystem: "npm" | "maven",
  out: string,
): Promise<PeerRun> {
  const r = await timed(bin, ["scan", `dir:${input}`, "-q", "-o", `cyclonedx-json=${out}`], {
    SYFT_CHECK_FOR_APP_UPDATE: "false",
  });
  if (!existsSync(out))
    return { ms: r.ms, packages: new Set(), error: `syft exited ${r.code}: ${r.stderr.slice(-300)}` };
  return { ms: r.ms, packages: cyclonedxPackages(out, ecosystem) };
}
