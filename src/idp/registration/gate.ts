import { type RefusalReporter, ruleOf } from "../refusal-log.ts";
import { checkRegistration, REGISTRATION_LIMITS, type RegistrationPolicy } from "./policy.ts";
import { memoryRegistrationCounts, type RegistrationCounts, rateLimitKey } from "./rate-limit.ts";

type GateAnswer =
  | { ok: true; body: Record<string, unknown>; metadata: Record<string, unknown> }
  | {
      ok: false;
      status: number;
      headers: Record<string, string>;
      body: { error: string; error_description: string };
    };

export interface RegistrationGateOptions {
  policy: RegistrationPolicy;
  perAddress?: number;
  windowMs?: number;
  now?: () => number;
  /** Where the counters live: the store's, shared by every replica (service.ts), else this process's. */
  counts?: RegistrationCounts;
  /** Told of each refusal (the service logs them, rate-limited). */
  onRefused?: RefusalReporter;
}

/**
 * The registration policy in front of an identity provider's registration endpoint, for a request
 * already read: content type, rate limit per sender (rate-limit.ts), then the policy (policy.ts). On
 * success, `body` is the request without what is not registered and with `token_endpoint_auth_method:
 * none` made explicit (RFC 7591's default is client_secret_basic), `metadata` what the embedded
 * provider registers.
 */
export function createRegistrationGate(options: RegistrationGateOptions) {
  const perAddress = options.perAddress ?? REGISTRATION_LIMITS.perAddress;
  const windowMs = options.windowMs ?? REGISTRATION_LIMITS.windowMs;
  const now = options.now ?? Date.now;
  const counts = options.counts ?? memoryRegistrationCounts();

  return async (
    address: string,
    contentType: string | undefined,
    raw: Buffer | undefined,
  ): Promise<GateAnswer> => {
    const refuse = (
      status: number,
      error: string,
      description: string,
      headers: Record<string, string> = {},
    ) => {
      if (options.onRefused) {
        const named = clientNameOf(raw);
        options.onRefused({
          kind: "registration",
          client: named ? `"${named}" from ${address}` : `from ${address}`,
          ...ruleOf(description),
        });
      }
      return { ok: false, status, headers, body: { error, error_description: description } } as const;
    };
    if (!(contentType ?? "").toLowerCase().startsWith("application/json")) {
      return refuse(
        400,
        "invalid_client_metadata",
        "the registration request must be JSON (application/json) [rule metadata-malformed]",
      );
    }
    const sender = rateLimitKey(address);
    const wait = await counts.take(sender, now(), windowMs, perAddress);
    if (wait !== undefined) {
      return refuse(
        429,
        "invalid_request",
        `too many registrations from ${sender}: at most ${perAddress} per hour, retry in ${wait} s [rule registration-rate-limit]`,
        { "retry-after": String(wait) },
      );
    }
    if (raw && raw.length > REGISTRATION_LIMITS.maxMetadataBytes * 2) {
      return refuse(
        400,
        "invalid_client_metadata",
        `client metadata must be at most ${REGISTRATION_LIMITS.maxMetadataBytes} bytes [rule metadata-oversized]`,
      );
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse((raw ?? Buffer.alloc(0)).toString("utf8"));
    } catch {
      return refuse(400, "invalid_client_metadata", "the request body is not JSON [rule metadata-malformed]");
    }
    const verdict = checkRegistration(parsed, options.policy);
    if (!verdict.ok) return refuse(400, verdict.error, verdict.description);
    return {
      ok: true,
      body: verdict.request,
      metadata: verdict.metadata,
    };
  };
}

export type RegistrationGate = ReturnType<typeof createRegistrationGate>;

/** The client_name of a registration request, for the log (at most 80 printable characters). */
function clientNameOf(raw: Buffer | undefined): string | undefined {
  if (!raw || raw.length > REGISTRATION_LIMITS.maxMetadataBytes * 2) return undefined;
  try {
    const name = (JSON.parse(raw.toString("utf8")) as { client_name?: unknown }).client_name;
    return typeof name === "string" ? name.replace(/[^\x20-\x7e]/g, "?").slice(0, 80) : undefined;
  } catch {
    return undefined;
  }
}
