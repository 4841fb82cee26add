import { type FastifyReply, type FastifyRequest, type FastifyServerOptions, LogController } from "fastify";
import PinoPretty from "pino-pretty";

/**
 * What the service's logs may hold: never a credential. Request URLs are logged with the values of
 * credential-bearing query parameters replaced (a client that sends `?access_token=` is refused, but
 * its URL is still logged), and credential headers are censored wherever a log object carries them.
 */
export const REDACTED = "[REDACTED]";

/** Query parameters whose value is a credential (OAuth 2.0, RFC 8693, OIDC, API keys), lower case. */
const CREDENTIAL_PARAMETERS: ReadonlySet<string> = new Set([
  "access_token",
  "refresh_token",
  "id_token",
  "code",
  "code_verifier",
  "client_secret",
  "client_assertion",
  "assertion",
  "subject_token",
  "actor_token",
  "token",
  "password",
  "api_key",
  "apikey",
  "x-api-key",
]);

/** Credential headers, censored in any logged object that carries headers. */
const CREDENTIAL_HEADERS = ["authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key"];

const decodeName = (name: string) => {
  try {
    return decodeURIComponent(name.replace(/\+/g, " ")).trim().toLowerCase();
  } catch {
    return name.toLowerCase();
  }
};

/** A request target with the values of credential parameters replaced; the rest kept as sent. */
export function redactUrl(url: string): string {
  const query = url.indexOf("?");
  if (query < 0) return url;
  const redacted = url
    .slice(query + 1)
    .split("&")
    .map((pair) => {
      const eq = pair.indexOf("=");
      const name = eq < 0 ? pair : pair.slice(0, eq);
      return CREDENTIAL_PARAMETERS.has(decodeName(name)) ? `${name}=${REDACTED}` : pair;
    })
    .join("&");
  return `${url.slice(0, query)}?${redacted}`;
}

/** Fastify's request serializer (fastify/lib/logger-pino.js) with the URL redacted. */
function serializeRequest(request: FastifyRequest) {
  return {
    method: request.method,
    url: redactUrl(request.url ?? ""),
    version: String(request.headers?.["accept-version"] ?? "") || undefined,
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

/** `auto`: human-readable lines when stdout is a terminal, JSON lines otherwise (log collectors). */
type LogFormat = "auto" | "json" | "pretty";

/** Whether the log lines are for a person (pretty) rather than a log collector (JSON). */
export function isPrettyLog(format: LogFormat = "json", isTty = Boolean(process.stdout.isTTY)): boolean {
  return format === "pretty" || (format === "auto" && isTty);
}

/** Health checks: load balancers' and orchestrators' probes, and the gateway's own every 10 s. */
const HEALTH_PATHS = new Set(["/rest/health", "/mcp/healthcheck", "/readyz"]);
const isHealthCheck = (request: FastifyRequest) =>
  request.method === "GET" && HEALTH_PATHS.has((request.url ?? "").split("?")[0] ?? "");

/**
 * A listener's request lines: each request's at info, except, in a log read by a person, successful
 * health checks at debug (the probes every 10 s scrolled the one-time admin password out of sight).
 * `skip`: requests that get no request lines at all (the REST API's in-process calls).
 */
export function accessLogController(options: {
  pretty: boolean;
  skip?: (request: FastifyRequest) => boolean;
}): LogController {
  const quiet = (request: FastifyRequest) => options.pretty && isHealthCheck(request);
  class AccessLog extends LogController {
    override incomingRequest(
      request: FastifyRequest,
      reply: FastifyReply,
      metadata?: Record<string, unknown>,
    ): void {
      if (this.isLogDisabled(request)) return;
      if (quiet(request)) request.log.debug({ req: request }, "incoming request");
      else super.incomingRequest(request, reply, metadata);
    }
    override requestCompleted(
      error: Error | null | undefined,
      request: FastifyRequest,
      reply: FastifyReply,
      metadata?: Record<string, unknown>,
    ): void {
      if (!error && reply.statusCode < 400 && !this.isLogDisabled(request) && quiet(request)) {
        reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, "request completed");
      } else super.requestCompleted(error, request, reply, metadata);
    }
  }
  return new AccessLog(options.skip ? { disableRequestLogging: options.skip } : {});
}

/**
 * Logger options of every Fastify listener (gateway, REST API): level, redacted URL, censored headers,
 * and the format. Pretty lines are formatted in this thread (pino-pretty as a stream, no worker).
 */
export function loggerOptions(
  level: string,
  format: LogFormat = "json",
  isTty = Boolean(process.stdout.isTTY),
): Exclude<FastifyServerOptions["logger"], boolean | undefined> {
  const pretty = isPrettyLog(format, isTty);
  const headerPaths = CREDENTIAL_HEADERS.flatMap((name) => [
    `req.headers["${name}"]`,
    `res.headers["${name}"]`,
    `headers["${name}"]`,
    `*.headers["${name}"]`,
  ]);
  return {
    level,
    serializers: {
      req: serializeRequest,
      // @fastify/reply-from logs the upstream target as `source` ("fetching from remote server").
      source: (source: unknown) => (typeof source === "string" ? redactUrl(source) : source),
    },
    redact: { paths: headerPaths, censor: REDACTED },
    ...(pretty
      ? {
          stream: PinoPretty({
            colorize: isTty,
            translateTime: "SYS:HH:MM:ss.l",
            ignore: "pid,hostname",
            destination: 1,
            sync: true,
          }),
        }
      : {}),
  };
}

/** Free text for the log (messages of libraries): URLs in it redacted as request URLs are. */
export function redactText(text: string): string {
  return text.replace(/[^\s"'<>]*\?[^\s"'<>]*/g, (candidate) => redactUrl(candidate));
}
