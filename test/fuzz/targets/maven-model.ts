/**
 * A POM with its parents, imported BOMs and dependencies' POMs: the input holds several POMs separated
 * by a line `<!-- next pom -->`; the first is the project (as a pom.xml of the scanned tree), the others
 * are what the repository serves. The effective model is built and the dependency tree resolved as
 * `imaging scan` does.
 */

import { resolveDependencies } from "../../../src/scanner/maven/dependency-graph.ts";
import { DEFAULT_ENVIRONMENT } from "../../../src/scanner/maven/environment.ts";
import { ModelBuilder } from "../../../src/scanner/maven/model-builder.ts";
import { PomSyntaxError, parsePom } from "../../../src/scanner/maven/pom-xml.ts";
import { expectOneLine, utf8 } from "./kit.ts";
import { memoryRepository } from "./memory-repository.ts";

export const SEPARATOR = "\n<!-- next pom -->\n";

export async function fuzz(data: Buffer): Promise<void> {
  const [project = "", ...others] = utf8(data).split(SEPARATOR);
  let raw: ReturnType<typeof parsePom>;
  try {
    raw = parsePom(project);
  } catch (error) {
    if (!(error instanceof PomSyntaxError)) throw error;
    expectOneLine(error.message);
    return;
  }
  const repository = memoryRepository(others);
  const warn = (message: string) => void message;
  const builder = new ModelBuilder({ repository, env: DEFAULT_ENVIRONMENT, workspace: new Map(), warn });
  const model = await builder.buildEmbedded(raw, "pom.xml");
  await resolveDependencies(model, { builder, repository, warn });
}
