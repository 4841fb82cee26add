import {
  type McpPath,
  type McpServerKind,
  MCP_ROUTES as PLATFORM_MCP_ROUTES,
} from "../contracts/platform.ts";
import { type Check, type CheckDefinition, fail, pass, warn } from "./check.ts";
import { type Answered, describeAnswer, jsonObject, looksLikeHtml, type Observation } from "./http.ts";

/**
 * The gateway's public URL contract (DESIGN.md), as observed from outside: healthcheck, Bearer
 * challenge, protected resource metadata, discovery redirects and JSON 404s.
 */

export interface McpRoute {
  kind: McpServerKind;
  path: McpPath;
}

export const MCP_ROUTES: readonly McpRoute[] = (Object.keys(PLATFORM_MCP_ROUTES) as McpServerKind[]).map(
  (kind) => ({ kind, path: PLATFORM_MCP_ROUTES[kind] }),
);

/** Suffix of the per-route check ids: `challenge-mcp`, `challenge-gatekeeper`. */
const suffix = (route: McpRoute) => (route.kind === "analysis" ? "mcp" : "gatekeeper");

const metadataUrlOf = (base: string, route: McpRoute) =>
  `${base}/.well-known/oauth-protected-resource${route.path}`;

export const fixes = {
  startGateway:
    "Start the gateway (imaging start), or give this command the address it listens on (PUBLIC_URL, or --url).",
  pointAtGateway:
    "Point base_url (PUBLIC_URL or --url) and every AI client at the gateway's user access port and its /mcp endpoint, never at an MCP server or the identity provider directly.",
  publicUrl:
    "Set PUBLIC_URL to the address AI clients use (http://<gateway-fqdn>:8090, or https://<gateway-fqdn>), the same for the gateway and for this command, and restart the gateway; a gateway started with --local (or --port) is checked with the same flags.",
} as const;

export const GATEWAY: CheckDefinition = { id: "gateway", title: "The gateway answers at base_url" };

export function gatewayCheck(observation: Observation): Check {
  const where = `GET ${observation.url}`;
  if (!observation.ok) return fail(GATEWAY, `${where}: ${describeAnswer(observation)}`, fixes.startGateway);
  const body = jsonObject(observation);
  if (observation.status !== 200 || !body)
    return fail(
      GATEWAY,
      `${where}: ${describeAnswer(observation)}, not the gateway's healthcheck (an MCP server, the identity provider or another service answers there)`,
      fixes.pointAtGateway,
    );
  if (body.service !== "imaging-services")
    return fail(
      GATEWAY,
      `${where}: 200 JSON from ${JSON.stringify(body.service ?? "an unknown service")}, not imaging-services`,
      fixes.pointAtGateway,
    );
  const details = (body.details ?? {}) as { version?: unknown; upstreams?: Record<string, unknown> };
  const version = typeof details.version === "string" ? ` ${details.version}` : "";
  const down = Object.entries(details.upstreams ?? {})
    .filter(([, state]) => state === "DOWN")
    .map(([name]) => name);
  if (body.status !== "UP" || down.length > 0)
    return warn(
      GATEWAY,
      `${where}: 200, status ${String(body.status)}${down.length > 0 ? `, DOWN: ${down.join(", ")}` : ""}`,
      "Start the parts reported DOWN, or correct REST_UPSTREAM_URL / MCP_ANALYSIS_UPSTREAM_URL / MCP_GATEKEEPER_UPSTREAM_URL on the gateway.",
    );
  return pass(GATEWAY, `${where}: 200, status UP (imaging-services${version})`);
}

export const challengeDef = (route: McpRoute): CheckDefinition => ({
  id: `challenge-${suffix(route)}`,
  title: `Unauthenticated POST ${route.path} gets the Bearer challenge`,
});

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The specification's challenge, exactly, optionally followed by `, scope="..."`. */
function expectedChallenge(base: string, route: McpRoute): string {
  return `Bearer resource_metadata="${metadataUrlOf(base, route)}"`;
}

export function challengeMatches(header: string, base: string, route: McpRoute): boolean {
  return new RegExp(`^${escapeRegExp(expectedChallenge(base, route))}(, scope="[^"]*")?$`).test(
    header.trim(),
  );
}

export function challengeCheck(route: McpRoute, expectedBase: string, observation: Observation): Check {
  const def = challengeDef(route);
  const where = `POST ${observation.url}`;
  if (!observation.ok) return fail(def, `${where}: ${describeAnswer(observation)}`, fixes.startGateway);
  const header = observation.wwwAuthenticate;
  if (observation.status !== 401 || header === null)
    return fail(
      def,
      `${where}: ${describeAnswer(observation)} ${header === null ? "without" : "with"} a Bearer challenge` +
        (observation.status === 200
          ? ": an MCP server answered without asking for a token, this is not the gateway"
          : ": this address is not the gateway's MCP endpoint"),
      fixes.pointAtGateway,
    );
  if (challengeMatches(header, expectedBase, route))
    return pass(def, `${where}: 401, WWW-Authenticate: ${header}`);
  const named = /resource_metadata="([^"]*)"/.exec(header)?.[1];
  if (named !== undefined && named !== metadataUrlOf(expectedBase, route))
    return fail(
      def,
      `${where}: 401, the challenge names resource_metadata="${named}", expected "${metadataUrlOf(expectedBase, route)}": ` +
        "the gateway's base_url (PUBLIC_URL) is not the address this command uses",
      fixes.publicUrl,
    );
  return fail(
    def,
    `${where}: 401, WWW-Authenticate: ${header} (expected ${expectedChallenge(expectedBase, route)}, optionally followed by , scope="...")`,
    fixes.pointAtGateway,
  );
}

export const metadataDef = (route: McpRoute): CheckDefinition => ({
  id: `resource-metadata-${suffix(route)}`,
  title: `Protected resource metadata of ${route.path} names the MCP URL and the issuer`,
});

export function resourceMetadataCheck(
  route: McpRoute,
  expectedBase: string,
  issuer: string,
  observation: Observation,
): Check {
  const def = metadataDef(route);
  const where = `GET ${observation.url}`;
  if (!observation.ok) return fail(def, `${where}: ${describeAnswer(observation)}`, fixes.startGateway);
  const body = jsonObject(observation);
  if (observation.status !== 200 || !body)
    return fail(
      def,
      `${where}: ${describeAnswer(observation)}, no protected resource metadata: this address is not the gateway`,
      fixes.pointAtGateway,
    );
  const expected = `${expectedBase}${route.path}`;
  const problems: string[] = [];
  if (body.resource !== expected) {
    const named = typeof body.resource === "string" ? body.resource : JSON.stringify(body.resource);
    const origin = typeof body.resource === "string" ? URL.parse(body.resource)?.origin : undefined;
    problems.push(
      origin && origin !== expectedBase
        ? `resource is ${named}, expected ${expected}: the gateway's base_url is ${origin}, this command's is ${expectedBase} (PUBLIC_URL, --local or --port differs)`
        : `resource is ${named}, expected ${expected}`,
    );
  }
  const servers = body.authorization_servers;
  if (!Array.isArray(servers) || servers.length !== 1 || servers[0] !== issuer)
    problems.push(`authorization_servers is ${JSON.stringify(servers)}, expected ["${issuer}"]`);
  if (problems.length > 0) return fail(def, `${where}: ${problems.join("; ")}`, fixes.publicUrl);
  return pass(def, `${where}: resource ${expected}, authorization_servers ["${issuer}"]`);
}

/** The discovery URLs an AI client may probe for one MCP route (all redirect to the issuer's document). */
export function discoveryProbePaths(route: McpRoute): string[] {
  return [
    `/.well-known/oauth-authorization-server${route.path}`,
    `/.well-known/openid-configuration${route.path}`,
    `${route.path}/.well-known/openid-configuration`,
  ];
}

export const discoveryDef = (route: McpRoute): CheckDefinition => ({
  id: `discovery-${suffix(route)}`,
  title: `Discovery probes for ${route.path} reach the identity provider's JSON, never HTML`,
});

type ProbeProblem = { text: string; cause: "address" | "idp" | "issuer" };

function discoveryProblem(path: string, observation: Observation, issuer: string): ProbeProblem | undefined {
  if (!observation.ok) return { text: `${path}: ${describeAnswer(observation)}`, cause: "address" };
  const redirected = observation.redirects.length > 0;
  const cause = redirected ? "idp" : "address";
  if (looksLikeHtml(observation))
    return {
      text: `${path}: ${describeAnswer(observation)}, HTML where an AI client expects JSON (its JSON parse error on '<')`,
      cause,
    };
  const body = jsonObject(observation);
  if (observation.status !== 200 || !body)
    return {
      text: `${path}: ${describeAnswer(observation)}${redirected ? "" : ", not redirected to the identity provider's discovery document"}`,
      cause,
    };
  if (body.issuer !== issuer)
    return {
      text: `${path}: issuer ${JSON.stringify(body.issuer)}, expected ${issuer}`,
      cause: "issuer",
    };
  return undefined;
}

export function discoveryCheck(
  route: McpRoute,
  issuer: string,
  probes: readonly { path: string; observation: Observation }[],
): Check {
  const def = discoveryDef(route);
  const problems = probes
    .map((p) => discoveryProblem(p.path, p.observation, issuer))
    .filter((p): p is ProbeProblem => p !== undefined);
  if (problems.length === 0) {
    const targets = [
      ...new Set(probes.map((p) => (p.observation as Answered).finalUrl.replace(/^.*\/\.well-known\//, ""))),
    ];
    return pass(
      def,
      `${probes.map((p) => p.path).join(", ")}: JSON discovery documents (${targets.join(", ")}) of issuer ${issuer}`,
    );
  }
  const causes = new Set(problems.map((p) => p.cause));
  const fix = causes.has("address")
    ? fixes.pointAtGateway
    : causes.has("idp")
      ? "Make sure the identity provider runs and the gateway serves it under /auth (with IDP=keycloak: KEYCLOAK_URL with its /auth path, KEYCLOAK_REALM), then restart the gateway."
      : fixes.publicUrl;
  return fail(def, problems.map((p) => p.text).join("; "), fix);
}

/** Paths that must answer a JSON 404: nothing is published there, and HTML would break clients. */
export const NOT_FOUND_PROBES = [
  { method: "GET", path: "/.well-known/oauth-authorization-server/imaging-doctor-unknown" },
  { method: "GET", path: "/.well-known/oauth-protected-resource" },
  { method: "POST", path: "/register" },
] as const;

export const JSON_NOT_FOUND: CheckDefinition = {
  id: "json-not-found",
  title: "Other well-known paths and /register answer a JSON 404, never HTML",
};

export function jsonNotFoundCheck(
  probes: readonly { method: string; path: string; observation: Observation }[],
): Check {
  const failures: string[] = [];
  const oddities: string[] = [];
  for (const { method, path, observation } of probes) {
    const where = `${method} ${path}`;
    if (!observation.ok) failures.push(`${where}: ${describeAnswer(observation)}`);
    else if (looksLikeHtml(observation))
      failures.push(
        `${where}: ${describeAnswer(observation)}, HTML (an AI client fails with a JSON parse error on '<')`,
      );
    else if (observation.json === undefined)
      failures.push(`${where}: ${describeAnswer(observation)}, not JSON`);
    else if (observation.status !== 404)
      oddities.push(`${where}: ${describeAnswer(observation)}, expected 404`);
  }
  if (failures.length > 0)
    return fail(
      JSON_NOT_FOUND,
      [...failures, ...oddities].join("; "),
      "Point AI clients at the gateway, and let any proxy in front of it pass /.well-known/* and /register through unchanged.",
    );
  if (oddities.length > 0)
    return warn(
      JSON_NOT_FOUND,
      oddities.join("; "),
      "Let any proxy in front of the gateway pass /.well-known/* and /register through unchanged.",
    );
  return pass(
    JSON_NOT_FOUND,
    `${probes.map((p) => `${p.method} ${p.path}`).join(", ")}: 404 with a JSON body`,
  );
}
