import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
// @ts-expect-error: the package ships no type declarations
import addDraft2019Formats from "ajv-formats-draft2019";

/**
 * The CycloneDX 1.6 JSON schema, compiled here (not by the code under test): the files as
 * @cyclonedx/cyclonedx-library ships them from CycloneDX/specification — the official ones, with the
 * file names of their $refs changed and unknown `"format": "string"` removed (its res/schema/README.md);
 * 1.6 requires bomFormat and specVersion, as the official file does.
 */
const schemaDir = join(
  dirname(createRequire(import.meta.url).resolve("@cyclonedx/cyclonedx-library/package.json")),
  "res",
  "schema",
);
const loadSchema = (file: string) => JSON.parse(readFileSync(join(schemaDir, file), "utf8")) as object;
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);
// iri-reference, idn-email...: the formats the 1.6 schema uses beyond draft-07 (as the library does).
addDraft2019Formats(ajv);
// The renamed $refs resolve against the schema's $id: the referred schemas are put at those addresses.
for (const file of ["spdx.SNAPSHOT.schema.json", "jsf-0.82.SNAPSHOT.schema.json"]) {
  ajv.addSchema({ ...loadSchema(file), $id: `http://cyclonedx.org/schema/${file}` });
}
const validate = ajv.compile(loadSchema("bom-1.6.SNAPSHOT.schema.json"));

export { validate as validateCycloneDx };
