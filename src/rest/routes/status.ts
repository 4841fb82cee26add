import type { FastifyInstance } from "fastify";
import { isAdmin } from "../../auth/principal.ts";
import {
  type DoctorAnswer,
  doctorAnswer,
  type PlatformStatus,
  platformStatus,
} from "../../contracts/admin.ts";
import { resourceJsonSchema } from "../../contracts/json-schema.ts";
import { assertThat } from "../problem.ts";

/** One part of the platform as observed now. */
export type PartStatus = PlatformStatus["parts"][number];
export type { DoctorAnswer, PlatformStatus };

/** Provided by the composition root (service.ts), which knows where every part runs. */
export interface StatusSources {
  status(): Promise<PlatformStatus>;
  /** Runs the checks of `imaging doctor` against this deployment. */
  doctor(): Promise<DoctorAnswer>;
}

/** GET /rest/status (any signed-in user) and POST /rest/admin/doctor (administrators). */
export function statusRoutes(app: FastifyInstance, sources: StatusSources): void {
  app.get(
    "/rest/status",
    {
      schema: {
        summary: "Health of each part of the platform, the version and base_url",
        tags: ["status"],
        response: {
          200: resourceJsonSchema(platformStatus),
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
          200: resourceJsonSchema(doctorAnswer),
          401: { description: "No valid credentials", $ref: "Problem#" },
          403: { description: "The caller is not an administrator", $ref: "Problem#" },
        },
      },
    },
    async () => sources.doctor(),
  );
}
