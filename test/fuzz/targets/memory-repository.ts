/**
 * A Maven repository held in memory (the test double for Maven Central in the Maven targets): POMs by
 * their own coordinates, versions listed from them, no published checksums.
 */
import { type Gav, gavText } from "../../../src/scanner/maven/coordinates.ts";
import { parsePom } from "../../../src/scanner/maven/pom-xml.ts";
import type { MavenRepository } from "../../../src/scanner/maven/repository.ts";

export function memoryRepository(poms: readonly string[]): MavenRepository {
  const byGav = new Map<string, string>();
  const versions = new Map<string, string[]>();
  for (const text of poms) {
    let raw: ReturnType<typeof parsePom>;
    try {
      raw = parsePom(text, { validate: false });
    } catch {
      continue;
    }
    const groupId = raw.groupId ?? raw.parent?.groupId;
    const version = raw.version ?? raw.parent?.version;
    if (!groupId || !raw.artifactId || !version) continue;
    const gav: Gav = { groupId, artifactId: raw.artifactId, version };
    byGav.set(gavText(gav), text);
    const key = `${groupId}:${raw.artifactId}`;
    versions.set(key, [...(versions.get(key) ?? []), version]);
  }
  return {
    async pom(gav) {
      const text = byGav.get(gavText(gav));
      return text === undefined
        ? { kind: "missing", reason: `${gavText(gav)} is not in the repository` }
        : { kind: "found", text, origin: `memory:${gavText(gav)}` };
    },
    async versions(groupId, artifactId) {
      return versions.get(`${groupId}:${artifactId}`) ?? [];
    },
    async sha1() {
      return { kind: "missing" } as const;
    },
  };
}
