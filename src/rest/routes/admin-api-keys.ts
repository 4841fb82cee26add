import type { FastifyInstance } from "fastify";
import { apiKey, createdApiKey } from "../../contracts/admin.ts";
import { resourceJsonSchema } from "../../contracts/json-schema.ts";
import { ROLES, type Role } from "../../contracts/platform.ts";
import { createApiKey } from "../../domain/api-keys.ts";
import { listApiKeys, revokeApiKey } from "../../store/api-keys.ts";
import {
  adminRoutes,
  applicationsOf,
  bodyObject,
  InputError,
  onlyKnown,
  optionalString,
} from "../admin-input.ts";
import type { RestDeps } from "../context.ts";
import { paramSchemas } from "../params.ts";
import { refuse } from "../problem.ts";

const { guard, tags, problem, notAdministrator, inputRefused } = adminRoutes("API keys");

/** API keys for scripts (admins): list (never the secrets), create (the key answered once), revoke. */
export function adminApiKeyRoutes(app: FastifyInstance, deps: RestDeps): void {
  app.get(
    "/rest/admin/api-keys",
    {
      onRequest: guard,
      schema: {
        summary: "List API keys (never their secrets), revoked ones included",
        tags,
        response: {
          200: { type: "array", items: resourceJsonSchema(apiKey) },
          ...notAdministrator,
        },
      },
    },
    async () => listApiKeys(deps.db),
  );

  app.post<{ Body: unknown }>(
    "/rest/admin/api-keys",
    {
      onRequest: guard,
      schema: {
        summary: "Create an API key: `key` is answered once, only its hash is stored",
        tags,
        body: {
          type: "object",
          properties: {
            applications: {
              type: "array",
              items: paramSchemas.applicationName,
              description: "Applications a viewer key may read",
            },
            role: { type: "string", enum: [...ROLES] },
            user: { type: "string", minLength: 1, maxLength: 256, pattern: "\\S" },
          },
          required: ["user"],
          additionalProperties: false,
        },
        response: {
          201: resourceJsonSchema(createdApiKey),
          ...inputRefused,
          ...notAdministrator,
        },
      },
    },
    async (request, reply) => {
      const body = bodyObject(request.body);
      onlyKnown(body, ["user", "role", "applications"]);
      const user = (optionalString(body, "user") ?? "").trim();
      if (user === "" || user.length > 256)
        throw new InputError("user", "invalid-user", "user must be 1 to 256 characters, not only spaces");
      const role = optionalString(body, "role") ?? "viewer";
      if (!ROLES.includes(role as Role))
        throw new InputError("role", "invalid-role", `role must be ${ROLES.join(" or ")}, got '${role}'`);
      const applications = applicationsOf(body);
      const created = await createApiKey(deps.db, { user, role: role as Role, applications });
      return reply.code(201).send(created);
    },
  );

  app.delete<{ Params: { id: string } }>(
    "/rest/admin/api-keys/:id",
    {
      onRequest: guard,
      schema: {
        summary: "Revoke an API key: it stops working at once (it stays listed, with revokedAt)",
        tags,
        params: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
        response: {
          204: { type: "null", description: "Revoked" },
          ...notAdministrator,
          404: problem("No API key with that id"),
        },
      },
    },
    async (request, reply) => {
      if (!(await revokeApiKey(deps.db, request.params.id)))
        return refuse(404, `No API key with id '${request.params.id}'`);
      return reply.code(204).send();
    },
  );
}
