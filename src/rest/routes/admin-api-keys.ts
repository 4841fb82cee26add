import type { FastifyInstance } from "fastify";
import { apiKey, createdApiKey } from "../../contracts/admin.ts";
import { resourceJsonSchema } from "../../contracts/json-schema.ts";
import { ROLES, type Role } from "../../contracts/platform.ts";
import { createApiKey } from "../../domain/api-keys.ts";
import { listApiKeys, revokeApiKey } from "../../store/api-keys.ts";
import { adminBody, adminRoutes, applicationsField, InputError, optionalString } from "../admin-input.ts";
import { type BodyOf, bodyField } from "../body.ts";
import type { RestDeps } from "../context.ts";
import { refuse } from "../problem.ts";

const { guard, tags, problem, notAdministrator, inputRefused } = adminRoutes("API keys");

const newKeyBody = adminBody(
  {
    user: bodyField({ type: "string", minLength: 1, maxLength: 256, pattern: "\\S" }, (value, field) => {
      const user = (optionalString(value, field) ?? "").trim();
      if (user === "" || user.length > 256)
        throw new InputError(field, "invalid-user", "user must be 1 to 256 characters, not only spaces");
      return user;
    }),
    role: bodyField({ type: "string", enum: [...ROLES] }, (value, field): Role => {
      const role = optionalString(value, field) ?? "viewer";
      if (!ROLES.includes(role as Role))
        throw new InputError(field, "invalid-role", `role must be ${ROLES.join(" or ")}, got '${role}'`);
      return role as Role;
    }),
    applications: applicationsField("Applications a viewer key may read"),
  },
  { keywords: { required: ["user"] } },
);

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

  app.post<{ Body: BodyOf<typeof newKeyBody> }>(
    "/rest/admin/api-keys",
    {
      onRequest: guard,
      schema: {
        summary: "Create an API key: `key` is answered once, only its hash is stored",
        tags,
        body: newKeyBody,
        response: {
          201: resourceJsonSchema(createdApiKey),
          ...inputRefused,
          ...notAdministrator,
        },
      },
    },
    async (request, reply) => {
      const created = await createApiKey(deps.db, request.body);
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
