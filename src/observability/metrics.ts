import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/**
 * The process's Prometheus metrics (prom-client). One registry per process, as Prometheus scrapes a
 * process: every part running here (gateway, REST API, MCP servers, identity provider, store) records
 * into it, and the metrics listener (METRICS_PORT) exposes it. Label values are bounded: route
 * patterns (never raw URLs), tool names, CIMD rule names, fixed outcomes.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: "imaging_" });

/** Latency buckets (seconds) from a cached-token MCP hop (~1 ms) to a slow analysis upload. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export const httpRequests = new Counter({
  name: "imaging_http_requests_total",
  help: "HTTP requests answered, per listener, method, route pattern and status code",
  labelNames: ["listener", "method", "route", "status"] as const,
  registers: [registry],
});

export const httpRequestDuration = new Histogram({
  name: "imaging_http_request_duration_seconds",
  help: "Time to answer an HTTP request (until the response is written), per listener, method, route pattern and status code",
  labelNames: ["listener", "method", "route", "status"] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const mcpToolCalls = new Counter({
  name: "imaging_mcp_tool_calls_total",
  help: "MCP tools/call handled by an MCP server, per server, tool and outcome (ok or error)",
  labelNames: ["server", "tool", "outcome"] as const,
  registers: [registry],
});

export const mcpToolDuration = new Histogram({
  name: "imaging_mcp_tool_call_duration_seconds",
  help: "Time an MCP tool took (its REST calls included), per server and tool",
  labelNames: ["server", "tool"] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const tokenVerifications = new Counter({
  name: "imaging_token_verifications_total",
  help: "MCP access token checks at the gateway: hit (cached verification), miss (verified now), invalid, unavailable (keys could not be fetched)",
  labelNames: ["result"] as const,
  registers: [registry],
});

export const tokenExchanges = new Counter({
  name: "imaging_token_exchanges_total",
  help: "Token exchanges (RFC 8693) at the gateway: hit (cached), shared (joined one in flight), miss (exchanged now), refused, unavailable",
  labelNames: ["result"] as const,
  registers: [registry],
});

export const upstreamUp = new Gauge({
  name: "imaging_upstream_up",
  help: "Whether the gateway reaches an upstream (1) or not (0); absent until first probed",
  labelNames: ["upstream"] as const,
  registers: [registry],
});

export const storeQueryDuration = new Histogram({
  name: "imaging_store_query_duration_seconds",
  help: "Store query time, per store kind, statement kind (select, insert, update, delete, other) and outcome",
  labelNames: ["store", "statement", "outcome"] as const,
  buckets: [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
  registers: [registry],
});

/** A store's connection pool, as the metrics read it (PostgreSQL: node-postgres's pool). */
export interface StorePoolStats {
  inUse: number;
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
}

/** The pool of the store this process serves from: set by the store when it opens; the returned function clears it. */
let poolStats: (() => StorePoolStats) | undefined;
export function observeStorePool(stats: () => StorePoolStats): () => void {
  poolStats = stats;
  return () => {
    if (poolStats === stats) poolStats = undefined;
  };
}

export const storeConnections = new Gauge({
  name: "imaging_store_connections",
  help: "Connections of the store's PostgreSQL pool: in_use (lent to a query or a transaction) or idle",
  labelNames: ["state"] as const,
  registers: [registry],
  collect() {
    const stats = poolStats?.();
    this.reset();
    if (!stats) return;
    this.set({ state: "in_use" }, stats.inUse);
    this.set({ state: "idle" }, stats.idle);
  },
});

export const storeWaiting = new Gauge({
  name: "imaging_store_waiting_queries",
  help: "Queries waiting for a connection of the store's PostgreSQL pool",
  registers: [registry],
  collect() {
    this.set(poolStats?.().waiting ?? 0);
  },
});

export const storeErrors = new Counter({
  name: "imaging_store_errors_total",
  help: "Store faults: connect, connection_lost, timeout, full (no slot on the server), read_only (a standby), pool_exhausted, refused (turned away while the database is down), busy (SQLite locked), io (SQLite file)",
  labelNames: ["store", "kind"] as const,
  registers: [registry],
});

export const storeReconnects = new Counter({
  name: "imaging_store_reconnects_total",
  help: "Times the store became reachable again after being unavailable",
  labelNames: ["store"] as const,
  registers: [registry],
});

export const storeUp = new Gauge({
  name: "imaging_store_up",
  help: "Whether the store is taken as available (1) or known to be down (0: queries are answered 503 at once while it is retried)",
  labelNames: ["store"] as const,
  registers: [registry],
});

export const draining = new Gauge({
  name: "imaging_draining",
  help: "1 while the process drains after SIGTERM (readiness fails, requests are still served, each answer closes its connection), else 0",
  registers: [registry],
});

draining.set(0);

export const drainRequests = new Counter({
  name: "imaging_drain_requests_total",
  help: "Requests answered while the process drained or stopped (each with Connection: close)",
  registers: [registry],
});

export const signIns = new Counter({
  name: "imaging_sign_ins_total",
  help: "Password sign-ins at the embedded identity provider: success, failure (wrong credentials), throttled",
  labelNames: ["result"] as const,
  registers: [registry],
});

export const cimdRefusals = new Counter({
  name: "imaging_cimd_refusals_total",
  help: "Clients refused by the embedded identity provider's CIMD policies, per rule",
  labelNames: ["rule"] as const,
  registers: [registry],
});

/** The statement kind of a SQL text, for the store histogram's bounded label. */
export function statementKind(sqlText: string): string {
  const word = /^\s*(\w+)/.exec(sqlText)?.[1]?.toLowerCase();
  return word === "select" || word === "insert" || word === "update" || word === "delete" || word === "with"
    ? word === "with"
      ? "select"
      : word
    : "other";
}
