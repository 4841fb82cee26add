import swagger from "@fastify/swagger";
import Fastify, { type FastifyInstance, type FastifyRequest, type FastifyServerOptions } from "fastify";
import type { Kysely } from "kysely";
import type { JwtVerifier } from "../auth/jwt-verifier.ts";
import { accessLogController } from "../config/logging.ts";
import { adminJsonSchema, resourceJsonSchemas } from "../contracts/json-schema.ts";
import { PLATFORM_AUDIENCE } from "../contracts/platform.ts";
import { type IdentityAdministration, storeAdministration } from "../idp/administration.ts";
import { recordHttpMetrics } from "../observability/http-metrics.ts";
import { requestIdOf } from "../observability/trace-context.ts";
import type { Database } from "../store/schema.ts";
import { adminProblem } from "./admin-input.ts";
import { allowedMethods } from "./allowed-methods.ts";
import { createAuthenticator, refusalStatus } from "./authenticate.ts";
import { compressAnswers } from "./compression.ts";
import { collectInProcessReads, type InProcessGet } from "./in-process-reads.ts";
import { streamLargePages } from "./large-pages.ts";
import { problemResponses } from "./openapi.ts";
import { sendError, sendProblem } from "./problem.ts";
import { adminApiKeyRoutes } from "./routes/admin-api-keys.ts";
import { adminCimdRoutes } from "./routes/admin-cimd.ts";
import { adminUserRoutes } from "./routes/admin-users.ts";
import { type AnalysisUploadOptions, analysisRoutes } from "./routes/analyses.ts";
import { applicationRoutes } from "./routes/applications.ts";
import { compareRoutes } from "./routes/compare.ts";
import { cveReferenceRoutes } from "./routes/cve-references.ts";
import { gateRoutes } from "./routes/gates.ts";
import { insightRoutes } from "./routes/insights.ts";
import { packageRoutes } from "./routes/packages.ts";
import { type StatusSources, statusRoutes } from "./routes/status.ts";
import { vulnerabilityRoutes } from "./routes/vulnerabilities.ts";
import { serializerOncePerSchema } from "./serializers.ts";
import { passThrough, validateParameters } from "./validation.ts";

interface RestAppOptions {
  db: Kysely<Database>;
  verifier: JwtVerifier;
  version: string;
  logger?: FastifyServerOptions["logger"];
  /** Health checks' request lines at debug (a log read by a person: config/logging.ts). */
  quietHealthChecks?: boolean;
  /** Analysis uploads (POST /rest/applications/{name}/analyses); default: 64 MiB, no fact gathering. */
  analyses?: AnalysisUploadOptions;
  /** Where the administration endpoints find CIMD policies and users; default: the platform store. */
  identity?: IdentityAdministration;
  /** The platform's status and doctor checks (GET /rest/status, POST /rest/admin/doctor); absent: 404. */
  status?: StatusSources;
}

/** A request made with Fastify `inject` (light-my-request marks its raw request), not over a socket. */
const isInjected = (request: FastifyRequest): boolean => {
  const raw: object = (request as { raw?: object }).raw ?? request;
  return "_lightMyRequest" in raw;
};

const OPEN_PATHS = new Set(["/rest/openapi.json", "/rest/health"]);
/** Whether the authentication hook applies to a path (everything under /rest/ but the open paths). */
const authenticated = (path: string) => !OPEN_PATHS.has(path) && path.startsWith("/rest/");

declare module "fastify" {
  interface FastifyInstance {
    /** GET operations called in-process, without the request pipeline (in-process-reads.ts). */
    inProcessGet: InProcessGet;
  }
}

/** The platform REST API: applications and their insights, problem+json errors, OpenAPI 3.1. */
export async function buildRestApp(options: RestAppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger ?? false,
    // A JSON body with a "__proto__" or "constructor.prototype" key is valid JSON (the schema of an
    // analysis upload allows extra keys): the keys are dropped, not the request refused as "not JSON".
    genReqId: requestIdOf,
    onProtoPoisoning: "remove",
    onConstructorPoisoning: "remove",
    // The MCP tools' in-process calls (Fastify inject, src/mcp/rest-client.ts) get no access-log lines: the
    // MCP request that makes them has its own (the gateway's); failures are still logged (setErrorHandler).
    logController: accessLogController({ pretty: Boolean(options.quietHealthChecks), skip: isInjected }),
    // Parameters are checked by validation.ts (the rules of params.ts, chosen by each route's schema).
    ajv: { customOptions: { strict: false } },
    schemaController: { compilersFactory: { buildSerializer: serializerOncePerSchema } },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1024 },
    // Malformed percent-encoding (400) or an over-long path parameter (414): problem+json too.
    frameworkErrors: (error, _request, reply) =>
      error.statusCode === 414
        ? sendProblem(reply, 414, "A path segment of the URL is longer than 1024 characters")
        : sendProblem(reply, 400, "The URL is not valid: malformed percent-encoding"),
  });
  const metricsListener = "rest";
  recordHttpMetrics(app, metricsListener);
  const methods = allowedMethods(app);
  app.setValidatorCompiler(passThrough);

  const named = [
    adminJsonSchema("Problem"),
    ...resourceJsonSchemas,
    adminJsonSchema("CimdClient"),
    adminJsonSchema("User"),
  ];
  for (const schema of named) {
    app.addSchema(schema);
  }
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "imaging-services REST API",
        version: options.version,
        description:
          "Applications, their analyses, packages, CVE insights and quality gates. Errors are application/problem+json.",
      },
      servers: [{ url: "/" }],
      components: {
        securitySchemes: {
          bearer: {
            type: "http",
            scheme: "bearer",
            bearerFormat: "JWT",
            description: `Platform token (aud ${PLATFORM_AUDIENCE})`,
          },
          apiKey: { type: "apiKey", in: "header", name: "X-API-KEY" },
        },
      },
      security: [{ bearer: [] }, { apiKey: [] }],
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transformObject: (document) =>
      problemResponses("openapiObject" in document ? document.openapiObject : {}),
  });

  // These act on the routes declared after them. The in-process reads see each route as declared, before
  // compression adds its hooks (no-ops for a value handed over as it is) and large pages wrap its handler.
  const inProcess = collectInProcessReads(app, authenticated, metricsListener);
  await compressAnswers(app);
  streamLargePages(app);
  validateParameters(app);

  const authenticate = createAuthenticator({ db: options.db, verifier: options.verifier });
  app.decorate("inProcessGet", inProcess.get(authenticate));
  app.addHook("onRequest", async (request, reply) => {
    const path = request.url.split("?")[0] ?? "";
    if (!authenticated(path)) return;
    const result = await authenticate(request);
    if (result.ok) {
      request.principal = result.principal;
      return;
    }
    const status = refusalStatus(result);
    if (status !== 401) return sendProblem(reply, status, result.detail);
    const challenge = result.tokenGiven
      ? `Bearer realm="${PLATFORM_AUDIENCE}", error="invalid_token", error_description="${result.detail.replace(/"/g, "'")}"`
      : `Bearer realm="${PLATFORM_AUDIENCE}"`;
    reply.header("WWW-Authenticate", challenge);
    return sendProblem(reply, 401, result.detail);
  });

  app.get("/rest/health", { schema: { hide: true } }, async () => ({ status: "UP" }));
  app.get("/rest/openapi.json", { schema: { hide: true } }, async () => app.swagger());
  applicationRoutes(app, { db: options.db });
  analysisRoutes(app, { db: options.db }, options.analyses ?? { maxBytes: 64 * 1024 * 1024 });
  insightRoutes(app, { db: options.db });
  cveReferenceRoutes(app, { db: options.db });
  vulnerabilityRoutes(app, { db: options.db });
  packageRoutes(app, { db: options.db });
  gateRoutes(app, { db: options.db });
  compareRoutes(app, { db: options.db });
  adminCimdRoutes(app, options.identity ?? storeAdministration(options.db));
  adminUserRoutes(app, options.identity ?? storeAdministration(options.db));
  adminApiKeyRoutes(app, { db: options.db });
  if (options.status) statusRoutes(app, options.status);

  // An existing resource asked with a method it does not have: 405 with Allow (RFC 9110 §15.5.6), or 204
  // with Allow for OPTIONS, decided before any body is read.
  app.addHook("onRequest", async (request, reply) => {
    if (request.routeOptions.url !== undefined) return;
    const path = request.url.split("?")[0] ?? "";
    const allowed = methods(path);
    if (allowed.length === 0) return;
    reply.header("allow", [...allowed, "OPTIONS"].join(", "));
    if (request.method === "OPTIONS") return reply.code(204).send();
    return sendProblem(reply, 405, `${path} does not support ${request.method}: use ${allowed.join(", ")}`);
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, 404, `No such resource: ${request.method} ${request.url.split("?")[0]}`),
  );
  // Every check a route or hook throws (ProblemError) and every other failure is answered here.
  app.setErrorHandler((error, _request, reply) => sendError(reply, adminProblem(error) ?? error));
  return app;
}
