/**
 * A jar without Maven metadata, identified as dependency-check, Syft and cdxgen do: candidate coordinates
 * from the jar's file name (artifactId and version), its manifest (`Implementation-Vendor-Id`,
 * `Bundle-SymbolicName`, `Automatic-Module-Name`, `Implementation-Title`), the packages holding its
 * classes, the groupIds of the archive's other, identified jars (Spring Boot's starters hold no class:
 * their siblings tell `org.springframework.boot`), and a SHA-1 search service where one is configured.
 * Every guess is confirmed by the repository's published `.sha1` for it, never taken from a name alone.
 *
 * What came out is kept between scans (AnswerMemo): the coordinates found for a SHA-1 for good, a
 * "nothing matched" for a week, and only when every question was answered (offline guesses that could
 * not be checked are asked again next time).
 */
import type { AnswerMemo } from "../registry/answer-memo.ts";
import type { Gav } from "./coordinates.ts";
import type { MavenRepository } from "./repository.ts";
import type { ArtifactSearch } from "./search-service.ts";

/** What identifying a jar needs to know about it, gathered while it is open. */
export interface JarFacts {
  label: string;
  /** Lowercase hex SHA-1 of the jar's bytes. */
  sha1: string;
  manifest: ReadonlyMap<string, string>;
  /** Java packages holding most of its classes, most first (`org.springframework.boot`). */
  classPackages: readonly string[];
}

export interface IdentifyContext {
  repository: MavenRepository;
  /** The remote repository's URL (part of the kept answers' keys). */
  repositoryUrl: string;
  memo?: AnswerMemo;
  search?: ArtifactSearch;
  /** A search that could not be asked is said once per scan. */
  warn(message: string): void;
}

type Identified = { gav: Gav; evidence: "sha1" | "sha1 search" } | undefined;

const COORDINATE = /^[A-Za-z0-9_.-]+$/;
const MAX_GUESSES = 16;
const MAX_SIBLING_GROUPS = 4;

/** A jar of the same archive already identified. */
export interface Sibling {
  groupId: string;
  artifactId: string;
}

/** `commons-lang-2.6.jar` → artifactId `commons-lang`, version `2.6`. */
export function splitFileName(label: string): { artifactId: string; version: string } | undefined {
  const base = label.replace(/^.*\//, "").replace(/\.(?:jar|war|ear|rar)$/i, "");
  const match = /^(.+?)-(\d[^-]*(?:-.+)?)$/.exec(base);
  return match ? { artifactId: match[1] as string, version: match[2] as string } : undefined;
}

/** groupIds worth trying for a jar, most likely first (bounded: each costs one request at most). */
export function candidateGroupIds(
  facts: JarFacts,
  artifactId: string,
  known: readonly string[],
  siblings: readonly Sibling[],
): string[] {
  const candidates: string[] = [];
  const add = (g: string | undefined) => {
    if (g && COORDINATE.test(g) && !candidates.includes(g)) candidates.push(g);
  };
  for (const g of known) add(g);
  add(facts.manifest.get("Implementation-Vendor-Id"));
  for (const name of [
    facts.manifest.get("Bundle-SymbolicName"),
    facts.manifest.get("Automatic-Module-Name"),
  ]) {
    const symbolic = name?.split(";")[0]?.trim();
    if (!symbolic) continue;
    // `org.apache.tomcat-embed-core` also as `org.apache.tomcat.embed.core`
    for (const form of [symbolic, symbolic.replaceAll("-", ".")]) {
      const parts = form.split(".");
      for (let n = parts.length; n >= 2; n--) add(parts.slice(0, n).join("."));
    }
  }
  const title = facts.manifest.get("Implementation-Title");
  if (title?.includes(".")) add(title);
  // groupIds of the archive's identified jars whose artifactIds share the most leading words with this one
  // (spring-boot-starter-web: spring-boot-autoconfigure's org.springframework.boot before spring-core's)
  const words = artifactId.split("-");
  const shared = (other: string) => {
    const theirs = other.split("-");
    let n = 0;
    while (n < words.length && words[n] === theirs[n]) n++;
    return n;
  };
  const ranked = new Map<string, number>();
  for (const s of siblings) {
    const n = shared(s.artifactId);
    if (n > 0) ranked.set(s.groupId, Math.max(ranked.get(s.groupId) ?? 0, n));
  }
  for (const [g] of [...ranked].sort((a, b) => b[1] - a[1]).slice(0, MAX_SIBLING_GROUPS)) add(g);
  const word = words[0] ?? artifactId;
  // old-style groupIds: the artifactId itself (hsqldb:hsqldb), or its first word (xerces:xercesImpl)
  add(artifactId);
  add(word);
  for (const prefix of facts.classPackages) add(prefix);
  return candidates.slice(0, MAX_GUESSES);
}

/**
 * The coordinates of a jar without Maven metadata, or undefined. `known` are groupIds the application's
 * resolved POM gives for the jar's artifactId and version; `siblings` the groupIds of the archive's jars.
 */
export async function identifyJar(
  facts: JarFacts,
  known: readonly string[],
  siblings: readonly Sibling[],
  context: IdentifyContext,
): Promise<Identified> {
  const found = `maven-jar-sha1\n${context.repositoryUrl}\n${facts.sha1}`;
  const kept = context.memo?.get(found) as { gav: Gav; evidence: "sha1" | "sha1 search" } | undefined;
  if (kept?.gav) return kept;
  const remember = (result: NonNullable<Identified>) => {
    context.memo?.set(found, result);
    return result;
  };

  const parts = splitFileName(facts.label);
  const extension = /\.war$/i.test(facts.label) ? "war" : "jar";
  if (parts) {
    const groups = candidateGroupIds(facts, parts.artifactId, known, siblings);
    const question = `maven-jar-guesses\n${context.repositoryUrl}\n${facts.sha1}\n${parts.artifactId}:${parts.version}\n${groups.join(",")}`;
    if (context.memo?.get(question) !== false) {
      let answered = true;
      for (const groupId of groups) {
        const gav = { groupId, artifactId: parts.artifactId, version: parts.version };
        const answer = await context.repository.sha1(gav, extension);
        if (answer.kind === "found" && answer.digest === facts.sha1)
          return remember({ gav, evidence: "sha1" });
        if (answer.kind === "unknown") answered = false;
      }
      if (answered) context.memo?.set(question, false, { negative: true });
    }
  }

  if (!context.search) return undefined;
  const asked = `maven-search\n${context.search.url}\n${facts.sha1}`;
  let candidates = context.memo?.get(asked) as Gav[] | undefined;
  if (!candidates) {
    const answer = await context.search.bySha1(facts.sha1);
    if (answer.kind === "unavailable") {
      context.warn(
        `the SHA-1 search service could not be asked (${answer.reason}): jars without Maven metadata are identified from the repository's checksums only`,
      );
      return undefined;
    }
    candidates = answer.candidates
      .filter((c) => [c.groupId, c.artifactId, c.version].every((s) => COORDINATE.test(s)))
      .map(({ groupId, artifactId, version }) => ({ groupId, artifactId, version }));
    context.memo?.set(asked, candidates, { negative: candidates.length === 0 });
  }
  for (const gav of candidates) {
    const answer = await context.repository.sha1(gav, extension);
    if (answer.kind === "found" && answer.digest === facts.sha1)
      return remember({ gav, evidence: "sha1 search" });
  }
  return undefined;
}
