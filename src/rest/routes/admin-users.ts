import type { FastifyInstance } from "fastify";
import {
  createdUser,
  type PasswordReset,
  passwordReset,
  type User,
  usersAnswer,
} from "../../contracts/admin.ts";
import { resourceJsonSchema } from "../../contracts/json-schema.ts";
import { ROLES, type Role } from "../../contracts/platform.ts";
import { generatePassword, passwordProblem } from "../../domain/passwords.ts";
import { usernameProblem } from "../../domain/users.ts";
import type { IdentityAdministration } from "../../idp/administration.ts";
import type { UserRecord } from "../../store/users.ts";
import { adminBody, adminRoutes, applicationsField, InputError, optionalString } from "../admin-input.ts";
import { type BodyOf, bodyField } from "../body.ts";
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

const userJson = (user: UserRecord): User => ({
  applications: user.applications,
  createdAt: user.createdAt,
  disabled: user.disabled,
  roles: user.roles,
  username: user.username,
});

const usernameField = bodyField({ type: "string", pattern: USERNAME_PATTERN }, (value, field): string => {
  const username = optionalString(value, field) ?? "";
  const problem = usernameProblem(username);
  if (problem) throw new InputError(field, "invalid-username", problem);
  return username;
});

const roleField = bodyField({ type: "string", enum: [...ROLES] }, (value, field): Role => {
  if (typeof value !== "string" || !ROLES.includes(value as Role))
    throw new InputError(field, "invalid-role", `role must be ${ROLES.join(" or ")}`);
  return value as Role;
});

/** The password given, checked as the store checks it; absent: the handler generates one. */
const passwordField = bodyField(
  { type: "string", minLength: 12, maxLength: 1024 },
  (value, field): string | undefined => {
    const given = optionalString(value, field);
    const problem = given === undefined ? undefined : passwordProblem(given);
    if (problem) throw new InputError(field, "weak-password", problem);
    return given;
  },
);

const applicationsOfViewer = applicationsField("Applications a viewer may read (admins read all)");

const newUserBody = adminBody(
  { username: usernameField, password: passwordField, role: roleField, applications: applicationsOfViewer },
  { keywords: { required: ["username", "role"] } },
);
const rightsBody = adminBody(
  { role: roleField, applications: applicationsOfViewer },
  { keywords: { required: ["role"] } },
);
const passwordBody = adminBody({ password: passwordField });

/** The password given, or one generated and shown once. */
function passwordOf(given: string | undefined): { password: string; generated: boolean } {
  return given === undefined
    ? { password: generatePassword(), generated: true }
    : { password: given, generated: false };
}

/**
 * Users of the embedded identity provider (admins): list, add, grant applications, reset password,
 * remove, with `imaging users`' rules and messages. With IDP=keycloak the list is read-only and names
 * Keycloak's admin console, where users are managed.
 */
export function adminUserRoutes(app: FastifyInstance, identity: IdentityAdministration): void {
  /** Before the body is judged: with IDP=keycloak no user is changed here, whatever the body says. */
  const writable = async (): Promise<void> => {
    if (identity.idp === "keycloak")
      refuse(
        409,
        `Users are managed in Keycloak's admin console with IDP=keycloak: ${identity.usersConsoleUrl ?? ""}`,
      );
  };

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

  app.post<{ Body: BodyOf<typeof newUserBody> }>(
    "/rest/admin/users",
    {
      onRequest: guard,
      preValidation: writable,
      schema: {
        summary: "Add a user; without a password one is generated and answered once (generatedPassword)",
        tags,
        body: newUserBody,
        response: {
          201: resourceJsonSchema(createdUser),
          ...inputRefused,
          ...notAdministrator,
          409: problem("The user name is taken (ignoring case), or users are managed in Keycloak"),
        },
      },
    },
    async (request, reply) => {
      const { username, role, applications } = request.body;
      const { password, generated } = passwordOf(request.body.password);
      const user = await identity.withUsers((directory) =>
        directory.create({ username, password, role, applications }),
      );
      return reply
        .code(201)
        .send({ ...userJson(user), ...(generated ? { generatedPassword: password } : {}) });
    },
  );

  app.put<{ Params: { username: string }; Body: BodyOf<typeof rightsBody> }>(
    "/rest/admin/users/:username/rights",
    {
      onRequest: guard,
      preValidation: writable,
      schema: {
        summary: "Replace a user's role and the applications they may read",
        tags,
        params: usernameParam,
        body: rightsBody,
        response: {
          200: userResponse,
          ...userChangeRefusals,
        },
      },
    },
    async (request) => {
      const { role, applications } = request.body;
      const user = await identity.withUsers((directory) =>
        directory.grant(request.params.username, { role, applications }),
      );
      return userJson(user);
    },
  );

  app.post<{ Params: { username: string }; Body: BodyOf<typeof passwordBody> }>(
    "/rest/admin/users/:username/password",
    {
      onRequest: guard,
      preValidation: writable,
      schema: {
        summary: "Reset a user's password; without one it is generated and answered once",
        tags,
        params: usernameParam,
        body: passwordBody,
        response: {
          200: resourceJsonSchema(passwordReset),
          ...userChangeRefusals,
        },
      },
    },
    async (request): Promise<PasswordReset> => {
      const { password, generated } = passwordOf(request.body.password);
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
      preValidation: writable,
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
      const removed = await identity.withUsers((directory) => directory.remove(request.params.username));
      if (!removed) return refuse(404, `No user named '${request.params.username}'`);
      return reply.code(204).send();
    },
  );
}
