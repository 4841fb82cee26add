import type { PostgresPool, PostgresPoolClient } from "kysely";
import type pgModule from "pg";
import { type StorePoolStats, storeErrors, storeReconnects, storeUp } from "../observability/metrics.ts";
import { asStoreUnavailable, causeText, StoreUnavailableError } from "./store-errors.ts";

type Pg = typeof pgModule;
type PgPoolClient = pgModule.PoolClient;

/**
 * The PostgreSQL connection pool of a store, made to outlive its database: node-postgres's pool with
 *
 * - an error listener on every connection, idle or lent out: a connection the server drops (restart,
 *   `pg_terminate_backend`, failover) is discarded, never an unhandled `error` event that ends the process;
 * - bounded waits: connecting and waiting for a free connection (`waitTimeoutMs`), and, in the service, the
 *   server's `statement_timeout` with a client-side limit a little above it, for a server that stopped
 *   answering (paused): such a connection is destroyed, not lent again;
 * - a circuit breaker: when a new connection cannot be made, the database is taken as down, queries are
 *   turned away at once (StoreUnavailableError: 503 upstream) and one probe reconnects with backoff
 *   (100 ms doubling to 1 s), so the service is back within about a second of the database;
 * - a read that lost its connection outside a transaction runs again, once, on a fresh one;
 * - libpq's multi-host URLs (`postgres://u:p@h1:5432,h2:5432/db?target_session_attrs=read-write`): each
 *   new connection goes to the host that last served, the next ones in turn when it fails or is read-only.
 */
export interface GuardedPool extends PostgresPool {
  /** Whether the database is taken as available; if not, why (a sentence without host names). */
  availability(): { available: true } | { available: false; reason: string };
  stats(): StorePoolStats;
}

export interface GuardedPoolOptions {
  location: PostgresLocation;
  max?: number;
  /** Milliseconds to connect, and to wait for a free connection of the pool. */
  waitTimeoutMs: number;
  /** Milliseconds a statement may run (the server's statement_timeout); undefined: no limit (the CLI). */
  statementTimeoutMs?: number | undefined;
  /** State changes of the database (down with its cause, back), for the process's log. */
  log: (line: string) => void;
}

/** A PostgreSQL URL taken apart: its hosts (libpq's comma-separated list) and what each connection needs. */
export interface PostgresLocation {
  hosts: { host: string; port: number }[];
  targetSessionAttrs: TargetSessionAttrs;
  /** The URL with host `index` alone and without target_session_attrs: what node-postgres reads. */
  urlFor(index: number): string;
  /** The URL without its password, for messages. */
  safe: string;
}

const TARGET_SESSION_ATTRS = ["any", "read-write", "primary"] as const;
export type TargetSessionAttrs = (typeof TARGET_SESSION_ATTRS)[number];

/** Parses `postgres[ql]://[user[:password]@]host[:port][,host[:port]...]/database[?params]`. */
export function parsePostgresUrl(url: string): PostgresLocation {
  const match = /^(postgres(?:ql)?:\/\/)(?:([^@/?#]*)@)?([^/?#]*)([^?#]*)(\?[^#]*)?$/.exec(url);
  if (!match) {
    throw new Error("DATABASE_URL must read postgres://user:password@host:port/database");
  }
  const [, scheme = "", userinfo, hostList = "", path = "", query = ""] = match;
  const hosts = hostList.split(",").map((entry) => {
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
    const plain = /^([^:[\]]*)(?::(\d+))?$/.exec(entry);
    const parts = bracketed ?? plain;
    if (!parts) throw new Error(`DATABASE_URL: '${entry}' is not a host[:port]`);
    const port = parts[2] === undefined ? 5432 : Number(parts[2]);
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      throw new Error(`DATABASE_URL: the port of '${entry}' is not a port number`);
    }
    return { host: parts[1] ?? "", port };
  });
  if (hosts.length > 1 && hosts.some((h) => h.host === "")) {
    throw new Error("DATABASE_URL: a host of the list is empty");
  }
  const params = new URLSearchParams(query.slice(1));
  const attrs = params.get("target_session_attrs") ?? "any";
  if (!(TARGET_SESSION_ATTRS as readonly string[]).includes(attrs)) {
    throw new Error(
      `DATABASE_URL: target_session_attrs=${attrs} is not supported: use ${TARGET_SESSION_ATTRS.join(", ")}`,
    );
  }
  params.delete("target_session_attrs");
  const rest = params.toString();
  const hostText = (h: { host: string; port: number }) =>
    `${h.host.includes(":") ? `[${h.host}]` : h.host}:${h.port}`;
  const build = (credentials: string | undefined, list: string) =>
    `${scheme}${credentials === undefined ? "" : `${credentials}@`}${list}${path}${rest ? `?${rest}` : ""}`;
  const user = userinfo?.split(":")[0];
  return {
    hosts,
    targetSessionAttrs: attrs as TargetSessionAttrs,
    urlFor: (index) => build(userinfo, hostText(hosts[index] as { host: string; port: number })),
    safe: build(user, hosts.map(hostText).join(",")),
  };
}

/** The backoff of the probe while the database is down: from the first to the longest wait. */
const BACKOFF_FIRST_MS = 100;
const BACKOFF_MAX_MS = 1_000;
/** How long the pool stays at its size after the server said it has no connection slot left. */
const FULL_HOLD_MS = 5_000;
/** The client's limit for an answer is the server's statement_timeout plus this. */
const ANSWER_MARGIN_MS = 5_000;

/** A connected server that does not fit target_session_attrs (a standby, for read-write). */
class WrongServerError extends Error {
  readonly code = "25006";
}

/** node-postgres's own message when no pooled connection freed up in time. */
const POOL_WAIT_TIMEOUT = /^timeout exceeded when trying to connect/;

/** A read that can run again elsewhere: a plain SELECT, no lock, no sequence, outside any transaction. */
const RETRYABLE_READ = /^\s*select\b/i;
const HAS_EFFECTS =
  /\b(insert|update|delete|into|nextval|setval|pg_advisory\w*|pg_notify|for\s+(no\s+key\s+)?update|for\s+(key\s+)?share)\b/i;
const BEGINS = /^\s*(begin|start\s+transaction)\b/i;
const ENDS = /^\s*(commit|rollback|end|abort)\b/i;

export function createGuardedPool(pg: Pg, options: GuardedPoolOptions): GuardedPool {
  const { location } = options;
  const label = { store: "postgres" } as const;
  let hostIndex = 0;
  let ended = false;
  let outage: { reason: string; since: number; attempts: number; timer?: NodeJS.Timeout } | undefined;
  let fullHold: NodeJS.Timeout | undefined;
  const max = options.max ?? 10;
  storeUp.set(label, 1);

  /** Each new connection goes to the host of the moment; the pool creates its clients through this class. */
  class HostClient extends pg.Client {
    readonly hostIndex: number;
    constructor(config: pgModule.ClientConfig) {
      const index = hostIndex;
      super({ ...config, connectionString: location.urlFor(index) });
      this.hostIndex = index;
    }
  }
  const nextHost = (from: number) => {
    if (location.hosts.length > 1 && hostIndex === from) hostIndex = (from + 1) % location.hosts.length;
  };

  const checkServer =
    location.targetSessionAttrs === "read-write"
      ? "select current_setting('transaction_read_only') = 'on' as wrong"
      : location.targetSessionAttrs === "primary"
        ? "select pg_is_in_recovery() as wrong"
        : undefined;

  const pool = new pg.Pool({
    connectionString: location.urlFor(0),
    // The pool builds its clients with `new Client(options)`; @types/pg declares a constructor without options.
    Client: HostClient as unknown as new () => pgModule.ClientBase,
    max,
    connectionTimeoutMillis: options.waitTimeoutMs,
    idleTimeoutMillis: 10_000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    application_name: "imaging-services",
    ...(options.statementTimeoutMs
      ? {
          statement_timeout: options.statementTimeoutMs,
          query_timeout: options.statementTimeoutMs + ANSWER_MARGIN_MS,
        }
      : {}),
  });
  if (checkServer) {
    // pg-pool runs this on each new connection before lending it; a rejection ends the connection.
    (pool.options as { onConnect?: (client: pgModule.ClientBase) => Promise<void> }).onConnect = async (
      client,
    ) => {
      const { rows } = await client.query<{ wrong: boolean }>(checkServer);
      if (rows[0]?.wrong) {
        throw new WrongServerError(
          `the server does not fit target_session_attrs=${location.targetSessionAttrs}`,
        );
      }
    };
  }
  // An idle connection the server drops: the pool discards it (unlistened, this event would end the process).
  pool.on("error", () => storeErrors.inc({ ...label, kind: "connection_lost" }));
  // A connection lent out that breaks: its query (if any) fails and says so; the event must be listened to.
  pool.on("connect", (client) => client.on("error", () => {}));

  const refused = () => {
    storeErrors.inc({ ...label, kind: "refused" });
    return new StoreUnavailableError("refused", outage?.reason ?? "the database is unavailable");
  };

  /** The database is down: queries are turned away at once while a probe reconnects with backoff. */
  const trip = (fault: StoreUnavailableError) => {
    if (ended) return;
    if (outage) {
      outage.reason = fault.message;
      return;
    }
    outage = { reason: fault.message, since: Date.now(), attempts: 0 };
    storeUp.set(label, 0);
    options.log(
      `database unavailable (${location.safe}): ${causeText(fault)}; queries are answered 503 while it is retried`,
    );
    schedule();
  };
  const schedule = () => {
    if (!outage || ended) return;
    const delay = Math.min(BACKOFF_FIRST_MS * 2 ** outage.attempts, BACKOFF_MAX_MS);
    outage.timer = setTimeout(() => void probe(), delay);
    outage.timer.unref();
  };
  const probe = async () => {
    const down = outage;
    if (!down || ended) return;
    let client: PgPoolClient | undefined;
    try {
      client = await connectToSomeHost();
      await answerWithin(client.query("select 1"), options.waitTimeoutMs);
      client.release();
      const seconds = ((Date.now() - down.since) / 1000).toFixed(1);
      outage = undefined;
      storeUp.set(label, 1);
      storeReconnects.inc(label);
      options.log(`database reachable again after ${seconds} s`);
    } catch (error) {
      client?.release(true);
      const fault =
        asStoreUnavailable(error) ?? new StoreUnavailableError("connect", "the database cannot be reached");
      down.reason = fault.message;
      down.attempts++;
      schedule();
    }
  };

  /** A connection from the pool, trying each host once when the one of the moment fails or does not fit. */
  const connectToSomeHost = async (): Promise<PgPoolClient> => {
    let lastError: unknown;
    for (let attempt = 0; attempt < location.hosts.length; attempt++) {
      const tried = hostIndex;
      try {
        return await pool.connect();
      } catch (error) {
        lastError = error;
        const poolWait = error instanceof Error && POOL_WAIT_TIMEOUT.test(error.message);
        if (poolWait || !asStoreUnavailable(error)) break;
        nextHost(tried);
      }
    }
    throw lastError;
  };

  /** A connection for a query, or the StoreUnavailableError that says why there is none. */
  const acquire = async (): Promise<PgPoolClient> => {
    if (outage) throw refused();
    try {
      return await connectToSomeHost();
    } catch (error) {
      if (error instanceof Error && POOL_WAIT_TIMEOUT.test(error.message)) {
        storeErrors.inc({ ...label, kind: "pool_exhausted" });
        throw new StoreUnavailableError(
          "pool_exhausted",
          `no database connection was free within ${options.waitTimeoutMs / 1000} s`,
          { cause: error },
        );
      }
      const fault = asStoreUnavailable(error);
      if (!fault) throw error;
      storeErrors.inc({ ...label, kind: fault.kind });
      if (fault.kind === "full" && pool.totalCount > 0) {
        // The server has no slot left: the pool keeps the connections it has, and stops growing for a while.
        pool.options.max = pool.totalCount;
        clearTimeout(fullHold);
        fullHold = setTimeout(() => {
          pool.options.max = max;
        }, FULL_HOLD_MS);
        fullHold.unref();
      } else {
        trip(fault);
      }
      throw fault;
    }
  };

  /** What Kysely holds for one query or one transaction. */
  class GuardedClient implements PostgresPoolClient {
    #client: PgPoolClient | undefined;
    #broken = false;
    #inTransaction = false;

    constructor(client: PgPoolClient) {
      this.#client = client;
    }

    get processID(): number | undefined {
      return (this.#client as { processID?: number } | undefined)?.processID;
    }

    // biome-ignore lint/suspicious/noExplicitAny: Kysely's overloads (SQL text, or a cursor) in one signature.
    query(sqlOrCursor: any, parameters?: ReadonlyArray<unknown>): any {
      if (typeof sqlOrCursor !== "string") return this.#live().query(sqlOrCursor);
      return this.#run(sqlOrCursor, parameters ?? [], true);
    }

    #live(): PgPoolClient {
      if (!this.#client)
        throw new StoreUnavailableError("connection_lost", "the connection to the database was lost");
      return this.#client;
    }

    // biome-ignore lint/suspicious/noExplicitAny: node-postgres's result, as Kysely reads it.
    async #run(sql: string, parameters: ReadonlyArray<unknown>, mayRetry: boolean): Promise<any> {
      const client = this.#live();
      try {
        const result = await client.query(sql, parameters as unknown[]);
        if (BEGINS.test(sql)) this.#inTransaction = true;
        else if (ENDS.test(sql)) this.#inTransaction = false;
        return result;
      } catch (error) {
        if (ENDS.test(sql)) this.#inTransaction = false;
        const fault = asStoreUnavailable(error);
        if (!fault) throw error;
        storeErrors.inc({ ...label, kind: fault.kind });
        // A statement_timeout is the server's answer on a sound connection; anything else leaves it unusable.
        const serverCancelled = (error as { code?: unknown }).code === "57014";
        if (!serverCancelled) this.#broken = true;
        if (fault.kind === "read_only")
          nextHost((client as PgPoolClient & { hostIndex?: number }).hostIndex ?? -1);
        // No answer within the client's limit: the server stopped answering (paused, cut off).
        if (error instanceof Error && error.message === "Query read timeout") trip(fault);
        if (
          this.#broken &&
          mayRetry &&
          !this.#inTransaction &&
          RETRYABLE_READ.test(sql) &&
          !HAS_EFFECTS.test(sql)
        ) {
          // The read changed nothing: it runs again, once, on a fresh connection.
          this.#client = undefined;
          client.release(true);
          this.#client = await acquire();
          this.#broken = false;
          return this.#run(sql, parameters, false);
        }
        throw fault;
      }
    }

    release(): void {
      const client = this.#client;
      this.#client = undefined;
      // Released twice (Kysely after a failed retry): node-postgres would throw.
      client?.release(this.#broken ? true : undefined);
    }
  }

  return {
    options: pool.options,
    async connect() {
      return new GuardedClient(await acquire());
    },
    async end() {
      ended = true;
      clearTimeout(outage?.timer);
      clearTimeout(fullHold);
      await pool.end();
    },
    availability: () => (outage ? { available: false, reason: outage.reason } : { available: true }),
    stats: () => ({
      inUse: pool.totalCount - pool.idleCount,
      idle: pool.idleCount,
      waiting: pool.waitingCount,
    }),
  };
}

/** The promise's value, or a timeout error after `ms` (the caller discards the connection then). */
async function answerWithin<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new StoreUnavailableError("timeout", "the database did not answer in time")),
          ms,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
