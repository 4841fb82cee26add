/**
 * Where POMs, metadata and artifact checksums come from: the local repository (`~/.m2/repository`) first,
 * then the remote one through the scanner's on-disk HTTP cache. Answers are memoised for one scan.
 */
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import type { RegistryFetcher } from "../registry/cached-fetch.ts";
import {
  artifactFileUrl,
  type Gav,
  gavText,
  InvalidCoordinatesError,
  repositoryPath,
  repositoryUrl,
} from "./coordinates.ts";

export type Sha1Answer = { kind: "found"; digest: string } | { kind: "missing" } | { kind: "unknown" };

type RepositoryAnswer = { kind: "found"; text: string; origin: string } | { kind: "missing"; reason: string };

export interface MavenRepository {
  /** The POM of groupId:artifactId:version. */
  pom(gav: Gav): Promise<RepositoryAnswer>;
  /** The versions `maven-metadata.xml` lists for groupId:artifactId (local metadata merged in). */
  versions(groupId: string, artifactId: string): Promise<string[]>;
  /**
   * The SHA-1 the repository publishes for an artifact file (lowercase hex): `missing` when the repository
   * says there is none, `unknown` when it could not be asked (offline and not cached, a network failure).
   */
  sha1(gav: Gav, extension: string, classifier?: string): Promise<Sha1Answer>;
}

interface MavenRepositoryOptions {
  fetcher: RegistryFetcher;
  remoteUrl: string;
  localRepository: string;
}

export function createMavenRepository(options: MavenRepositoryOptions): MavenRepository {
  const remote = options.remoteUrl.replace(/\/+$/, "");
  // "~/.m2/repository" as people write it in settings
  const localRepository = options.localRepository.replace(/^~(?=$|\/)/, homedir());
  const poms = new Map<string, Promise<RepositoryAnswer>>();
  const versionLists = new Map<string, Promise<string[]>>();
  const sha1s = new Map<string, Promise<Sha1Answer>>();

  async function readLocal(path: string): Promise<string | undefined> {
    try {
      return await readFile(join(localRepository, path), "utf8");
    } catch {
      return undefined;
    }
  }

  async function fetchPom(gav: Gav): Promise<RepositoryAnswer> {
    let path: string;
    let url: string;
    try {
      path = repositoryPath(gav, "pom");
      url = repositoryUrl(remote, gav, "pom");
    } catch (error) {
      if (!(error instanceof InvalidCoordinatesError)) throw error;
      return { kind: "missing", reason: `not valid Maven coordinates: ${error.message}` };
    }
    const local = await readLocal(path);
    if (local !== undefined) return { kind: "found", text: local, origin: join(localRepository, path) };
    const outcome = await options.fetcher.get(url, { immutable: !gav.version.endsWith("-SNAPSHOT") });
    switch (outcome.kind) {
      case "ok":
        return { kind: "found", text: outcome.body.toString("utf8"), origin: url };
      case "not-found":
        return {
          kind: "missing",
          reason: `${gavText(gav)} is neither in the local nor in the remote repository`,
        };
      case "not-cached":
        return {
          kind: "missing",
          reason: `${gavText(gav)} is not in the local repository nor in the offline cache`,
        };
      case "failed":
        return { kind: "missing", reason: `${gavText(gav)} could not be fetched: ${outcome.reason}` };
    }
  }

  async function fetchVersions(groupId: string, artifactId: string): Promise<string[]> {
    const found = new Set<string>();
    try {
      artifactFileUrl("", groupId, artifactId, "maven-metadata.xml");
    } catch (error) {
      if (error instanceof InvalidCoordinatesError) return [];
      throw error;
    }
    for (const name of ["maven-metadata-local.xml", "maven-metadata-central.xml"]) {
      const path = artifactFileUrl("", groupId, artifactId, name);
      for (const v of metadataVersions((await readLocal(path)) ?? "")) found.add(v);
    }
    const outcome = await options.fetcher.get(
      artifactFileUrl(remote, groupId, artifactId, "maven-metadata.xml"),
    );
    if (outcome.kind === "ok") for (const v of metadataVersions(outcome.body.toString("utf8"))) found.add(v);
    return [...found];
  }

  return {
    pom(gav) {
      const key = gavText(gav);
      let answer = poms.get(key);
      if (!answer) {
        answer = fetchPom(gav);
        poms.set(key, answer);
      }
      return answer;
    },
    versions(groupId, artifactId) {
      const key = `${groupId}:${artifactId}`;
      let answer = versionLists.get(key);
      if (!answer) {
        answer = fetchVersions(groupId, artifactId);
        versionLists.set(key, answer);
      }
      return answer;
    },
    sha1(gav, extension, classifier = "") {
      let path: string;
      let url: string;
      try {
        path = `${repositoryPath(gav, extension, classifier)}.sha1`;
        url = `${repositoryUrl(remote, gav, extension, classifier)}.sha1`;
      } catch (error) {
        if (error instanceof InvalidCoordinatesError) return Promise.resolve({ kind: "missing" } as const);
        throw error;
      }
      let answer = sha1s.get(path);
      if (!answer) {
        answer = (async () => {
          const local = await readLocal(path);
          let text = local;
          if (text === undefined) {
            const outcome = await options.fetcher.get(url, { immutable: true });
            if (outcome.kind === "not-found") return { kind: "missing" };
            if (outcome.kind !== "ok") return { kind: "unknown" };
            text = outcome.body.toString("utf8");
          }
          // .sha1 files hold the hex digest, sometimes followed by the file name
          const digest = text.trim().split(/\s+/)[0]?.toLowerCase();
          return digest && /^[0-9a-f]{40}$/.test(digest) ? { kind: "found", digest } : { kind: "missing" };
        })();
        sha1s.set(path, answer);
      }
      return answer;
    },
  };
}

function metadataVersions(xml: string): string[] {
  return [...xml.matchAll(/<version>\s*([^<\s]+)\s*<\/version>/g)].map((m) => m[1] as string);
}
