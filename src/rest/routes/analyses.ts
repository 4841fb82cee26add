import type { FastifyError, FastifyInstance } from "fastify";
import { type AnalysisUploadSummary, analysisUploadSummary } from "../../contracts/analysis-upload.ts";
import { resourceJsonSchema } from "../../contracts/json-schema.ts";
import { APPLICATION_NAME_PATTERN, applicationNameProblem } from "../../domain/application-names.ts";
import { type RecordedAnalysis, recordAnalysis } from "../../domain/record-analysis.ts";
import {
  analysisDocumentJsonSchema,
  analysisInputOf,
  parseAnalysisDocument,
} from "../../scanner/analysis-document.ts";
import { IngestError } from "../../store/ingest.ts";
import { toUtcSeconds } from "../../store/insights.ts";
import { adminOnly } from "../authorization.ts";
import type { RestDeps } from "../context.ts";
import { paramSchemas } from "../params.ts";
import { refuse, sendError, sendProblem } from "../problem.ts";
import { errorResponses } from "../schemas.ts";

export interface AnalysisUploadOptions {
  /** Largest document accepted (ANALYSIS_UPLOAD_MAX_BYTES); above it, 413. */
  maxBytes: number;
  /**
   * Called once an analysis queued packages for the background lookup of their registry facts
   * (scanner/facts/background.ts): the upload is answered without waiting for the registries.
   */
  onFactsQueued?: () => void;
}

/** The 201 answer, from the contract `imaging scan --server` reads it with. */
const summarySchema = resourceJsonSchema(analysisUploadSummary);

/** An analysis may be dated at most this far ahead of the server's clock (clocks drift, zones confuse). */
const MAX_FUTURE_MS = 24 * 60 * 60 * 1000;

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
      // Before the body is validated: a text/plain body is parsed as a string by Fastify's default parser
      // and would otherwise be refused as a malformed document (400) rather than as the wrong media type.
      preValidation: async (request) => {
        const type = (request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
        if (!/^application\/(?:[\w.-]+\+)?json$/.test(type)) {
          refuse(
            415,
            `The analysis document must be sent as application/json, not ${type || "without a Content-Type"}`,
          );
        }
        const problem = applicationNameProblem(request.params.name);
        if (problem) refuse(400, `Path parameter 'name': the application name ${problem}`);
      },
      schema: {
        summary: "Record an analysis produced by a scanner elsewhere (administrators)",
        description:
          "The analysis document of `imaging scan --json --output FILE` (or `--server URL`). The application is " +
          "created when missing. The analysis must be later than the application's latest one (409 otherwise) and " +
          "dated at most a day ahead of the server's clock (400). The body is JSON (`Content-Type: application/json`, " +
          "415 otherwise), sent as it is or compressed (`Content-Encoding: gzip`, `deflate` or `br`; the size limit " +
          "applies to the decompressed document). The answer comes once the analysis is recorded: the published " +
          "versions and release dates of packages new to the platform are then looked up in the configured " +
          "registries in the background, and each such package says `factsPending: true` in the packages list " +
          "until they are stored.",
        tags: ["applications"],
        params: {
          type: "object",
          properties: {
            // The application rules the upload applies to its name (applicationNameProblem), as a pattern.
            name: { ...paramSchemas.applicationName, pattern: APPLICATION_NAME_PATTERN },
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
              "Not later than the application's latest analysis, more than a day ahead of the server's clock, the document's `application` is not {name}, or its cross-references do not hold (an object naming a package the document does not list, a reference to an object it does not hold, an id twice)",
            $ref: "Problem#",
          },
          413: {
            description:
              "Larger than ANALYSIS_UPLOAD_MAX_BYTES (decompressed, when sent with Content-Encoding)",
            $ref: "Problem#",
          },
          415: {
            description:
              "Not application/json (or a Content-Encoding other than gzip, deflate, br and identity)",
            $ref: "Problem#",
          },
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
      const ahead = Date.parse(document.analyzedAt) - Date.now();
      // A well-formed date that contradicts this server's clock: a conflict with the platform's state (409,
      // as a date not after the latest analysis), which no JSON Schema can state.
      if (ahead > MAX_FUTURE_MS) {
        return refuse(
          409,
          `Invalid analysis document: analyzedAt: ${toUtcSeconds(document.analyzedAt)} is more than a day ahead ` +
            `of this server's clock (${toUtcSeconds(new Date().toISOString())})`,
        );
      }
      // A well-formed document about another application conflicts with this resource (409): no JSON
      // Schema can say "equal to the path parameter", so the contract states it as a conflict.
      if (document.application !== name) {
        return refuse(
          409,
          `The document analyzes '${document.application}' but was sent to application '${name}'`,
        );
      }
      // Registry facts follow in the background (scanner/facts/background.ts): their arrival recomputes
      // the affected versions and upgrades against the full version history.
      let recorded: RecordedAnalysis;
      try {
        recorded = await recordAnalysis(deps.db, name, analysisInputOf(document), "queued");
        options.onFactsQueued?.();
      } catch (error) {
        if (error instanceof IngestError) {
          return refuse(error.reason === "out-of-order" ? 409 : 400, error.message);
        }
        throw error;
      }
      const { counts } = recorded;
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
      };
      return reply.code(201).send(summary);
    },
  );
}
