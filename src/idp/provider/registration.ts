import type { Kysely } from "kysely";
import type { KoaContextWithOIDC } from "oidc-provider";
import { markRegisteredClientUsed, recordRegisteredClient } from "../../store/registered-clients.ts";
import type { Database } from "../../store/schema.ts";
import { checkRegistration, REGISTRATION_LIMITS, type RegistrationPolicy } from "../registration/policy.ts";

/** The provider's registration route (oidc-provider's default). */
export const REGISTRATION_PATH = "/reg";

export interface RegistrationOptions {
  policy: RegistrationPolicy;
  /** Registrations allowed per source address per window (REGISTRATION_LIMITS by default). */
  perAddress?: number;
  windowMs?: number;
  now?: () => number;
}

/** Fixed-window registration counter per source address, bounded in size. */
export class RegistrationRateLimit {
  readonly #counts = new Map<string, { windowStart: number; count: number }>();
  readonly limit: number;
  readonly windowMs: number;
  readonly now: () => number;
  constructor(limit: number, windowMs: number, now: () => number) {
    this.limit = limit;
    this.windowMs = windowMs;
    this.now = now;
  }

  /** Counts one registration; the seconds to wait when over the limit. */
  take(address: string): number | undefined {
    const now = this.now();
    const entry = this.#counts.get(address);
    if (!entry || now - entry.windowStart >= this.windowMs) {
      if (this.#counts.size >= 10_000) this.#counts.clear();
      this.#counts.set(address, { windowStart: now, count: 1 });
      return undefined;
    }
    if (entry.count >= this.limit) return Math.ceil((entry.windowStart + this.windowMs - now) / 1000);
    entry.count += 1;
    return undefined;
  }
}

async function readJson(
  ctx: KoaContextWithOIDC,
): Promise<{ ok: true; body: unknown } | { ok: false; rule: "metadata-oversized" | "metadata-malformed" }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    // Read to the end (the client waits for its answer), keep nothing past the limit.
    if (size <= REGISTRATION_LIMITS.maxMetadataBytes * 2) chunks.push(chunk as Buffer);
  }
  if (size > REGISTRATION_LIMITS.maxMetadataBytes * 2) return { ok: false, rule: "metadata-oversized" };
  try {
    return { ok: true, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) };
  } catch {
    return { ok: false, rule: "metadata-malformed" };
  }
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
 * limit per source address, then the policy; an accepted request reaches the provider rewritten to
 * what is registered, and the registration is recorded for `imaging clients` and expiry.
 */
export function registrationPolicy(db: Kysely<Database>, options: RegistrationOptions) {
  const limit = new RegistrationRateLimit(
    options.perAddress ?? REGISTRATION_LIMITS.perAddress,
    options.windowMs ?? REGISTRATION_LIMITS.windowMs,
    options.now ?? Date.now,
  );
  return async (ctx: KoaContextWithOIDC, next: () => Promise<void>) => {
    if (ctx.path !== REGISTRATION_PATH || ctx.method !== "POST") return next();
    if (!String(ctx.get("content-type")).toLowerCase().startsWith("application/json")) {
      return answer(ctx, 400, {
        error: "invalid_client_metadata",
        error_description:
          "the registration request must be JSON (application/json) [rule metadata-malformed]",
      });
    }
    const address = ctx.ip;
    const wait = limit.take(address);
    if (wait !== undefined) {
      ctx.set("retry-after", String(wait));
      return answer(ctx, 429, {
        error: "invalid_request",
        error_description: `too many registrations from ${address}: at most ${options.perAddress ?? REGISTRATION_LIMITS.perAddress} per hour, retry in ${wait} s [rule registration-rate-limit]`,
      });
    }
    const read = await readJson(ctx);
    if (!read.ok) {
      return answer(ctx, 400, {
        error: "invalid_client_metadata",
        error_description:
          read.rule === "metadata-oversized"
            ? `client metadata must be at most ${REGISTRATION_LIMITS.maxMetadataBytes} bytes [rule metadata-oversized]`
            : "the request body is not JSON [rule metadata-malformed]",
      });
    }
    const verdict = checkRegistration(read.body, options.policy);
    if (!verdict.ok)
      return answer(ctx, 400, { error: verdict.error, error_description: verdict.description });
    // The stream is consumed: the provider reads the rewritten metadata from here.
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
