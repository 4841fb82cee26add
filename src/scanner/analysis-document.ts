/**
 * The analysis document: what `imaging scan --json --output FILE` writes and `--server` sends to
 * `POST /rest/applications/{name}/analyses`. It is the store's AnalysisInput plus the application's
 * name, the scanner that produced it and the warnings of the scan. One zod schema: it validates the
 * upload, types the code, and its JSON Schema is the request body of the OpenAPI document.
 */
import { z } from "zod";
import { MAVEN_SCOPES, NPM_SCOPES } from "../contracts/platform.ts";
import { APPLICATION_NAME_PATTERN, applicationNameProblem } from "../domain/application-names.ts";
import {
  MAVEN_NAME_PATTERN,
  MAVEN_VERSION_PATTERN,
  NPM_NAME_PATTERN,
  NPM_VERSION_PATTERN,
  packageNameProblem,
  versionProblem,
} from "../domain/package-names.ts";
import { WHITESPACE } from "../domain/text-patterns.ts";
import type { AnalysisInput } from "../store/input-records.ts";
import { objectVersion } from "../store/object-versions.ts";

/**
 * No control characters (C0, DEL, C1) in any stored text: they would reach terminals and pages as they
 * are. Written as ranges, not `\p{Cc}`, so that the published JSON Schema reads the same without the
 * `u` flag.
 */
const CONTROL = "\\u0000-\\u001f\\u007f-\\u009f";
const NO_CONTROL = new RegExp(`^[^${CONTROL}]*$`);
const noControl = (max: number) =>
  z.string().max(max).regex(NO_CONTROL, "must not contain control characters");

/**
 * A required text: the pattern states in the JSON Schema (so in the OpenAPI document) what the trim
 * enforces, that whitespace alone is no value (without it the published schema accepted "\t"), and that
 * no control character is.
 */
const text = (max: number) =>
  z
    .string()
    .regex(
      new RegExp(`^[^${CONTROL}]*[^${WHITESPACE}${CONTROL}][^${CONTROL}]*$`),
      "must not be blank nor contain control characters",
    )
    .trim()
    .min(1)
    .max(max);

const name = text(1024);

/** A rule of one field's own value (bad input, 400), not a cross-reference between fields (409). */
const INVALID = { code: "custom", params: { invalid: true } } as const;

/** How long a package's list of inputs may be, and each input's path. */
const MAX_SOURCES = 1000;

const sources = z
  .array(text(1024))
  .max(MAX_SOURCES)
  .optional()
  .describe(
    "The inputs this version was read from (lockfiles, POMs, Gradle lockfiles, archives, SBOMs), relative to the scanned folder",
  );

/** The version's scope, in its ecosystem's words; absent or null when the input did not say. */
const scopeOf = <T extends readonly [string, ...string[]]>(scopes: T, words: string) =>
  z
    .enum(scopes)
    .nullable()
    .optional()
    .describe(
      `The version's scope (${words}: ${scopes.join(", ")}); absent or null: not known (answers say unknown)`,
    );

/**
 * One package of each ecosystem. The patterns state the naming rules in the published schema only (a
 * schema-valid upload is accepted); the check itself is the refinement below, whose messages say which rule.
 */
const packageRef = z
  .discriminatedUnion("ecosystem", [
    z.object({
      ecosystem: z.literal("npm"),
      name: name.meta({ pattern: NPM_NAME_PATTERN }).describe("npm name as published (npm's naming rules)"),
      version: text(256).meta({ pattern: NPM_VERSION_PATTERN }).describe("A semver version"),
      scope: scopeOf(NPM_SCOPES, "npm"),
      sources,
    }),
    z.object({
      ecosystem: z.literal("maven"),
      name: name
        .meta({ pattern: MAVEN_NAME_PATTERN })
        .describe("groupId:artifactId (Maven's coordinate rules)"),
      version: text(256)
        .meta({ pattern: MAVEN_VERSION_PATTERN })
        .describe('A Maven version without \\ / : " < > | ? * or spaces'),
      scope: scopeOf(MAVEN_SCOPES, "Maven"),
      sources,
    }),
  ])
  .superRefine((p, ctx) => {
    const nameProblem = packageNameProblem(p.ecosystem, p.name);
    if (nameProblem) {
      ctx.addIssue({ ...INVALID, path: ["name"], message: `${JSON.stringify(p.name)} ${nameProblem}` });
    }
    const problem = versionProblem(p.ecosystem, p.version);
    if (problem) {
      ctx.addIssue({ ...INVALID, path: ["version"], message: `${JSON.stringify(p.version)} ${problem}` });
    }
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
  name: noControl(4096),
  fullName: noControl(4096),
  mangling: noControl(4096),
  type: noControl(256),
  typeId: noControl(256),
});

const applicationObject = z.object({
  id: name,
  name: noControl(4096),
  fullName: noControl(4096),
  type: noControl(256),
  typeId: noControl(256),
});

const analysisDocumentSchema = z
  .object({
    application: text(256)
      .meta({ pattern: APPLICATION_NAME_PATTERN })
      .superRefine((value, ctx) => {
        const problem = applicationNameProblem(value);
        if (problem) ctx.addIssue({ ...INVALID, message: problem });
      })
      .describe(
        "The application analyzed; must be the {name} of the URL when sent to the REST API. Not `.` or `..`, no `/`, back-quote or control character",
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
    document.packages.forEach((p) => {
      const key = `${p.ecosystem}:${p.name}`;
      versions.set(key, [...(versions.get(key) ?? []), p.version]);
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
    // The readers give each ecosystem's packages only that ecosystem's scopes (scope.ts).
    packages: input.packages as AnalysisDocument["packages"],
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
  const inconsistent = parsed.error.issues.every(
    (i) => i.code === "custom" && (i.params as { invalid?: boolean } | undefined)?.invalid !== true,
  );
  const path = (issue?.path ?? [])
    .map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
    .join("");
  return { ok: false, detail: `${path || "document"}: ${issue?.message ?? "invalid"}`, inconsistent };
}
