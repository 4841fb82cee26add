import { type Command, Option } from "commander";
import { checkClientIdUrl } from "../../idp/cimd/client-id.ts";
import type { CimdDiagnosis } from "../../idp/cimd/diagnostics.ts";
import { CimdEditError, checkedDomains, planCimdChange, planNewCimdClient } from "../../idp/cimd/edit.ts";
import {
  type CimdClient,
  clientNameProblem,
  normalizeHost,
  policyNameOf,
  profileNameOf,
} from "../../idp/cimd/model.ts";
import { findPreset, PRESET_IDS } from "../../idp/cimd/presets.ts";
import type { CimdClientState } from "../../idp/cimd/repository.ts";
import { UNKNOWN_CLIENT_ID } from "../../idp/keycloak/cimd-repository.ts";
import { CimdStoreError } from "../../store/cimd.ts";
import type { StoreOptions } from "../context.ts";
import { diagnoseCimdState, knownProfileNames, withCimdRepository } from "../idp-context.ts";
import { CliError, columnsTable, emit } from "../output.ts";

interface CommonOptions extends StoreOptions {
  json?: boolean;
}

interface AddOptions extends CommonOptions {
  preset?: string;
  clientId?: string;
  trustedDomains?: string;
  policyDomains?: string;
  http?: boolean;
}

interface SetOptions extends CommonOptions {
  clientId?: string;
  trustedDomains?: string;
  policyDomains?: string;
  http?: boolean;
  https?: boolean;
  enable?: boolean;
  disable?: boolean;
  restrictSameDomain?: string;
  onlyConfidential?: string;
}

const onOff = (value: string | undefined, flag: string): boolean | undefined => {
  if (value === undefined) return undefined;
  if (value === "on" || value === "true") return true;
  if (value === "off" || value === "false") return false;
  throw new CliError(`${flag} must be on or off, got '${value}'`, 2);
};

function checkClientName(client: string): void {
  const problem = clientNameProblem(client);
  if (problem) throw new CliError(problem, 2);
}

/** A flag's domain list, checked as the REST API checks it, the flag named in the message. */
function domainsFrom(value: string, flag: string): string[] {
  try {
    return checkedDomains(flag, [value]);
  } catch (error) {
    if (error instanceof CimdEditError) throw new CliError(error.message, 2);
    throw error;
  }
}

function checkedClientId(clientId: string, http: boolean): URL {
  const checked = checkClientIdUrl(clientId, { allowHttpScheme: http });
  if (!checked.ok) {
    if (checked.rule === "client-id-scheme" && clientId.startsWith("http:"))
      throw new CliError(
        "--client-id: client_id must use https, or add --http for the HTTP variant (development only)",
        2,
      );
    throw new CliError(`--client-id: ${checked.description}`, 2);
  }
  return checked.url;
}

const translate = (error: unknown): never => {
  if (error instanceof CimdStoreError) throw new CliError(error.message);
  // A missing half of the pair is the store's state (exit 1), anything else the input (exit 2).
  if (error instanceof CimdEditError)
    throw new CliError(error.message, error.rule.endsWith("-missing") ? 1 : 2);
  throw error;
};

const onOffText = (value: boolean) => (value ? "ON" : "OFF");

/** The `show --json` document: the profile and policy with the keys of the specification's tables. */
function showJson(state: CimdClientState) {
  const { profile, policy } = state;
  return {
    profile: profile && {
      name: profile.name,
      executor: profile.executor,
      allowHttpScheme: profile.allowHttpScheme,
      restrictSameDomain: profile.restrictSameDomain,
      onlyAllowConfidentialClient: profile.onlyAllowConfidentialClient,
      trustedDomains: profile.trustedDomains,
    },
    policy: policy && {
      name: policy.name,
      condition: policy.condition,
      uriSchemes: policy.uriSchemes,
      trustedDomains: policy.trustedDomains,
      profiles: policy.profiles,
    },
  };
}

function diagnosisLines(diagnosis: CimdDiagnosis, indent = ""): string[] {
  return [
    ...diagnosis.problems.map((p) => `${indent}problem: ${p}`),
    ...diagnosis.notes.map((n) => `${indent}note: ${n}`),
  ];
}

function describe(state: CimdClientState, diagnosis: CimdDiagnosis): string {
  const { client, profile, policy } = state;
  const width = "Only Allow Confidential Client".length;
  const rows = (pairs: [string, string][]) =>
    pairs.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`);
  const clientId = client.clientId === UNKNOWN_CLIENT_ID ? "(not recorded)" : client.clientId;
  const lines = [`CIMD client ${client.client}: client_id ${clientId}`, ""];
  if (profile)
    lines.push(
      `Profile ${profile.name}`,
      ...rows([
        ["Executor", profile.executor],
        ["Allow http scheme", onOffText(profile.allowHttpScheme)],
        ["Restrict same domain", onOffText(profile.restrictSameDomain)],
        ["Only Allow Confidential Client", onOffText(profile.onlyAllowConfidentialClient)],
        ["Trusted domains", profile.trustedDomains.join(", ") || "(none)"],
      ]),
      "",
    );
  else lines.push(`Profile ${client.profile}: missing`, "");
  if (policy)
    lines.push(
      `Policy ${policy.name}`,
      ...rows([
        ["Condition", policy.condition],
        ["URI scheme", policy.uriSchemes.join(", ") || "(none)"],
        ["Trusted domains", policy.trustedDomains.join(", ") || "(none)"],
        ["Associated client profiles", policy.profiles.join(", ") || "(none)"],
        ["Enabled", policy.enabled ? "yes" : "no"],
      ]),
    );
  else lines.push(`Policy ${client.policy}: missing`);
  const extra = diagnosisLines(diagnosis);
  if (extra.length > 0) lines.push("", ...extra);
  else lines.push("", "No problem found.");
  return lines.join("\n");
}

const diagnose = (state: CimdClientState, knownProfiles?: readonly string[]) =>
  diagnoseCimdState(state, knownProfiles);

function variantOf(state: Pick<CimdClientState, "profile" | "policy">): string {
  const http = state.profile?.allowHttpScheme || state.policy?.uriSchemes.includes("http");
  return http ? "http" : "https";
}

export function registerCimd(program: Command): void {
  const cimd = program
    .command("cimd")
    .description(
      "CIMD client policies of the identity provider: one profile (the rules) and one policy (which " +
        "client_ids they apply to) per AI client, linked by the policy's associated profiles. They live in " +
        "the platform store, or in Keycloak's realm (Client Policies) with IDP=keycloak",
    );
  const common = (c: Command) =>
    c
      .option("--data-dir <dir>", "data directory (default: IMAGING_DATA_DIR, else ./data)")
      .option("--config <file>", "JSON config file")
      .option("--json", "print JSON");

  common(
    cimd
      .command("add")
      .description(
        "Create cimd-profile-CLIENT and cimd-policy-CLIENT, linked (HTTPS variant unless --http). " +
          "Example: imaging cimd add claude-code --preset claude-code",
      )
      .argument("<client>", "short name of the AI client, e.g. claude-code")
      .option(
        "--preset <preset>",
        `fill client_id and domains for a known client: ${PRESET_IDS.join(" or ")}`,
      )
      .option("--client-id <url>", "the client_id URL the AI client presents (its metadata document)")
      .option(
        "--trusted-domains <list>",
        "profile trusted domains, comma-separated: where the document is fetched from and the hosts its " +
          "URLs may use (default: the client_id's host, localhost, 127.0.0.1)",
      )
      .option(
        "--policy-domains <list>",
        "policy trusted domains, comma-separated: the client_id's host (default: that host)",
      )
      .option("--http", "HTTP variant, development only: Allow http scheme ON, URI schemes https and http"),
  ).action(async (client: string, options: AddOptions) => {
    checkClientName(client);
    const preset = options.preset === undefined ? undefined : findPreset(options.preset);
    if (options.preset !== undefined && !preset)
      throw new CliError(`--preset must be ${PRESET_IDS.join(" or ")}, got '${options.preset}'`, 2);
    const clientId = options.clientId ?? preset?.clientId;
    if (clientId === undefined)
      throw new CliError(`--client-id is required (or --preset ${PRESET_IDS.join("|")})`, 2);
    const http = Boolean(options.http);
    const host = normalizeHost(checkedClientId(clientId, http).hostname);
    const trustedDomains =
      options.trustedDomains !== undefined
        ? domainsFrom(options.trustedDomains, "--trusted-domains")
        : (preset?.trustedDomains ?? [...new Set([host, "localhost", "127.0.0.1"])]);
    const policyDomains =
      options.policyDomains !== undefined
        ? domainsFrom(options.policyDomains, "--policy-domains")
        : (preset?.policyDomains ?? [host]);
    // Checked above with the flags' words; the pair itself is built as the REST API builds it.
    const { profile, policy } = planNewCimdClient({ client, clientId, trustedDomains, policyDomains, http });
    const created = await withCimdRepository(options, (repository) =>
      repository.createClient({ client, clientId, profile, policy }),
    ).catch((error: unknown) => {
      if (error instanceof CimdStoreError && error.code === "exists")
        throw new CliError(
          `${error.message}: change it with imaging cimd set ${client}, or run imaging cimd remove ${client} first`,
        );
      return translate(error);
    });
    const state = { client: created, profile, policy };
    const diagnosis = diagnose(state);
    emit(Boolean(options.json), { client: created.client, clientId, ...showJson(state), ...diagnosis }, () =>
      [
        `Created ${profile.name} and ${policy.name} (${http ? "HTTP variant, development only" : "HTTPS variant"}), linked, for client_id ${clientId}`,
        `  profile trusted domains: ${trustedDomains.join(", ")}`,
        `  policy trusted domains:  ${policyDomains.join(", ")}`,
        ...diagnosisLines(diagnosis, "  "),
      ].join("\n"),
    );
  });

  common(
    cimd
      .command("list")
      .description("List the CIMD clients with their variant, link and the mistakes that break sign-in"),
  ).action(async (options: CommonOptions) => {
    const { rows, location } = await withCimdRepository(options, async (repository) => {
      const clients = await repository.listClients();
      const config = await repository.loadConfig();
      const known = await knownProfileNames(repository);
      const rows = clients.map((client: CimdClient) => {
        const state: CimdClientState = {
          client,
          profile: config.profiles.find((p) => p.name === client.profile),
          policy: config.policies.find((p) => p.name === client.policy),
        };
        return {
          client: client.client,
          clientId: client.clientId,
          profile: client.profile,
          policy: client.policy,
          variant: variantOf(state),
          linked: state.policy?.profiles.includes(client.profile) ?? false,
          enabled: state.policy?.enabled ?? false,
          ...diagnose(state, known),
        };
      });
      return { rows, location: repository.location };
    });
    emit(Boolean(options.json), rows, () => {
      if (rows.length === 0)
        return `No CIMD client in ${location} (add one: imaging cimd add claude-code --preset claude-code)`;
      const lines = [
        columnsTable(rows, {
          CLIENT: (r) => r.client,
          "CLIENT ID": (r) => (r.clientId === UNKNOWN_CLIENT_ID ? "(not recorded)" : r.clientId),
          VARIANT: (r) => r.variant,
          LINKED: (r) => (r.linked ? "yes" : "no"),
          ENABLED: (r) => (r.enabled ? "yes" : "no"),
          PROBLEMS: (r) => String(r.problems.length),
        }),
      ];
      for (const r of rows) {
        const extra = diagnosisLines(r, "  ");
        if (extra.length > 0) lines.push("", `${r.client}:`, ...extra);
      }
      return lines.join("\n");
    });
  });

  common(
    cimd
      .command("show")
      .description("Show a client's profile and policy as the identity provider enforces them")
      .argument("<client>", "client name (see: imaging cimd list)"),
  ).action(async (client: string, options: CommonOptions) => {
    const state = await withCimdRepository(options, async (repository) => {
      const found = await repository.getClientState(client);
      return found && { state: found, known: await knownProfileNames(repository) };
    });
    if (!state) throw new CliError(`No CIMD client named ${client} (see: imaging cimd list)`);
    emit(Boolean(options.json), showJson(state.state), () =>
      describe(state.state, diagnose(state.state, state.known)),
    );
  });

  common(
    cimd
      .command("remove")
      .description("Delete a client's profile and policy: its client_id is refused from the next request on")
      .argument("<client>", "client name"),
  ).action(async (client: string, options: CommonOptions) => {
    const removed = await withCimdRepository(options, (repository) => repository.removeClient(client)).catch(
      translate,
    );
    if (!removed) throw new CliError(`No CIMD client named ${client} (see: imaging cimd list)`);
    emit(
      Boolean(options.json),
      { client, removed: true },
      () => `Removed ${profileNameOf(client)} and ${policyNameOf(client)}`,
    );
  });

  const linkCommand = (name: "link" | "unlink", description: string) =>
    common(cimd.command(name).description(description).argument("<client>", "client name")).action(
      async (client: string, options: CommonOptions) => {
        const state = await withCimdRepository(options, (repository) =>
          name === "link" ? repository.linkClient(client) : repository.unlinkClient(client),
        ).catch(translate);
        const diagnosis = diagnose(state);
        emit(
          Boolean(options.json),
          { client, policy: state.client.policy, profiles: state.policy?.profiles ?? [], ...diagnosis },
          () =>
            [
              name === "link"
                ? `${state.client.profile} is an associated client profile of ${state.client.policy}`
                : `${state.client.profile} unlinked from ${state.client.policy}: CIMD is now ignored for this client`,
              ...diagnosisLines(diagnosis, "  "),
            ].join("\n"),
        );
      },
    );
  linkCommand("link", "Add the client's profile to its policy's associated client profiles");
  linkCommand(
    "unlink",
    "Remove the client's profile from its policy's associated profiles (reproduces \"Policy exists but CIMD is ignored\")",
  );

  common(
    cimd
      .command("set")
      .description("Change a client's client_id, domain lists, variant or switches")
      .argument("<client>", "client name")
      .option("--client-id <url>", "new client_id URL")
      .option("--trusted-domains <list>", "replace the profile's trusted domains (comma-separated)")
      .option("--policy-domains <list>", "replace the policy's trusted domains (comma-separated)")
      .addOption(
        new Option("--http", "HTTP variant: Allow http scheme ON, URI schemes https, http").conflicts(
          "https",
        ),
      )
      .addOption(new Option("--https", "HTTPS variant: Allow http scheme OFF, URI scheme https"))
      .addOption(new Option("--enable", "enable the policy").conflicts("disable"))
      .addOption(new Option("--disable", "disable the policy (the client_id is then refused)"))
      .option("--restrict-same-domain <on|off>", "profile: redirect URIs only on the client_id's domain")
      .option("--only-confidential <on|off>", "profile: Only Allow Confidential Client"),
  ).action(async (client: string, options: SetOptions) => {
    checkClientName(client);
    const trustedDomains =
      options.trustedDomains === undefined
        ? undefined
        : domainsFrom(options.trustedDomains, "--trusted-domains");
    const policyDomains =
      options.policyDomains === undefined
        ? undefined
        : domainsFrom(options.policyDomains, "--policy-domains");
    const restrictSameDomain = onOff(options.restrictSameDomain, "--restrict-same-domain");
    const onlyConfidential = onOff(options.onlyConfidential, "--only-confidential");
    const http = options.http ? true : options.https ? false : undefined;
    const enabled = options.enable ? true : options.disable ? false : undefined;
    const changes = [
      options.clientId,
      trustedDomains,
      policyDomains,
      restrictSameDomain,
      onlyConfidential,
      http,
      enabled,
    ].filter((v) => v !== undefined);
    if (changes.length === 0)
      throw new CliError("nothing to change: give at least one option (see --help)", 2);

    const state = await withCimdRepository(options, (repository) =>
      repository.updateClient(client, (current) => {
        const allowHttp = http ?? current.profile?.allowHttpScheme ?? false;
        if (options.clientId !== undefined) checkedClientId(options.clientId, allowHttp);
        return planCimdChange(current, {
          clientId: options.clientId,
          trustedDomains,
          policyDomains,
          http,
          enabled,
          restrictSameDomain,
          onlyAllowConfidentialClient: onlyConfidential,
        });
      }),
    ).catch(translate);
    const diagnosis = diagnose(state);
    emit(
      Boolean(options.json),
      { client, clientId: state.client.clientId, ...showJson(state), ...diagnosis },
      () => [`Updated CIMD client ${client}`, "", describe(state, diagnosis)].join("\n"),
    );
  });
}
