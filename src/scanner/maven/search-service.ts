/**
 * A SHA-1 search service: which published artifacts have a given file checksum. Maven Central's search
 * API (`MAVEN_SEARCH_URL`, `https://search.maven.org/solrsearch/select` by default) answers
 * `?q=1:"<sha1>"&rows=20&wt=json` with Solr's JSON: `response.docs[]` of `{id, g, a, v, p, ...}`, as
 * OWASP dependency-check and Syft read it. Its answers are only candidates: the caller confirms each
 * against the repository's own `.sha1` file.
 */
import type { RegistryFetcher } from "../registry/cached-fetch.ts";
import { redactUrl } from "../registry/cached-fetch.ts";
import type { Gav } from "./coordinates.ts";

type SearchAnswer =
  | { kind: "answered"; candidates: (Gav & { packaging: string })[] }
  | { kind: "unavailable"; reason: string };

export interface ArtifactSearch {
  /** The service's URL, as configured (part of the keys its answers are kept under). */
  readonly url: string;
  bySha1(sha1: string): Promise<SearchAnswer>;
}

export function createArtifactSearch(fetcher: RegistryFetcher, url: string): ArtifactSearch {
  // one failure (unreachable, not a search service) is enough for the scan: it is not asked again
  let down: string | undefined;
  return {
    url,
    async bySha1(sha1) {
      if (down !== undefined) return { kind: "unavailable", reason: down };
      const query = new URL(url);
      query.searchParams.set("q", `1:"${sha1}"`);
      query.searchParams.set("rows", "20");
      query.searchParams.set("wt", "json");
      const outcome = await fetcher.get(query.toString());
      if (outcome.kind !== "ok") {
        // said once for the scan: the service, not the query (whose checksum differs from jar to jar)
        down =
          outcome.kind === "failed"
            ? `${redactUrl(url)}: ${/reason: (.*)$/.exec(outcome.reason)?.[1] ?? outcome.reason.replace(/^\S+: /, "")}`
            : outcome.kind === "not-found"
              ? `${redactUrl(url)} answered HTTP ${outcome.status}`
              : "offline";
        return { kind: "unavailable", reason: down };
      }
      try {
        const body = JSON.parse(outcome.body.toString("utf8")) as { response?: { docs?: unknown[] } };
        const docs = body.response?.docs;
        if (!Array.isArray(docs)) throw new Error("no response.docs");
        const candidates = docs.flatMap((doc) => {
          const d = doc as Record<string, unknown>;
          const field = (name: string) => (typeof d[name] === "string" ? (d[name] as string) : undefined);
          const groupId = field("g");
          const artifactId = field("a");
          const version = field("v");
          return groupId && artifactId && version
            ? [{ groupId, artifactId, version, packaging: field("p") ?? "jar" }]
            : [];
        });
        return { kind: "answered", candidates };
      } catch (error) {
        down = `${redactUrl(url)} did not answer as a Maven search service (${(error as Error).message})`;
        return { kind: "unavailable", reason: down };
      }
    },
  };
}
