import { readFileSync } from "node:fs";
import type { FastifyInstance } from "fastify";
import { createJwtVerifier } from "./auth/jwt-verifier.ts";
import { ConfigError } from "./config/load-config.ts";
import type { RuntimeConfig } from "./config/runtime-config.ts";
import { buildGateway } from "./gateway/app.ts";
import { buildRestApp } from "./rest/app.ts";
import { openStore, type StoreHandle } from "./store/database.ts";
import { PLATFORM_AUDIENCE, VERSION } from "./version.ts";

export interface RunningService {
  config: RuntimeConfig;
  store: StoreHandle;
  /** Where the gateway actually listens (useful with port 0). */
  gatewayUrl: string;
  restUrl: string;
  stop(): Promise<void>;
}

/** Composition root: store, REST API on its internal listener, gateway on the public port. */
export async function startService(
  config: RuntimeConfig,
  hooks: { beforeListen?: (store: StoreHandle) => Promise<void> } = {},
): Promise<RunningService> {
  const store = await openStore({ databaseUrl: config.databaseUrl, sqliteFile: config.sqliteFile });
  const started: FastifyInstance[] = [];
  try {
    await hooks.beforeListen?.(store);
    const logger = config.logLevel === "silent" ? false : { level: config.logLevel };
    const verifier = createJwtVerifier({
      issuer: config.issuer,
      audience: PLATFORM_AUDIENCE,
      jwksUrl: config.jwksUrl,
    });
    const rest = await buildRestApp({ db: store.db, verifier, version: VERSION, logger });
    await listenOrExplain(rest, config.internalBindAddress, config.restPort, "REST_PORT");
    started.push(rest);
    const restUrl = listenUrl(rest, "http");

    const gateway = await buildGateway({
      restUpstreamUrl: config.restUpstreamUrl ?? restUrl,
      version: VERSION,
      https: config.https
        ? { cert: readFileSync(config.tlsCertFile as string), key: readFileSync(config.tlsKeyFile as string) }
        : undefined,
      logger,
    });
    await listenOrExplain(gateway, config.bindAddress, config.port, "PORT (or --port)");
    started.push(gateway);
    const gatewayUrl = listenUrl(gateway, config.https ? "https" : "http");

    let stopping: Promise<void> | undefined;
    const stop = () => {
      // In-flight requests finish: the gateway stops accepting first, then the REST API, then the store.
      stopping ??= (async () => {
        for (const app of [...started].reverse()) await app.close();
        await store.close();
      })();
      return stopping;
    };
    return { config, store, gatewayUrl, restUrl, stop };
  } catch (error) {
    for (const app of started.reverse()) await app.close();
    await store.close();
    throw error;
  }
}

/** Turns the usual listen failures into a sentence naming the setting to change. */
async function listenOrExplain(
  app: FastifyInstance,
  host: string,
  port: number,
  setting: string,
): Promise<void> {
  try {
    await app.listen({ host, port });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE") {
      throw new ConfigError(
        `Port ${port} on ${host} is already in use: stop the other process or change ${setting}`,
      );
    }
    if (code === "EACCES") {
      throw new ConfigError(
        `Not allowed to listen on port ${port}: use a port above 1023 or grant the right; see ${setting}`,
      );
    }
    if (code === "EADDRNOTAVAIL") {
      throw new ConfigError(`Address ${host} is not an address of this machine`);
    }
    throw error;
  }
}

function listenUrl(app: FastifyInstance, scheme: string): string {
  const address = app.server.address();
  if (!address || typeof address === "string") throw new Error("server is not listening on a TCP port");
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const reachable = host === "0.0.0.0" ? "127.0.0.1" : host === "[::]" ? "[::1]" : host;
  return `${scheme}://${reachable}:${address.port}`;
}
