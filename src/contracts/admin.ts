/**
 * The administration, status and error shapes of the REST API, declared once like resources.ts: the
 * routes' JSON Schemas (./json-schema.ts) and the console's types (`z.infer`) come from these.
 *
 * Property order is the order the answers have always been serialized in (not always by name: status
 * and problem details keep theirs), so answers stay byte-identical.
 */
import * as z from "zod";
import { ROLES } from "./platform.ts";

const stringList = () => z.array(z.string());

/** RFC 9457 problem details: every error answer of the REST API and the gateway in front of it. */
export const problem = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    instance: z.string().optional(),
    rule: z.string().optional().describe("The validation rule the input breaks (administration endpoints)"),
    field: z.string().optional().describe("The input field at fault (administration endpoints)"),
    vulnerability: z
      .string()
      .optional()
      .describe("The vulnerability id no imported advisory names (type unknown-vulnerability)"),
    advisoriesImportedAt: z
      .string()
      .nullable()
      .optional()
      .describe("When advisories were last imported (type unknown-vulnerability; null: not recorded)"),
  })
  .describe("RFC 9457 problem details");
export type Problem = z.infer<typeof problem>;

export const user = z
  .object({
    applications: stringList(),
    createdAt: z.string(),
    disabled: z.boolean(),
    roles: stringList(),
    username: z.string(),
  })
  .describe("Who may sign in: role and the applications a viewer may read (admins read all)");
export type User = z.infer<typeof user>;

/** GET /rest/admin/users. */
export const usersAnswer = z.object({
  idp: z.enum(["embedded", "keycloak"]),
  readOnly: z.boolean().describe("true with IDP=keycloak: manage users in Keycloak"),
  users: z.array(user),
  usersConsoleUrl: z
    .string()
    .nullable()
    .describe("Keycloak's admin console at the realm's users (IDP=keycloak)"),
});
export type UsersAnswer = z.infer<typeof usersAnswer>;

/** POST /rest/admin/users: the user, with the generated password when none was given. */
export const createdUser = user.extend({
  generatedPassword: z.string().optional().describe("Shown once: only its hash is kept"),
});
export type CreatedUser = z.infer<typeof createdUser>;

/** POST /rest/admin/users/{username}/password. */
export const passwordReset = z.object({
  generatedPassword: z.string().optional().describe("Shown once"),
  passwordChanged: z.boolean(),
  username: z.string(),
});
export type PasswordReset = z.infer<typeof passwordReset>;

/** An API key as listed (never its secret). */
export const apiKey = z.object({
  applications: stringList(),
  createdAt: z.string(),
  id: z.string(),
  revokedAt: z.string().nullable(),
  role: z.enum(ROLES),
  user: z.string(),
});
export type ApiKey = z.infer<typeof apiKey>;

/** POST /rest/admin/api-keys: the key itself is answered once. */
export const createdApiKey = apiKey.extend({ key: z.string().describe("Send it as X-API-KEY") });
export type CreatedApiKey = z.infer<typeof createdApiKey>;

export const cimdClient = z
  .object({
    client: z.string().describe("Short name; the pair is cimd-profile-<client>, cimd-policy-<client>"),
    clientId: z.string().nullable().describe("The client_id URL (null: made outside imaging cimd)"),
    enabled: z.boolean(),
    linked: z.boolean().describe("The profile is among the policy's associated profiles"),
    notes: stringList(),
    policy: z
      .object({
        condition: z.string(),
        enabled: z.boolean(),
        name: z.string(),
        profiles: stringList(),
        trustedDomains: stringList(),
        uriSchemes: stringList(),
      })
      .nullable(),
    preset: z.string().nullable().describe("The preset whose client_id this is"),
    problems: stringList().describe("Mistakes that make sign-in fail"),
    profile: z
      .object({
        allowHttpScheme: z.boolean(),
        executor: z.string(),
        name: z.string(),
        onlyAllowConfidentialClient: z.boolean(),
        restrictSameDomain: z.boolean(),
        trustedDomains: stringList(),
      })
      .nullable(),
    variant: z.enum(["https", "http"]),
  })
  .describe("An AI client's CIMD profile and policy (the specification's tables) with what breaks sign-in");
export type CimdClient = z.infer<typeof cimdClient>;

/** GET /rest/admin/cimd-presets: a known AI client a CIMD policy can be created for. */
export const cimdPreset = z.object({
  clientId: z.string(),
  id: z.string(),
  label: z.string(),
  policyDomains: stringList(),
  trustedDomains: stringList(),
});
export type CimdPreset = z.infer<typeof cimdPreset>;

/** GET /rest/status. */
export const platformStatus = z.object({
  version: z.string(),
  baseUrl: z.string(),
  parts: z.array(
    z.object({
      id: z.string().describe("gateway, rest, mcp-analysis, mcp-gatekeeper, identity-provider, store"),
      name: z.string(),
      state: z.enum(["UP", "DOWN"]),
      detail: z.string().describe("What the health check observed"),
    }),
  ),
});
export type PlatformStatus = z.infer<typeof platformStatus>;

/** POST /rest/admin/doctor: the checks of `imaging doctor`. */
export const doctorAnswer = z.object({
  baseUrl: z.string().nullable(),
  issuer: z.string().nullable(),
  idp: z.string(),
  checkedAt: z.string().meta({ format: "date-time" }),
  checks: z.array(
    z.object({
      id: z.string(),
      title: z.string(),
      verdict: z.enum(["pass", "fail", "warn", "n/a"]),
      detail: z.string(),
      fix: z.string().nullable(),
    }),
  ),
});
export type DoctorAnswer = z.infer<typeof doctorAnswer>;
/** One check of `imaging doctor`, as the CLI prints it and POST /rest/admin/doctor answers it. */
export type DoctorCheck = DoctorAnswer["checks"][number];

/** The administration shapes that have a name of their own (registered as `$id`, referred to as `Name#`). */
export const namedAdminShapes = {
  Problem: problem,
  CimdClient: cimdClient,
  User: user,
} as const;
