import type { FastifyInstance } from "fastify";
import { type CimdClient, type CimdPreset, cimdPreset } from "../../contracts/admin.ts";
import { resourceJsonSchema } from "../../contracts/json-schema.ts";
import type { IdentityAdministration } from "../../idp/administration.ts";
import { checkedDomains, planCimdChange, planNewCimdClient } from "../../idp/cimd/edit.ts";
import { CIMD_PRESETS } from "../../idp/cimd/presets.ts";
import type { CimdClientState } from "../../idp/cimd/repository.ts";
import { diagnoseCimdState, knownProfileNames } from "../../idp/cimd-diagnosis.ts";
import { UNKNOWN_CLIENT_ID } from "../../idp/keycloak/cimd-repository.ts";
import {
  adminBody,
  adminRoutes,
  booleanField,
  optionalStringList,
  stringField,
  stringListField,
} from "../admin-input.ts";
import { type BodyOf, bodyField } from "../body.ts";
import { refuse } from "../problem.ts";

const { guard, tags, problem, notAdministrator, inputRefused } = adminRoutes("CIMD client policies");
/** What a read or change of one CIMD client can be refused with. */
const clientRefusals = { ...notAdministrator, 404: problem("No CIMD client of that name") };
const clientParam = {
  type: "object",
  properties: { client: { type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$" } },
  required: ["client"],
} as const;
const clientResponse = { $ref: "CimdClient#" } as const;
/** The answers of a read or change of one CIMD client. */
const clientAnswers = { 200: clientResponse, ...clientRefusals };

/** One client's profile and policy with its diagnosis, as `imaging cimd list --json` and `show --json`. */
function clientJson(state: CimdClientState, known?: readonly string[]): CimdClient {
  const { client, profile, policy } = state;
  const diagnosis = diagnoseCimdState(state, known);
  const preset = Object.values(CIMD_PRESETS).find((p) => p.clientId === client.clientId);
  return {
    client: client.client,
    clientId: client.clientId === UNKNOWN_CLIENT_ID ? null : client.clientId,
    enabled: policy?.enabled ?? false,
    linked: policy?.profiles.includes(client.profile) ?? false,
    notes: diagnosis.notes,
    policy: policy
      ? {
          condition: policy.condition,
          enabled: policy.enabled,
          name: policy.name,
          profiles: policy.profiles,
          trustedDomains: policy.trustedDomains,
          uriSchemes: policy.uriSchemes,
        }
      : null,
    preset: preset?.id ?? null,
    problems: diagnosis.problems,
    profile: profile
      ? {
          allowHttpScheme: profile.allowHttpScheme,
          executor: profile.executor,
          name: profile.name,
          onlyAllowConfidentialClient: profile.onlyAllowConfidentialClient,
          restrictSameDomain: profile.restrictSameDomain,
          trustedDomains: profile.trustedDomains,
        }
      : null,
    variant: profile?.allowHttpScheme || policy?.uriSchemes.includes("http") ? "http" : "https",
  };
}

/**
 * What the rules of `imaging cimd` accept, as far as a pattern says it (the handlers check the rest and
 * name the rule): a host name (or `*.` wildcard) or an IPv6 literal, without port; a client_id URL with
 * a host name, a path of segments not starting with '.', no userinfo, query or fragment.
 */
const LABEL = "[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
const IPV6 = "[0-9A-Fa-f.]*:[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*";
const DOMAIN_PATTERN = `^((\\*\\.)?${LABEL}(\\.${LABEL})*|${IPV6}|\\[${IPV6}\\])$`;
const CLIENT_ID_PATTERN =
  "^https?://([A-Za-z0-9-]+\\.)*[A-Za-z][A-Za-z0-9-]*(:[0-9]{1,4})?(/[A-Za-z0-9_~!$&'()*+,;=:@-][A-Za-z0-9._~!$&'()*+,;=:@-]*)+$";
const clientIdSchema = { type: "string", pattern: CLIENT_ID_PATTERN } as const;
/** The https client_id unless the HTTP variant is asked for. */
const httpsUnlessHttpVariant = {
  if: { properties: { http: { const: true } }, required: ["http"] },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else keywords, not a thenable
  then: {},
  else: { properties: { clientId: { pattern: "^https://" } } },
} as const;

const domainList = (description: string) => ({
  type: "array",
  items: { type: "string", pattern: DOMAIN_PATTERN },
  minItems: 1,
  description,
});

/** A client by preset or by hand; `imaging cimd`'s rules (planNewCimdClient) judge the values. */
const newClientBody = adminBody(
  {
    client: stringField({ type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$" }),
    preset: stringField({ type: "string", enum: Object.keys(CIMD_PRESETS) }),
    clientId: stringField(clientIdSchema),
    trustedDomains: stringListField(
      domainList("Profile trusted domains: where the document is fetched from"),
    ),
    policyDomains: stringListField(domainList("Policy trusted domains: the client_id's host")),
    http: booleanField({ type: "boolean" }),
  },
  {
    keywords: {
      anyOf: [{ required: ["preset"] }, { required: ["client", "clientId"] }],
      ...httpsUnlessHttpVariant,
    },
  },
);

/** A domain list replacing the current one, each domain checked as `imaging cimd set` checks it. */
const changedDomains = (description: string) =>
  bodyField(domainList(description), (value, field) => {
    const domains = optionalStringList(value, field);
    return domains && checkedDomains(field, domains);
  });

/** The settings `imaging cimd set` changes; at least one. */
const clientChangeBody = adminBody(
  {
    clientId: stringField(clientIdSchema),
    trustedDomains: changedDomains("Replaces the profile's trusted domains"),
    policyDomains: changedDomains("Replaces the policy's trusted domains"),
    http: booleanField({ type: "boolean", description: "true: HTTP variant, false: HTTPS variant" }),
    enabled: booleanField({ type: "boolean", description: "Enable or disable the policy" }),
    restrictSameDomain: booleanField({ type: "boolean" }),
    onlyAllowConfidentialClient: booleanField({ type: "boolean" }),
  },
  { keywords: httpsUnlessHttpVariant, nothingToChange: true },
);

/**
 * CIMD client policies (admins): the profile and policy pair of each AI client, created from a preset or
 * by hand, changed, linked, unlinked and removed with `imaging cimd`'s model, rules and messages, where
 * the configured identity provider keeps them (platform store or Keycloak realm).
 */
export function adminCimdRoutes(app: FastifyInstance, identity: IdentityAdministration): void {
  app.get(
    "/rest/admin/cimd-presets",
    {
      onRequest: guard,
      schema: {
        summary: "The known AI clients a CIMD policy can be created for (presets)",
        tags,
        response: {
          200: { type: "array", items: resourceJsonSchema(cimdPreset) },
          ...notAdministrator,
        },
      },
    },
    async (): Promise<CimdPreset[]> =>
      Object.values(CIMD_PRESETS).map((p) => ({
        clientId: p.clientId,
        id: p.id,
        label: p.label,
        policyDomains: p.policyDomains,
        trustedDomains: p.trustedDomains,
      })),
  );

  app.get(
    "/rest/admin/cimd-policies",
    {
      onRequest: guard,
      schema: {
        summary: "List the CIMD clients: profile, policy, link and the mistakes that break sign-in",
        tags,
        response: {
          200: { type: "array", items: clientResponse },
          ...notAdministrator,
        },
      },
    },
    async (_request) => {
      return await identity.withCimd(async (repository) => {
        const clients = await repository.listClients();
        const config = await repository.loadConfig();
        const known = await knownProfileNames(repository);
        return clients.map((client) =>
          clientJson(
            {
              client,
              profile: config.profiles.find((p) => p.name === client.profile),
              policy: config.policies.find((p) => p.name === client.policy),
            },
            known,
          ),
        );
      });
    },
  );

  app.post<{ Body: BodyOf<typeof newClientBody> }>(
    "/rest/admin/cimd-policies",
    {
      onRequest: guard,
      schema: {
        summary:
          "Create a client's profile and policy, linked: from a preset or by hand (HTTPS or HTTP variant)",
        description:
          '`{ "preset": "claude-code" }` creates the preset\'s pair under the preset\'s name. By hand: `client` and ' +
          "`clientId`, optionally the profile's `trustedDomains` (default: the client_id's host, localhost, " +
          "127.0.0.1), the policy's `policyDomains` (default: the client_id's host) and `http: true` for the HTTP " +
          "variant (development only). A refusal names the rule (`rule`) and the field (`field`).",
        tags,
        body: newClientBody,
        response: {
          201: clientResponse,
          ...inputRefused,
          ...notAdministrator,
          409: problem("A client of that name exists"),
        },
      },
    },
    async (request, reply) => {
      const planned = planNewCimdClient(request.body);
      const state = await identity.withCimd(async (repository) => {
        const client = await repository.createClient(planned);
        return { client, profile: planned.profile, policy: planned.policy };
      });
      return reply.code(201).send(clientJson(state));
    },
  );

  app.get<{ Params: { client: string } }>(
    "/rest/admin/cimd-policies/:client",
    {
      onRequest: guard,
      schema: {
        summary: "A CIMD client's profile and policy as the identity provider enforces them",
        tags,
        params: clientParam,
        response: clientAnswers,
      },
    },
    async (request) => {
      const found = await identity.withCimd(async (repository) => {
        const state = await repository.getClientState(request.params.client);
        return state && clientJson(state, await knownProfileNames(repository));
      });
      if (!found) return refuse(404, `No CIMD client named ${request.params.client}`);
      return found;
    },
  );

  app.patch<{ Params: { client: string }; Body: BodyOf<typeof clientChangeBody> }>(
    "/rest/admin/cimd-policies/:client",
    {
      onRequest: guard,
      schema: {
        summary: "Change a client's client_id, domain lists, variant or switches (as `imaging cimd set`)",
        tags,
        params: clientParam,
        body: clientChangeBody,
        response: {
          200: clientResponse,
          ...inputRefused,
          ...clientRefusals,
        },
      },
    },
    async (request) => {
      const switches = request.body;
      return await identity.withCimd(async (repository) => {
        const state = await repository.updateClient(request.params.client, (current) =>
          planCimdChange(current, switches),
        );
        return clientJson(state, await knownProfileNames(repository));
      });
    },
  );

  for (const action of ["link", "unlink"] as const) {
    app.post<{ Params: { client: string } }>(
      `/rest/admin/cimd-policies/:client/${action}`,
      {
        onRequest: guard,
        schema: {
          summary:
            action === "link"
              ? "Add the client's profile to its policy's associated client profiles"
              : "Remove the client's profile from its policy's associated profiles (CIMD is then ignored)",
          tags,
          params: clientParam,
          response: clientAnswers,
        },
      },
      async (request) => {
        return await identity.withCimd(async (repository) => {
          const state =
            action === "link"
              ? await repository.linkClient(request.params.client)
              : await repository.unlinkClient(request.params.client);
          return clientJson(state, await knownProfileNames(repository));
        });
      },
    );
  }

  app.delete<{ Params: { client: string } }>(
    "/rest/admin/cimd-policies/:client",
    {
      onRequest: guard,
      schema: {
        summary: "Delete a client's profile and policy: its client_id is refused from the next request on",
        tags,
        params: clientParam,
        response: {
          204: { type: "null", description: "Removed" },
          ...clientRefusals,
        },
      },
    },
    async (request, reply) => {
      const removed = await identity.withCimd((repository) => repository.removeClient(request.params.client));
      if (!removed) return refuse(404, `No CIMD client named ${request.params.client}`);
      return reply.code(204).send();
    },
  );
}
