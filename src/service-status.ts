import { sql } from "kysely";
import type { IssuerMetadata } from "./auth/issuer-metadata.ts";
import type { RuntimeConfig } from "./config/runtime-config.ts";
import { type DoctorSources, runDoctor } from "./doctor/run.ts";
import { storeCimdRepository } from "./idp/cimd/repository.ts";
import { connectKeycloakAdmin } from "./idp/keycloak/admin.ts";
import { keycloakCimdRepository } from "./idp/keycloak/cimd-repository.ts";
import { readSecretFile } from "./idp/secrets.ts";
import type { DoctorAnswer, PartStatus, PlatformStatus, StatusSources } from "./rest/routes/status.ts";
import type { StoreHandle } from "./store/database.ts";

/** Where the parts run, known only once they listen (hence getters). */
export interface StatusTargets {
  gatewayUrl: () => string;
  mcpUrls: () => { analysis: string; gatekeeper: string };
  /** The exchange client's secret as the gateway uses it (from Keycloak, configured or generated). */
  exchangeSecret: () => string | undefined;
}

const PROBE_TIMEOUT_MS = 3_000;
/** How long a doctor run's result is reused (see doctor below). */
const DOCTOR_REUSE_MS = 10_000;

async function probeHttp(
  id: string,
  name: string,
  url: string,
  fetcher: typeof fetch = fetch,
): Promise<PartStatus> {
  const started = Date.now();
  try {
    const response = await fetcher(url, {
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
      redirect: "manual",
    });
    await response.body?.cancel();
    const ms = Date.now() - started;
    return response.ok
      ? { id, name, state: "UP", detail: `${url} answered ${response.status} in ${ms} ms` }
      : { id, name, state: "DOWN", detail: `${url} answered ${response.status}` };
  } catch (error) {
    const reason =
      (error as Error).name === "TimeoutError"
        ? `no answer within ${PROBE_TIMEOUT_MS} ms`
        : (error as Error).message;
    return { id, name, state: "DOWN", detail: `${url}: ${reason}` };
  }
}

/**
 * What the Status page and `imaging doctor` from the console need: each part probed now (its health
 * route, the identity provider's discovery document, a query on the store), and the doctor checks run
 * against the gateway this process knows.
 */
export function statusSources(
  config: RuntimeConfig,
  store: StoreHandle,
  metadata: IssuerMetadata,
  version: string,
  targets: StatusTargets,
): StatusSources {
  const status = async (): Promise<PlatformStatus> => {
    const gateway = targets.gatewayUrl() || config.baseUrl;
    const mcp = targets.mcpUrls();
    const storeProbe = async (): Promise<PartStatus> => {
      const started = Date.now();
      try {
        await sql`select 1`.execute(store.db);
        return {
          id: "store",
          name: "Store",
          state: "UP",
          detail: `${store.kind === "postgres" ? "PostgreSQL" : "SQLite"} answered a query in ${Date.now() - started} ms`,
        };
      } catch (error) {
        return {
          id: "store",
          name: "Store",
          state: "DOWN",
          detail: `the store did not answer: ${(error as Error).message}`,
        };
      }
    };
    const discovery = `${config.issuer}/.well-known/openid-configuration`;
    const parts = await Promise.all([
      probeHttp("gateway", "Gateway", `${gateway}/mcp/healthcheck`),
      probeHttp("rest", "REST API", `${gateway}/rest/health`),
      probeHttp("mcp-analysis", "Analysis MCP server", `${mcp.analysis}/healthz`),
      probeHttp("mcp-gatekeeper", "Gatekeeper MCP server", `${mcp.gatekeeper}/healthz`),
      probeHttp(
        "identity-provider",
        config.idp === "keycloak" ? "Identity provider (Keycloak)" : "Identity provider (embedded)",
        discovery,
        metadata.fetch,
      ),
      storeProbe(),
    ]);
    return { version, baseUrl: config.baseUrl, parts };
  };

  const sources: DoctorSources = {
    withCimd: async (work) => {
      if (config.idp === "keycloak") {
        const admin = await connectKeycloakAdmin(config);
        const repository = keycloakCimdRepository(admin, config.realm);
        return work(repository, await repository.profileNames());
      }
      const repository = storeCimdRepository(store.db);
      return work(
        repository,
        (await repository.loadConfig()).profiles.map((p) => p.name),
      );
    },
    exchangeSecret: async () => {
      const secret = targets.exchangeSecret() ?? safeRead(config);
      return secret
        ? {
            secret,
            source:
              config.idp === "keycloak" ? `Keycloak realm ${config.realm}` : "the gateway's configuration",
          }
        : { reason: `no secret is known for ${config.tokenExchangeClientId}` };
    },
  };
  const runChecks = async (): Promise<DoctorAnswer> => {
    const report = await runDoctor(
      // The checks expect the deployment's own base_url; they probe the gateway where it listens.
      {
        settings: { ...config, publicUrl: config.baseUrl },
        platform: process.platform,
        url: targets.gatewayUrl() || undefined,
      },
      sources,
    );
    return {
      baseUrl: report.baseUrl ?? null,
      issuer: report.issuer ?? null,
      idp: report.idp,
      checkedAt: new Date().toISOString(),
      checks: report.checks,
    };
  };
  // A run probes the gateway and the identity provider for seconds: requests meanwhile share it, and a
  // result stays the answer for DOCTOR_REUSE_MS (its checkedAt says when it was made), so repeated clicks
  // or scripts cannot pile runs up.
  let last: { at: number; answer: Promise<DoctorAnswer> } | undefined;
  const doctor = (): Promise<DoctorAnswer> => {
    if (last && Date.now() - last.at < DOCTOR_REUSE_MS) return last.answer;
    const answer = runChecks();
    last = { at: Date.now(), answer };
    answer.catch(() => {
      last = undefined;
    });
    return answer;
  };
  return { status, doctor };
}

function safeRead(config: RuntimeConfig): string | undefined {
  try {
    return config.tokenExchangeClientSecret ?? readSecretFile(config.dataDir, config.tokenExchangeClientId);
  } catch {
    return undefined;
  }
}
