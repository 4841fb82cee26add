import type { FastifyError, FastifyInstance } from "fastify";
import { type AnalysisUploadSummary, analysisUploadSummary } from "../../contracts/analysis-upload.ts";
import { resourceJsonSchema } from "../../contracts/json-schema.ts";
import { ingestAnalysis } from "../../domain/package-facts.ts";
import {
  analysisDocumentJsonSchema,
  analysisInputOf,
  parseAnalysisDocument,
} from "../../scanner/analysis-document.ts";
import { countAnalysis, findApplication, latestAnalyzedAt } from "../../store/applications.ts";
import { IngestError } from "../../store/ingest.ts";
import type { PackageRef } from "../../store/input-records.ts";
import { toUtcSeconds } from "../../store/insights.ts";
import { adminOnly } from "../authorization.ts";
import type { RestDeps } from "../context.ts";
import { paramSchemas } from "../params.ts";
import { refuse, sendError, sendProblem } from "../problem.ts";
import { errorResponses } from "../schemas.ts";

/** Package facts for packages the store knows nothing about yet (see scanner/facts). */
export type GatherFacts = (
  packages: readonly PackageRef[],
) => Promise<{ withFacts: number; missing: { ecosystem: string; name: string; reason: string }[] }>;

export interface AnalysisUploadOptions {
  /** Largest document accepted (ANALYSIS_UPLOAD_MAX_BYTES); above it, 413. */
  maxBytes: number;
  gatherFacts?: GatherFacts;
}

/** The 201 answer, from the contract `imaging scan --server` reads it with. */
const summarySchema = resourceJsonSchema(analysisUploadSummary);

// The JSON Schema dialect is the OpenAPI 3.1 document's own: no "$schema" inside it.
const { $schema: _dialect, ...documentSchema } = analysisDocumentJsonSchema;

export function analysisRoutes(app: FastifyInstance, deps: RestDeps, options: AnalysisUploadOptions): void {
  app.post<{ Params: { name: string }; Body: unknown }>(
    "/rest/applications/:name/analyses",
    {
      bodyLimit: options.maxBytes,
      onRequest: adminOnly("analyses"),
      // Its own 413 and 500 sentences; every other refusal is rendered as the app renders it.
      errorHandler: (error: FastifyError, _request, reply) => {
        if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
          return sendProblem(
            reply,
            413,
            `The analysis document is larger than the ${options.maxBytes} bytes this server accepts (ANALYSIS_UPLOAD_MAX_BYTES)`,
          );
        }
        return sendError(reply, error, {
          failure: "The server could not record the analysis",
          log: "analysis upload failed",
        });
      },
      schema: {
        summary: "Record an analysis produced by a scanner elsewhere (administrators)",
        description:
          "The analysis document of `imaging scan --json --output FILE` (or `--server URL`). The application is " +
          "created when missing. The analysis must be later than the application's latest one (409 otherwise). " +
          "Packages the platform has no facts for are looked up in the configured registries.",
        tags: ["applications"],
        params: {
          type: "object",
          properties: {
            name: paramSchemas.applicationName,
          },
          required: ["name"],
        },
        body: documentSchema,
        response: {
          201: summarySchema,
          400: { description: "Not an analysis document (the detail names the field)", $ref: "Problem#" },
          401: errorResponses[401],
          403: { description: "The caller is not an administrator", $ref: "Problem#" },
          409: {
            description:
              "Not later than the application's latest analysis, the document's `application` is not {name}, or its cross-references do not hold (an object naming a package the document does not list, a reference to an object it does not hold, an id twice)",
            $ref: "Problem#",
          },
          413: { description: "Larger than ANALYSIS_UPLOAD_MAX_BYTES", $ref: "Problem#" },
          415: { description: "Not application/json", $ref: "Problem#" },
        },
      },
    },
    async (request, reply) => {
      const { name } = request.params;
      const parsed = parseAnalysisDocument(request.body);
      // A document of the schema's shape whose cross-references do not hold conflicts with itself (409,
      // as other schema-valid requests that contradict the platform's rules): no JSON Schema states them.
      if (!parsed.ok) {
        return refuse(parsed.inconsistent ? 409 : 400, `Invalid analysis document: ${parsed.detail}`);
      }
      const document = parsed.document;
      // A well-formed document about another application conflicts with this resource (409): no JSON
      // Schema can say "equal to the path parameter", so the contract states it as a conflict.
      if (document.application !== name) {
        return refuse(
          409,
          `The document analyzes '${document.application}' but was sent to application '${name}'`,
        );
      }
      const existing = await findApplication(deps.db, name);
      if (existing) {
        const latest = await latestAnalyzedAt(deps.db, existing.id);
        if (latest !== undefined && latest >= new Date(document.analyzedAt).toISOString()) {
          return refuse(
            409,
            `Application '${name}' already has an analysis at ${toUtcSeconds(latest)}: ` +
              `an analysis dated ${toUtcSeconds(document.analyzedAt)} must come later`,
          );
        }
      }
      // Facts first: the ingestion then computes the affected versions against the full version history.
      const facts = options.gatherFacts ? await options.gatherFacts(document.packages) : undefined;
      let recorded: Awaited<ReturnType<typeof ingestAnalysis>>;
      try {
        recorded = await ingestAnalysis(deps.db, name, analysisInputOf(document));
      } catch (error) {
        if (error instanceof IngestError) {
          return refuse(error.reason === "out-of-order" ? 409 : 400, error.message);
        }
        throw error;
      }
      const application = await findApplication(deps.db, name);
      const counts = await countAnalysis(deps.db, application?.id ?? 0, recorded.seq);
      const summary: AnalysisUploadSummary = {
        application: name,
        analyzedAt: toUtcSeconds(recorded.analyzedAt),
        seq: recorded.seq,
        packages: counts.packages,
        externalObjects: counts.externalObjects,
        references: counts.references,
        vulnerablePackages: counts.vulnerablePackages,
        warnings: document.warnings.length,
        changes: {
          packages: recorded.packages,
          externalObjects: recorded.objects,
          references: recorded.references,
        },
        ...(facts ? { facts } : {}),
      };
      return reply.code(201).send(summary);
    },
  );
}
