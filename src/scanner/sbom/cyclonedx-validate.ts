/**
 * Checks a CycloneDX 1.6 JSON document against the official schema, as shipped (with the SPDX and JSF
 * schemas it refers to) by @cyclonedx/cyclonedx-library and compiled by its validator (ajv).
 */
import { Spec, Validation } from "@cyclonedx/cyclonedx-library";

let validator: Validation.JsonValidator | undefined;

/** The schema's complaints, one line each; empty when the document is valid. */
export async function cycloneDxErrors(document: unknown): Promise<string[]> {
  validator ??= new Validation.JsonValidator(Spec.Version.v1dot6);
  const errors = await validator.validate(JSON.stringify(document));
  if (errors === null) return [];
  const list = Array.isArray(errors) ? errors : [errors];
  return list.map(
    (e: { instancePath?: string; message?: string }) =>
      `${e.instancePath || "/"}: ${e.message ?? JSON.stringify(e)}`,
  );
}
