/**
 * A jar, war or ear given to `imaging scan`: its embedded Maven metadata, nested jars (WEB-INF/lib,
 * BOOT-INF/lib, ear modules) and, for a war, its own embedded pom.xml resolved against the repository.
 * ArchiveFormatError is the documented refusal (a warning, or the error when the archive is the input).
 */
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ArchiveFormatError, ArchiveLimitError, readArchive } from "../../../src/scanner/maven/archive.ts";
import { resolveDependencies } from "../../../src/scanner/maven/dependency-graph.ts";
import { DEFAULT_ENVIRONMENT } from "../../../src/scanner/maven/environment.ts";
import { ModelBuilder } from "../../../src/scanner/maven/model-builder.ts";
import { expectOneLine } from "./kit.ts";
import { memoryRepository } from "./memory-repository.ts";

const repository = memoryRepository([]);
// The reader streams archives from a file (entry by entry, under limits): each input is written to one.
const file = join(tmpdir(), `fuzz-maven-archive-${process.pid}.war`);

export async function fuzz(data: Buffer): Promise<void> {
  writeFileSync(file, data);
  try {
    await readArchive(file, "app.war", {
      application: true,
      identify: { repository, repositoryUrl: "memory:" },
      async resolvePom(pom, label) {
        const warnings: string[] = [];
        const builder = new ModelBuilder({
          repository,
          env: DEFAULT_ENVIRONMENT,
          workspace: new Map(),
          warn: (m) => warnings.push(m),
        });
        const model = await builder.buildEmbedded(pom.raw, label);
        const artifacts = await resolveDependencies(model, {
          builder,
          repository,
          warn: (m) => warnings.push(m),
        });
        return { artifacts, warnings };
      },
    });
  } catch (error) {
    if (!(error instanceof ArchiveFormatError) && !(error instanceof ArchiveLimitError)) throw error;
    expectOneLine(error.message);
  }
}
