import { readFileSync } from "node:fs";
import type { LookupFunction, Socket } from "node:net";
import * as tls from "node:tls";
import { Agent, buildConnector, request } from "undici";
import { BoundedCache } from "../../auth/bounded-cache.ts";
import { RuleError } from "../../domain/field-rule-error.ts";
import { isSpecialAddress } from "./address.ts";
import { type CacheBounds, cacheLifetimeSeconds, DEFAULT_CACHE_BOUNDS } from "./cache-lifetime.ts";
import type { CimdRule } from "./rules.ts";

/** A document could not be fetched; `rule` says which fetch rule refused it. */
export class CimdFetchError extends RuleError<CimdRule> {
  override name = "CimdFetchError";
}

export interface FetchDocumentOptions {
  /**
   * Connect even when the host resolves to a private, loopback or other special-use address: only when
   * an administrator listed the client_id's host itself in the matching policy's trusted domains.
   */
  allowSpecialAddresses: boolean;
}

/** Fetches client metadata documents (parsed JSON, not yet validated), with a cache keyed by URL. */
export interface CimdDocumentFetcher {
  fetchDocument(url: string, options: FetchDocumentOptions): Promise<unknown>;
}

export type CaOption = string | Buffer | ReadonlyArray<string | Buffer>;

export interface CimdFetcherOptions {
  /** Extra CA certificates (PEM) trusted in addition to the default ones (internal PKI, tests). */
  ca?: CaOption | undefined;
  /** A PEM file of extra CA certificates, read once when the fetcher is created. */
  extraCaFile?: string | undefined;
  /** Whole-fetch time limit (connect, TLS, headers, body); default 3000 ms. */
  timeoutMs?: number;
  /** Largest document accepted; default 5000 bytes. */
  maxBytes?: number;
  /** Cache lifetime bounds in seconds; default 300..86400. */
  cacheBounds?: CacheBounds;
  /** Documents kept at most; default 1000 (the oldest is dropped first). */
  maxEntries?: number;
  /** Clock in milliseconds, for tests. */
  now?: () => number;
  /** Name resolution, e.g. split-horizon DNS or tests; the connected address is checked whatever it returns. */
  lookup?: LookupFunction;
}

export interface CimdFetcher extends CimdDocumentFetcher {
  /** Forgets every cached document. */
  clear(): void;
  /** Closes the connections. */
  close(): Promise<void>;
}

/** The CAs of the fetcher: Node's defaults (NODE_EXTRA_CA_CERTS included) plus the extra ones. */
function trustedCas(options: CimdFetcherOptions): string[] | undefined {
  const extra: string[] = [];
  if (options.extraCaFile) extra.push(readFileSync(options.extraCaFile, "utf8"));
  if (options.ca !== undefined) {
    const list = typeof options.ca === "string" || Buffer.isBuffer(options.ca) ? [options.ca] : options.ca;
    for (const ca of list) extra.push(ca.toString());
  }
  if (extra.length === 0) return undefined;
  const defaults =
    typeof tls.getCACertificates === "function"
      ? tls.getCACertificates("default")
      : [...tls.rootCertificates];
  return [...defaults, ...extra];
}

const TLS_ERROR = /CERT|SELF_SIGNED|UNABLE_TO_|ERR_SSL|ERR_TLS/;

function describeNetworkError(error: unknown, url: URL): CimdFetchError {
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    if (current instanceof CimdFetchError) return current;
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && TLS_ERROR.test(code))
      return new CimdFetchError(
        "fetch-tls",
        `TLS certificate of ${url.host} not trusted (${code}): ${current.message}; for an internal CA, configure its bundle (extraCaFile)`,
      );
    current = (current as { cause?: unknown }).cause;
  }
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown })?.code;
  return new CimdFetchError(
    "fetch-network",
    `${url.host} could not be reached: ${message}${typeof code === "string" ? ` (${code})` : ""}`,
  );
}

type Connector = buildConnector.connector;

/** Refuses, after connecting, a socket whose peer is a special-use address (so DNS rebinding fails too). */
function guardedConnector(base: Connector): Connector {
  return (options, callback) => {
    base(options, (...args) => {
      const [error, socket] = args;
      if (error || !socket) {
        callback(error ?? new Error("connection failed"), null);
        return;
      }
      const address = (socket as Socket).remoteAddress;
      if (address === undefined || isSpecialAddress(address)) {
        socket.destroy();
        callback(
          new CimdFetchError(
            "fetch-special-address",
            `${options.hostname} is at ${address ?? "an unknown address"}, a private, loopback or other special-use ` +
              "address: documents are not fetched from there unless the client policy lists that host itself",
          ),
          null,
        );
        return;
      }
      callback(null, socket);
    });
  };
}

/**
 * The CIMD draft makes any content type other than JSON a fetch error: application/json, or a
 * structured +json type (RFC 6839), parameters such as charset allowed.
 */
export function isJsonMediaType(contentType: string | undefined): boolean {
  const essence = contentType?.split(";")[0]?.trim().toLowerCase() ?? "";
  return essence === "application/json" || /^application\/[a-z0-9!#$&^_.+-]+\+json$/.test(essence);
}

/** A fetched body as JSON (not yet validated: checkDocument does that); CimdFetchError when it is not JSON. */
export function parseDocumentBody(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString("utf8"));
  } catch {
    throw new CimdFetchError("document-json", "the document is not valid JSON");
  }
}

/** Stops reading a body: the connection is closed, its abort error swallowed. */
function discard(body: { on(event: "error", listener: () => void): unknown; destroy(): unknown }): void {
  body.on("error", () => {});
  body.destroy();
}

interface CachedDocument {
  document: unknown;
  /** Fetched under the special-address exemption: a strict fetch must not reuse it. */
  viaExemption: boolean;
}

/** One per process (or per CA setting): it holds the document cache and the connections. */
export function createCimdFetcher(options: CimdFetcherOptions = {}): CimdFetcher {
  const timeoutMs = options.timeoutMs ?? 3000;
  const maxBytes = options.maxBytes ?? 5000;
  const bounds = options.cacheBounds ?? DEFAULT_CACHE_BOUNDS;
  const now = options.now ?? Date.now;
  const ca = trustedCas(options);
  const newCache = () => new BoundedCache<CachedDocument>(options.maxEntries ?? 1000, now);
  let cache = newCache();
  const inFlight = new Map<string, Promise<unknown>>();

  const base = buildConnector({
    allowH2: false,
    timeout: timeoutMs,
    rejectUnauthorized: true,
    ...(ca ? { ca } : {}),
    ...(options.lookup ? { lookup: options.lookup } : {}),
  });
  const agentOptions = { keepAliveTimeout: 4000, keepAliveMaxTimeout: 10_000, connections: 8 };
  const strictAgent = new Agent({ ...agentOptions, connect: guardedConnector(base) });
  const exemptAgent = new Agent({ ...agentOptions, connect: base });

  async function fetchOnce(url: URL, allowSpecial: boolean): Promise<unknown> {
    const signal = AbortSignal.timeout(timeoutMs);
    let document: unknown;
    let headers: Record<string, string | string[] | undefined>;
    try {
      const response = await request(url, {
        dispatcher: allowSpecial ? exemptAgent : strictAgent,
        method: "GET",
        headers: { accept: "application/json" },
        signal,
      });
      headers = response.headers;
      const status = response.statusCode;
      if (status >= 300 && status < 400) {
        await response.body.dump();
        const location = typeof headers.location === "string" ? ` to ${headers.location}` : "";
        throw new CimdFetchError(
          "fetch-redirect",
          `the client_id URL answered ${status}, a redirect${location}: redirects are not followed`,
        );
      }
      if (status !== 200) {
        await response.body.dump();
        throw new CimdFetchError("fetch-status", `the client_id URL answered HTTP ${status}`);
      }
      const type = headers["content-type"];
      if (!isJsonMediaType(typeof type === "string" ? type : undefined)) {
        discard(response.body);
        throw new CimdFetchError(
          "fetch-content-type",
          `the document is served as ${typeof type === "string" ? type.slice(0, 100) : "no content type"}: a client metadata document must be served as application/json`,
        );
      }
      const declared = Number(headers["content-length"]);
      if (Number.isFinite(declared) && declared > maxBytes) {
        discard(response.body);
        throw new CimdFetchError(
          "fetch-size",
          `the document is ${declared} bytes, more than ${maxBytes} bytes`,
        );
      }
      const chunks: Buffer[] = [];
      let size = 0;
      response.body.on("error", () => {});
      for await (const chunk of response.body) {
        size += (chunk as Buffer).length;
        if (size > maxBytes) {
          discard(response.body);
          throw new CimdFetchError("fetch-size", `the document is larger than ${maxBytes} bytes`);
        }
        chunks.push(chunk as Buffer);
      }
      document = parseDocumentBody(Buffer.concat(chunks));
    } catch (error) {
      if (error instanceof CimdFetchError) throw error;
      if (signal.aborted)
        throw new CimdFetchError(
          "fetch-timeout",
          `no complete answer from ${url.host} within ${timeoutMs} ms`,
        );
      throw describeNetworkError(error, url);
    }
    const lifetime = cacheLifetimeSeconds(headers, now(), bounds);
    cache.set(url.href, { document, viaExemption: allowSpecial }, now() + lifetime * 1000);
    return document;
  }

  return {
    async fetchDocument(target: string, fetchOptions: FetchDocumentOptions): Promise<unknown> {
      const url = new URL(target);
      const cached = cache.get(url.href);
      if (cached && (!cached.viaExemption || fetchOptions.allowSpecialAddresses)) return cached.document;
      const key = `${fetchOptions.allowSpecialAddresses ? "exempt" : "strict"} ${url.href}`;
      let pending = inFlight.get(key);
      if (!pending) {
        pending = fetchOnce(url, fetchOptions.allowSpecialAddresses).finally(() => inFlight.delete(key));
        inFlight.set(key, pending);
      }
      return pending;
    },
    clear: () => {
      cache = newCache();
    },
    async close() {
      await Promise.all([strictAgent.close(), exemptAgent.close()]);
    },
  };
}
