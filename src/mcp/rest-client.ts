import { parseTraceparent } from "../observability/trace-context.ts";
/**
 * A small typed client of the platform REST API for the MCP tools. Every call carries the caller's
 * bearer token unchanged; a non-2xx answer becomes a RestApiError with the HTTP status and the
 * problem+json `detail`, which the tools report as a tool error.
 */

import { STATUS_CODES } from "node:http";

// The REST resources, as src/contracts declares them (the REST API's JSON Schemas derive from the same shapes).
export type {
  ApplicationCounts,
  ApplicationDetail,
  ApplicationObject,
  ApplicationSummary,
  Changes,
  Comparison,
  CveInsight,
  CvePackage as CveOccurrence,
  CveReference,
  DateTime,
  ExternalObject,
  ExternalObjectMatch,
  GateEvaluation,
  GateFinding,
  GateHistoryEntry,
  GateRule,
  Interaction,
  PackageUse,
  PackageVersion,
  ReferenceChange,
  Severity,
  VulnerablePackageChange,
} from "../contracts/resources.ts";

import type {
  ApplicationDetail,
  ApplicationSummary,
  Comparison,
  CveInsight,
  CvePackage,
  CveReference,
  ExternalObjectMatch,
  GateEvaluation,
  GateHistoryEntry,
  GateRule,
  Interaction,
  PackageUse,
} from "../contracts/resources.ts";

export interface Paging {
  limit: number;
  skip?: number;
}

/** A REST answer outside 2xx, or the REST API unreachable (status 0). */
export class RestApiError extends Error {
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  /** The problem's `type` (about:blank when it has none of its own). */
  readonly type: string;

  constructor(status: number, title: string, detail: string, type = "about:blank") {
    super(
      status === 0
        ? `The REST API could not be reached: ${detail}`
        : `REST API answered ${status} ${title}: ${detail}`,
    );
    this.name = "RestApiError";
    this.status = status;
    this.title = title;
    this.detail = detail;
    this.type = type;
  }
}

/** One GET as the REST API answered it: status line and body text (or, in-process, the value itself). */
export interface RestAnswer {
  status: number;
  statusText: string;
  body: string;
  /** A 2xx answer's value as the REST API's handler gave it, instead of its JSON in `body`. */
  json?: unknown;
}

/**
 * How a REST call reaches the REST API: over HTTP (the default, `httpTransport`), or in-process into the
 * REST application when both run in one process (`inProcessTransport`). Either way the request carries
 * the caller's credentials and goes through the REST API's own authentication and authorization.
 */
export interface RestTransport {
  /** Where the calls go, for error messages. */
  readonly target: string;
  get(pathAndQuery: string, headers: Record<string, string>, signal: AbortSignal): Promise<RestAnswer>;
}

/** The REST API over HTTP at `baseUrl` (paths start with /rest). */
export function httpTransport(baseUrl: string, doFetch: typeof fetch = fetch): RestTransport {
  const base = baseUrl.replace(/\/+$/, "");
  return {
    target: base,
    async get(pathAndQuery, headers, signal) {
      const response = await doFetch(`${base}${pathAndQuery}`, { headers, signal });
      return { status: response.status, statusText: response.statusText, body: await response.text() };
    },
  };
}

/** What `inProcessTransport` needs of the REST application: Fastify's `inject`, and its direct GETs. */
export interface InjectableApp {
  inject(request: {
    method: "GET";
    url: string;
    headers: Record<string, string>;
    signal?: AbortSignal;
  }): PromiseLike<{ statusCode: number; statusMessage: string; body: string }>;
  /**
   * The GET operation called directly after the REST API's own authentication and parameter checks
   * (src/rest/in-process-reads.ts); undefined when the request must go through `inject`.
   */
  inProcessGet?(pathAndQuery: string, headers: Record<string, string>): Promise<RestAnswer> | undefined;
}

/**
 * The REST application of this process, called in-process: the operation's handler directly, after the
 * REST API's authentication and parameter checks (`inProcessGet`), else Fastify `inject` (the same
 * routing, hooks and handlers as over HTTP), minus the loopback socket, the HTTP parsing on both sides
 * and the connection pool.
 */
export function inProcessTransport(app: InjectableApp): RestTransport {
  return {
    target: "the REST API in this process",
    async get(pathAndQuery, headers, signal) {
      const direct = app.inProcessGet?.(pathAndQuery, headers);
      if (direct) return direct;
      const response = await app.inject({ method: "GET", url: pathAndQuery, headers, signal });
      return { status: response.statusCode, statusText: response.statusMessage, body: response.body };
    },
  };
}

export interface RestClientOptions {
  /** How calls reach the REST API. */
  transport: RestTransport;
  /** The caller's bearer token, sent unchanged; without it the REST API answers 401. */
  token?: string | undefined;
  /** The MCP request's `traceparent` (W3C Trace Context), passed on to the REST API. */
  traceparent?: unknown;
  /** Abort the call when this signal fires (e.g. the MCP request was cancelled). */
  signal?: AbortSignal | undefined;
  /** Per-call timeout in milliseconds. Default 30 s. */
  timeoutMs?: number;
}

type Query = Record<string, string | number | boolean | undefined>;

const app = (name: string) => `/rest/applications/${encodeURIComponent(name)}`;

export interface RestClient {
  listApplications(paging: Paging): Promise<ApplicationSummary[]>;
  getApplication(name: string): Promise<ApplicationDetail>;
  listCveInsights(
    name: string,
    query: Paging & { date?: string; severity?: readonly string[] },
  ): Promise<CveInsight[]>;
  listCveOccurrences(name: string, cve: string, query: Paging & { date?: string }): Promise<CvePackage[]>;
  listCveReferences(
    name: string,
    cve: string,
    query: Paging & { date?: string; reachesAffectedFunction?: boolean },
  ): Promise<CveReference[]>;
  listPackages(
    name: string,
    query: Paging & { date?: string; vulnerable?: boolean; q?: string; scope?: string },
  ): Promise<PackageUse[]>;
  listInteractions(
    name: string,
    query: Paging & { package: string; ecosystem?: string; version?: string; date?: string },
  ): Promise<Interaction[]>;
  searchObjects(
    name: string,
    query: Paging & { q: string; type?: string; date?: string },
  ): Promise<ExternalObjectMatch[]>;
  listGates(): Promise<GateRule[]>;
  evaluateGates(name: string, query: { date?: string }): Promise<GateEvaluation>;
  gateHistory(name: string, paging: Paging): Promise<GateHistoryEntry[]>;
  compare(
    name: string,
    query: { from: string; to?: string; limit: number; skip: number },
  ): Promise<Comparison>;
}

export function createRestClient(options: RestClientOptions): RestClient {
  const { transport } = options;
  const timeoutMs = options.timeoutMs ?? 30_000;
  // The REST API is on loopback or in this process: compressing there and inflating here would only cost CPU.
  const headers: Record<string, string> = { accept: "application/json", "accept-encoding": "identity" };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (parseTraceparent(options.traceparent)) headers.traceparent = options.traceparent as string;

  async function get<T>(path: string, query: Query = {}): Promise<T> {
    let search = "";
    for (const key in query) {
      const value = query[key];
      if (value !== undefined && value !== "") {
        search += `${search ? "&" : "?"}${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`;
      }
    }
    // One controller and one timer per call: aborted by the timeout or by the MCP request's cancellation.
    // The call stops waiting then even when the transport cannot abort (an in-process read runs to its end).
    const controller = new AbortController();
    let stop: (reason: Error) => void = () => {};
    const stopped = new Promise<never>((_, reject) => {
      stop = reject;
    });
    stopped.catch(() => {});
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      const reason = new Error(`no answer within ${timeoutMs / 1000} s`);
      controller.abort(reason);
      stop(reason);
    }, timeoutMs);
    const cancel = () => {
      const reason = options.signal?.reason;
      controller.abort(reason);
      stop(reason instanceof Error ? reason : new Error("The MCP request was cancelled"));
    };
    if (options.signal?.aborted) cancel();
    else options.signal?.addEventListener("abort", cancel, { once: true });
    let answer: RestAnswer;
    try {
      answer = await Promise.race([transport.get(`${path}${search}`, headers, controller.signal), stopped]);
    } catch (error) {
      const reason = timedOut
        ? `no answer within ${timeoutMs / 1000} s`
        : ((error as Error)?.cause as Error | undefined)?.message || (error as Error)?.message;
      throw new RestApiError(0, "Unreachable", `${reason} (${transport.target})`);
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", cancel);
    }
    if (answer.status < 200 || answer.status > 299) throw problemError(answer);
    if (answer.json !== undefined) return answer.json as T;
    try {
      return JSON.parse(answer.body) as T;
    } catch {
      throw new RestApiError(
        502,
        "Bad Gateway",
        `GET ${path} answered ${answer.status} with a body that is not JSON`,
      );
    }
  }

  const paging = (p: Paging) => ({ limit: p.limit, skip: p.skip });

  return {
    listApplications: (p) => get("/rest/applications", paging(p)),
    getApplication: (name) => get(app(name)),
    listCveInsights: (name, q) =>
      get(`${app(name)}/insights/cve`, { ...paging(q), date: q.date, severity: q.severity?.join(",") }),
    listCveOccurrences: (name, cve, q) =>
      get(`${app(name)}/insights/cve/${encodeURIComponent(cve)}/occurrences`, { ...paging(q), date: q.date }),
    listCveReferences: (name, cve, q) =>
      get(`${app(name)}/insights/cve/${encodeURIComponent(cve)}/references`, {
        ...paging(q),
        date: q.date,
        reachesAffectedFunction: q.reachesAffectedFunction,
      }),
    listPackages: (name, q) =>
      get(`${app(name)}/packages`, {
        ...paging(q),
        date: q.date,
        vulnerable: q.vulnerable,
        q: q.q,
        scope: q.scope,
      }),
    listInteractions: (name, q) =>
      get(`${app(name)}/interactions`, {
        ...paging(q),
        package: q.package,
        ecosystem: q.ecosystem,
        version: q.version,
        date: q.date,
      }),
    searchObjects: (name, q) =>
      get(`${app(name)}/objects`, { ...paging(q), q: q.q, type: q.type, date: q.date }),
    listGates: () => get("/rest/gates"),
    evaluateGates: (name, q) => get(`${app(name)}/gates/evaluation`, { date: q.date }),
    gateHistory: (name, p) => get(`${app(name)}/gates/history`, paging(p)),
    compare: (name, q) =>
      get(`${app(name)}/compare`, { from: q.from, to: q.to, limit: q.limit, skip: q.skip }),
  };
}

function problemError(response: RestAnswer): RestApiError {
  const text = response.body;
  let detail = "";
  let title = "";
  let type: string | undefined;
  try {
    const body = JSON.parse(text) as { detail?: unknown; title?: unknown; type?: unknown };
    if (typeof body.detail === "string") detail = body.detail;
    if (typeof body.title === "string") title = body.title;
    if (typeof body.type === "string") type = body.type;
  } catch {
    // not problem+json: fall back to the status line
  }
  title ||= response.statusText || STATUS_CODES[response.status] || "Error";
  detail ||= text.trim().slice(0, 200) || "no detail given";
  return new RestApiError(response.status, title, detail, type);
}
