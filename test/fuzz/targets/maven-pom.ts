/** A pom.xml of the scanned tree (validated, so errors name a line) and a repository POM (lenient). */
import { PomSyntaxError, parsePom } from "../../../src/scanner/maven/pom-xml.ts";
import { expectOneLine, utf8 } from "./kit.ts";

export function fuzz(data: Buffer): void {
  const xml = utf8(data);
  for (const validate of [true, false]) {
    try {
      parsePom(xml, { validate });
    } catch (error) {
      if (!(error instanceof PomSyntaxError)) throw error;
      expectOneLine(error.message);
    }
  }
}
