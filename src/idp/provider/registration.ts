import type { Kysely } from "kysely";
import type { KoaContextWithOIDC } from "oidc-provider";
import { markRegisteredClientUsed, recordRegisteredClient } from "../../store/registered-clients.ts";
import { storeRegistrationCounts } from "../../store/registration-counts.ts";
import type { Database } from "../../store/schema.ts";
import { createRegistrationGate, type RegistrationGateOptions } from "../registration/gate.ts";
import { REGISTRATION_LIMITS } from "../registration/policy.ts";

/** The provider's registration route (oidc-provider's default). */
const REGISTRATION_PATH = "/reg";

export type RegistrationOptions = RegistrationGateOptions;

async function readBody(ctx: KoaContextWithOIDC): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    // Read to the end (the client waits for its answer), keeping nothing past the chunk over the limit.
    if (size <= REGISTRATION_LIMITS.maxMetadataBytes * 2) chunks.push(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return Buffer.concat(chunks);
}

const answer = (ctx: KoaContextWithOIDC, status: number, body: Record<string, string>) => {
  ctx.status = status;
  ctx.set("cache-control", "no-store");
  ctx.type = "application/json";
  ctx.body = body;
};

/**
 * The registration policy in front of oidc-provider's registration endpoint (whose own checks know
 * nothing of loopback-only or trusted hosts, and refuse the `mcp:*` scopes clients declare): rate
 * limit per sender, counted in the store (every replica counts the same registrations), then the
 * policy; an accepted request reaches the provider rewritten to what is registered, and the
 * registration is recorded for `imaging clients` and expiry.
 */
export function registrationPolicy(db: Kysely<Database>, options: RegistrationOptions) {
  const gate = createRegistrationGate({ counts: storeRegistrationCounts(db), ...options });
  return async (ctx: KoaContextWithOIDC, next: () => Promise<void>) => {
    if (ctx.path !== REGISTRATION_PATH || ctx.method !== "POST") return next();
    const address = ctx.ip;
    const contentType = ctx.get("content-type");
    const verdict = await gate(
      address,
      contentType,
      contentType.toLowerCase().startsWith("application/json") ? await readBody(ctx) : undefined,
    );
    if (!verdict.ok) {
      for (const [name, value] of Object.entries(verdict.headers)) ctx.set(name, value);
      return answer(ctx, verdict.status, verdict.body);
    }
    // The stream is consumed: the provider reads the metadata to register from here.
    (ctx.req as typeof ctx.req & { body?: unknown }).body = verdict.metadata;
    await next();
    const registered = ctx.status === 201 ? (ctx.body as Record<string, unknown>) : undefined;
    if (registered && typeof registered.client_id === "string") {
      await recordRegisteredClient(db, {
        clientId: registered.client_id,
        clientName: typeof registered.client_name === "string" ? registered.client_name : undefined,
        redirectUris: (registered.redirect_uris as string[]) ?? [],
        sourceAddress: address,
      });
    }
  };
}

/** Tokens issued to a client: a registered one is in use (it no longer expires; `last used`). */
export function markUsedOnTokens(db: Kysely<Database>, log: (message: string) => void) {
  return (...args: unknown[]) => {
    const ctx = args[0] as KoaContextWithOIDC;
    const clientId = ctx.oidc?.client?.clientId;
    if (!clientId || /^https?:\/\//i.test(clientId)) return;
    markRegisteredClientUsed(db, clientId).catch((error: unknown) =>
      log(`registered client not marked used: ${(error as Error).message}`),
    );
  };
}
