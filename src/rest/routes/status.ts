import type { FastifyInstance } from "fastify";
import { isAdmin } from "../../auth/principal.ts";
import { assertThat } from "../problem.ts";

/** One part of the platform as observed now. */
export interface PartStatus {
  id: string;
  name: string;
  state: "UP" | "DOWN";
  /** What the check observed, in one sentence. */
  detail: string;
}

export interface PlatformStatus {
  version: string;
  baseUrl: string;
  parts: PartStatus[];
}

/** A doctor check, as `imaging doctor --json` prints it. */
export interface DoctorCheck {
  id: string;
  title: string;
  verdict: "pass" | "fail" | "warn" | "n/a";
  detail: string;
  fix: string | null;
}

export interface DoctorAnswer {
  baseUrl: string | null;
  issuer: string | null;
  idp: string;
  /** When the checks ran (ISO 8601): a result is reused for a few seconds. */
  checkedAt: string;
  checks: DoctorCheck[];
}

/** Provided by the composition root (service.ts), which knows where every part runs. */
export interface StatusSources {
  status(): Promise<PlatformStatus>;
  /** Runs the checks of `imaging doctor` against this deployment. */
  doctor(): Promise<DoctorAnswer>;
}

const partSchema = {
  type: "object",
  required: ["id", "name", "state", "detail"],
  properties: {
    id: {
      type: "string",
      description: "gateway, rest, mcp-analysis, mcp-gatekeeper, identity-provider, store",
    },
    name: { type: "string" },
    state: { type: "string", enum: ["UP", "DOWN"] },
    detail: { type: "string", description: "What the health check observed" },
  },
} as const;

const checkSchema = {
  type: "object",
  required: ["id", "title", "verdict", "detail", "fix"],
  properties: {
    id: { type: "string" },
    title: { type: "string" },
    verdict: { type: "string", enum: ["pass", "fail", "warn", "n/a"] },
    detail: { type: "string" },
    fix: { type: ["string", "null"] },
  },
} as const;

/** GET /rest/status (any signed-in user) and POST /rest/admin/doctor (administrators). */
export function statusRoutes(app: FastifyInstance, sources: StatusSources): void {
  app.get(
    "/rest/status",
    {
      schema: {
        summary: "Health of each part of the platform, the version and base_url",
        tags: ["status"],
        response: {
          200: {
            type: "object",
            required: ["version", "baseUrl", "parts"],
            properties: {
              version: { type: "string" },
              baseUrl: { type: "string" },
              parts: { type: "array", items: partSchema },
            },
          },
          401: { description: "No valid credentials", $ref: "Problem#" },
        },
      },
    },
    async () => sources.status(),
  );
  app.post(
    "/rest/admin/doctor",
    {
      onRequest: async (request) => {
        assertThat(
          request.principal && isAdmin(request.principal),
          403,
          "Only administrators may run the doctor checks",
        );
      },
      schema: {
        summary: "Run the checks of `imaging doctor` against this deployment (administrators)",
        description:
          "Runs the checks and answers their verdicts. Requests while a run is under way share it, and a result is reused for 10 seconds (checkedAt says when the checks ran).",
        tags: ["status"],
        response: {
          200: {
            type: "object",
            required: ["baseUrl", "issuer", "idp", "checkedAt", "checks"],
            properties: {
              baseUrl: { type: ["string", "null"] },
              issuer: { type: ["string", "null"] },
              idp: { type: "string" },
              checkedAt: { type: "string", format: "date-time" },
              checks: { type: "array", items: checkSchema },
            },
          },
          401: { description: "No valid credentials", $ref: "Problem#" },
          403: { description: "The caller is not an administrator", $ref: "Problem#" },
        },
      },
    },
    async () => sources.doctor(),
  );
}
