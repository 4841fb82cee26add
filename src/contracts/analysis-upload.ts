/**
 * The answer of `POST /rest/applications/{name}/analyses`, declared once: the route's 201 schema is
 * derived from it (./json-schema.ts), and `imaging scan --server` reads the platform's answer with it,
 * so the two sides cannot drift apart (a CLI that expected `warnings` as a list once failed every CI
 * upload on the count the platform sends).
 */
import * as z from "zod";

const integer = () => z.number().int();

const change = z.object({ added: integer(), removed: integer() });

export const analysisUploadSummary = z
  .object({
    application: z.string(),
    analyzedAt: z.string().meta({ format: "date-time" }),
    seq: integer().describe("The analysis's number in the application's history (1 for the first)"),
    packages: integer().describe("Packages in use in this analysis"),
    externalObjects: integer(),
    references: integer(),
    vulnerablePackages: integer().describe("Packages affected by at least one known advisory"),
    warnings: integer().describe("How many warnings the scanner reported (the scanner prints them itself)"),
    changes: z
      .object({ packages: change, externalObjects: change, references: change })
      .describe("What changed since the previous analysis (rows added and removed)"),
    facts: z
      .object({
        withFacts: integer(),
        missing: z.array(z.object({ ecosystem: z.string(), name: z.string(), reason: z.string() })),
      })
      .optional()
      .describe("Package facts gathered from the registries for packages new to the platform"),
  })
  .describe("The analysis recorded");
export type AnalysisUploadSummary = z.infer<typeof analysisUploadSummary>;
