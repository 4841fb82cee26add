/**
 * The analysis document: what `imaging scan --json --output FILE` writes and `--server` sends to
 * `POST /rest/applications/{name}/analyses`. It is the store's AnalysisInput plus the application's
 * name, the scanner that produced it and the warnings of the scan. One zod schema: it validates the
 * upload, types the code, and its JSON Schema is the request body of the OpenAPI document.
 */
import { z } from "zod";
import { MAVEN_SCOPES, NPM_SCOPES, PACKAGE_SCOPES } from "../contracts/platform.ts";
import type { AnalysisInput } from "../store/input-records.ts";
import { objectVersion } from "../store/object-versions.ts";

/**
 * A required text: the pattern states in the JSON Schema (so in the OpenAPI document) what the trim
 * enforces, that whitespace alone is no value; without it the published schema accepted "\t".
 */
const text = (max: number) => z.string().regex(/\S/, "must not be blank").trim().min(1).max(max);

const name = text(1024);

const packageRef = z.object({
  ecosystem: z.enum(["npm", "maven"]),
  name: name.describe("npm name as published; Maven groupId:artifactId"),
  version: text(256),
  scope: z
    .enum(PACKAGE_SCOPES)
    .nullable()
    .optional()
    .describe(
      `The version's scope: npm ${NPM_SCOPES.join(", ")}; Maven ${MAVEN_SCOPES.join(", ")}. ` +
        "Absent or null: not known (answers say unknown)",
    ),
});

const externalObject = z.object({
  id: name,
  package: name.describe("<ecosystem>:<name> of a package of this analysis, e.g. npm:lodash"),
  version: text(256)
    .optional()
    .describe(
      "The version of the package the referring code loads, one the document lists; may be left out " +
        "when the document lists one version of the package",
    ),
  name: z.string().max(4096),
  fullName: z.string().max(4096),
  mangling: z.string().max(4096),
  type: z.string().max(256),
  typeId: z.string().max(256),
});

const applicationObject = z.object({
  id: name,
  name: z.string().max(4096),
  fullName: z.string().max(4096),
  type: z.string().max(256),
  typeId: z.string().max(256),
});

const analysisDocumentSchema = z
  .object({
    application: text(256).describe(
      "The application analyzed; must be the {name} of the URL when sent to the REST API",
    ),
    analyzedAt: z.iso
      .datetime({ offset: true })
      .describe("When the analysis was made (ISO 8601), later than the application's latest analysis"),
    scanner: z
      .object({ name: z.string().min(1).max(256), version: z.string().min(1).max(256) })
      .optional()
      .describe("The tool that produced the document"),
    packages: z.array(packageRef).describe("Packages in use"),
    objects: z
      .array(externalObject)
      .default([])
      .describe("External objects: packages' members the code refers to"),
    references: z
      .array(z.object({ from: applicationObject, to: name.describe("id of an object of `objects`") }))
      .default([])
      .describe("Which application objects refer to which external objects"),
    warnings: z
      .array(
        z.object({ file: z.string(), line: z.number().int().positive().optional(), message: z.string() }),
      )
      .default([])
      .describe("What the scan could not resolve (a missing parent POM...); informative only"),
  })
  .describe("An analysis of one application, as a scanner produces it")
  .superRefine((document, ctx) => {
    // Cross-references, checked here so a bad document is refused before anything is looked up.
    const versions = new Map<string, string[]>();
    document.packages.forEach((p, i) => {
      const key = `${p.ecosystem}:${p.name}`;
      versions.set(key, [...(versions.get(key) ?? []), p.version]);
      const scopes: readonly string[] = p.ecosystem === "npm" ? NPM_SCOPES : MAVEN_SCOPES;
      if (p.scope && !scopes.includes(p.scope)) {
        ctx.addIssue({
          code: "custom",
          path: ["packages", i, "scope"],
          message: `'${p.scope}' is no ${p.ecosystem} scope (${scopes.join(", ")})`,
        });
      }
    });
    const ids = new Set<string>();
    document.objects.forEach((object, i) => {
      if (ids.has(object.id)) {
        ctx.addIssue({ code: "custom", path: ["objects", i, "id"], message: `'${object.id}' appears twice` });
      }
      ids.add(object.id);
      const used = versions.get(object.package);
      if (!used) {
        ctx.addIssue({
          code: "custom",
          path: ["objects", i, "package"],
          message: `'${object.package}' is not one of the document's packages (<ecosystem>:<name>)`,
        });
        return;
      }
      const version = objectVersion(object, used);
      if (!version.ok) {
        ctx.addIssue({
          code: "custom",
          path: ["objects", i, "version"],
          message:
            version.reason === "not-used"
              ? `'${object.version}' is not a version of ${object.package} the document lists (${used.join(", ")})`
              : `${object.package} is listed at several versions (${used.join(", ")}): say which one the object belongs to`,
        });
      }
    });
    document.references.forEach((reference, i) => {
      if (!ids.has(reference.to)) {
        ctx.addIssue({
          code: "custom",
          path: ["references", i, "to"],
          message: `'${reference.to}' is not the id of one of the document's objects`,
        });
      }
    });
  });

export type AnalysisDocument = z.infer<typeof analysisDocumentSchema>;

/** The JSON Schema of the document (what a client must send). */
export const analysisDocumentJsonSchema = z.toJSONSchema(analysisDocumentSchema, { io: "input" });

/** The document `imaging scan --json --output FILE` writes and `--server` sends. */
export function analysisDocumentOf(
  application: string,
  input: AnalysisInput,
  extra: { scanner?: { name: string; version: string }; warnings?: AnalysisDocument["warnings"] } = {},
): AnalysisDocument {
  return {
    application,
    analyzedAt: input.analyzedAt,
    ...(extra.scanner ? { scanner: extra.scanner } : {}),
    packages: input.packages,
    objects: input.objects,
    references: input.references,
    warnings: extra.warnings ?? [],
  };
}

export function analysisInputOf(document: AnalysisDocument): AnalysisInput {
  return {
    analyzedAt: document.analyzedAt,
    packages: document.packages,
    objects: document.objects,
    references: document.references,
  };
}

/**
 * Reads an untrusted document; `detail` names the first bad field. `inconsistent`: the document has the
 * schema's shape but its cross-references do not hold (an object naming a package it does not list...).
 */
export function parseAnalysisDocument(
  value: unknown,
): { ok: true; document: AnalysisDocument } | { ok: false; detail: string; inconsistent: boolean } {
  const parsed = analysisDocumentSchema.safeParse(value);
  if (parsed.success) return { ok: true, document: parsed.data };
  const issue = parsed.error.issues[0];
  const inconsistent = parsed.error.issues.every((i) => i.code === "custom");
  const path = (issue?.path ?? [])
    .map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
    .join("");
  return { ok: false, detail: `${path || "document"}: ${issue?.message ?? "invalid"}`, inconsistent };
}
