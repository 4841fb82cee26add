import type { FastifyInstance } from "fastify";
import { createdUser, usersAnswer } from "../../contracts/admin.ts";
import { resourceJsonSchema } from "../../contracts/json-schema.ts";
import { ROLES, type Role } from "../../contracts/platform.ts";
import { generatePassword, passwordProblem } from "../../domain/passwords.ts";
import { usernameProblem } from "../../domain/users.ts";
import type { IdentityAdministration } from "../../idp/administration.ts";
import type { UserRecord } from "../../store/users.ts";
import {
  adminRoutes,
  applicationsOf,
  bodyObject,
  InputError,
  onlyKnown,
  optionalString,
} from "../admin-input.ts";
import { paramSchemas } from "../params.ts";
import { refuse } from "../problem.ts";

const { guard, tags, problem, notAdministrator, inputRefused } = adminRoutes("users");
/** What a change of an existing user can be refused with. */
const userRefusals = {
  404: problem("No user of that name"),
  409: problem("Users are managed in Keycloak"),
};
const userChangeRefusals = { ...inputRefused, ...notAdministrator, ...userRefusals };
const USERNAME_PATTERN = "^[A-Za-z0-9._@-]{1,64}$";
const usernameParam = {
  type: "object",
  properties: { username: { type: "string", pattern: USERNAME_PATTERN } },
  required: ["username"],
} as const;
const userResponse = { $ref: "User#" } as const;

const userJson = (user: UserRecord) => ({
  applications: user.applications,
  createdAt: user.createdAt,
  disabled: user.disabled,
  roles: user.roles,
  username: user.username,
});

function role(body: Record<string, unknown>): Role {
  const value = body.role;
  if (typeof value !== "string" || !ROLES.includes(value as Role))
    throw new InputError("role", "invalid-role", `role must be ${ROLES.join(" or ")}`);
  return value as Role;
}

/** The password given (checked as the store checks it), or one generated and shown once. */
function passwordOf(body: Record<string, unknown>): { password: string; generated: boolean } {
  const given = optionalString(body, "password");
  if (given === undefined) return { password: generatePassword(), generated: true };
  const problem = passwordProblem(given);
  if (problem) throw new InputError("password", "weak-password", problem);
  return { password: given, generated: false };
}

const rightsSchema = {
  applications: {
    type: "array",
    items: paramSchemas.applicationName,
    description: "Applications a viewer may read (admins read all)",
  },
  role: { type: "string", enum: [...ROLES] },
} as const;

/**
 * Users of the embedded identity provider (admins): list, add, grant applications, reset password,
 * remove, with `imaging users`' rules and messages. With IDP=keycloak the list is read-only and names
 * Keycloak's admin console, where users are managed.
 */
export function adminUserRoutes(app: FastifyInstance, identity: IdentityAdministration): void {
  const readOnly = (): never =>
    refuse(
      409,
      `Users are managed in Keycloak's admin console with IDP=keycloak: ${identity.usersConsoleUrl ?? ""}`,
    );

  app.get(
    "/rest/admin/users",
    {
      onRequest: guard,
      schema: {
        summary: "List who may sign in, with their role and applications",
        tags,
        response: {
          200: resourceJsonSchema(usersAnswer),
          ...notAdministrator,
        },
      },
    },
    async (_request) => {
      const users = await identity.withUsers((directory) => directory.list());
      return {
        idp: identity.idp,
        readOnly: identity.idp === "keycloak",
        users: users.map(userJson),
        usersConsoleUrl: identity.usersConsoleUrl ?? null,
      };
    },
  );

  app.post<{ Body: unknown }>(
    "/rest/admin/users",
    {
      onRequest: guard,
      schema: {
        summary: "Add a user; without a password one is generated and answered once (generatedPassword)",
        tags,
        body: {
          type: "object",
          properties: {
            ...rightsSchema,
            password: { type: "string", minLength: 12, maxLength: 1024 },
            username: { type: "string", pattern: USERNAME_PATTERN },
          },
          required: ["username", "role"],
          additionalProperties: false,
        },
        response: {
          201: resourceJsonSchema(createdUser),
          ...inputRefused,
          ...notAdministrator,
          409: problem("The user name is taken (ignoring case), or users are managed in Keycloak"),
        },
      },
    },
    async (request, reply) => {
      if (identity.idp === "keycloak") readOnly();
      const body = bodyObject(request.body);
      onlyKnown(body, ["username", "password", "role", "applications"]);
      const username = optionalString(body, "username") ?? "";
      const nameProblem = usernameProblem(username);
      if (nameProblem) throw new InputError("username", "invalid-username", nameProblem);
      const grantedRole = role(body);
      const applications = applicationsOf(body);
      const { password, generated } = passwordOf(body);
      const user = await identity.withUsers((directory) =>
        directory.create({ username, password, role: grantedRole, applications }),
      );
      return reply
        .code(201)
        .send({ ...userJson(user), ...(generated ? { generatedPassword: password } : {}) });
    },
  );

  app.put<{ Params: { username: string }; Body: unknown }>(
    "/rest/admin/users/:username/rights",
    {
      onRequest: guard,
      schema: {
        summary: "Replace a user's role and the applications they may read",
        tags,
        params: usernameParam,
        body: { type: "object", properties: rightsSchema, required: ["role"], additionalProperties: false },
        response: {
          200: userResponse,
          ...userChangeRefusals,
        },
      },
    },
    async (request) => {
      if (identity.idp === "keycloak") readOnly();
      const body = bodyObject(request.body);
      onlyKnown(body, ["role", "applications"]);
      const grantedRole = role(body);
      const applications = applicationsOf(body);
      const user = await identity.withUsers((directory) =>
        directory.grant(request.params.username, { role: grantedRole, applications }),
      );
      return userJson(user);
    },
  );

  app.post<{ Params: { username: string }; Body: unknown }>(
    "/rest/admin/users/:username/password",
    {
      onRequest: guard,
      schema: {
        summary: "Reset a user's password; without one it is generated and answered once",
        tags,
        params: usernameParam,
        body: {
          type: "object",
          properties: { password: { type: "string", minLength: 12, maxLength: 1024 } },
          additionalProperties: false,
        },
        response: {
          200: {
            type: "object",
            properties: {
              generatedPassword: { type: "string", description: "Shown once" },
              passwordChanged: { type: "boolean" },
              username: { type: "string" },
            },
            required: ["passwordChanged", "username"],
          },
          ...userChangeRefusals,
        },
      },
    },
    async (request) => {
      if (identity.idp === "keycloak") readOnly();
      const body = bodyObject(request.body);
      onlyKnown(body, ["password"]);
      const { password, generated } = passwordOf(body);
      const user = await identity.withUsers((directory) =>
        directory.setPassword(request.params.username, password),
      );
      return {
        ...(generated ? { generatedPassword: password } : {}),
        passwordChanged: true,
        username: user.username,
      };
    },
  );

  app.delete<{ Params: { username: string } }>(
    "/rest/admin/users/:username",
    {
      onRequest: guard,
      schema: {
        summary: "Remove a user: they can no longer sign in",
        tags,
        params: usernameParam,
        response: {
          204: { type: "null", description: "Removed" },
          ...notAdministrator,
          ...userRefusals,
        },
      },
    },
    async (request, reply) => {
      if (identity.idp === "keycloak") readOnly();
      const removed = await identity.withUsers((directory) => directory.remove(request.params.username));
      if (!removed) return refuse(404, `No user named '${request.params.username}'`);
      return reply.code(204).send();
    },
  );
}
