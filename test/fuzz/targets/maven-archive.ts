/**
 * A jar, war or ear given to `imaging scan`: its embedded Maven metadata, nested jars (WEB-INF/lib,
 * BOOT-INF/lib, ear modules) and, for a war, its own embedded pom.xml resolved against the repository.
 * ArchiveFormatError is the documented refusal (a warning, or the error when the archive is the input).
 */
import { ArchiveFormatError, readArchive } from "../../../src/scanner/maven/archive.ts";
import { resolveDependencies } from "../../../src/scanner/maven/dependency-graph.ts";
import { DEFAULT_ENVIRONMENT } from "../../../src/scanner/maven/environment.ts";
import { ModelBuilder } from "../../../src/scanner/maven/model-builder.ts";
import { parsePom } from "../../../src/scanner/maven/pom-xml.ts";
import { expectOneLine } from "./kit.ts";
import { memoryRepository } from "./memory-repository.ts";

const repository = memoryRepository([]);

export async function fuzz(data: Buffer): Promise<void> {
  const builder = new ModelBuilder({
    repository,
    env: DEFAULT_ENVIRONMENT,
    workspace: new Map(),
    warn: () => {},
  });
  try {
    await readArchive(new Uint8Array(data), "app.war", {
      repository,
      async resolveEmbeddedPom(pomXml, label) {
        const model = await builder.buildEmbedded(parsePom(pomXml), label);
        const artifacts = await resolveDependencies(model, { builder, repository, warn: () => {} });
        return artifacts.map((a) => ({ groupId: a.groupId, artifactId: a.artifactId, version: a.version }));
      },
    });
  } catch (error) {
    if (!(error instanceof ArchiveFormatError)) throw error;
    expectOneLine(error.message);
  }
}
