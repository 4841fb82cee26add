/**
 * The store could not serve a query for a reason outside the query itself: the database is unreachable,
 * restarting, paused, out of connection slots, a standby, or (SQLite) its file is locked by another
 * process or cannot be written. Callers answer 503 with Retry-After (REST: problem+json; MCP: a JSON-RPC
 * error), never 500, and the process goes on. The message names the kind of fault only: host names and
 * driver messages go to the log, with the cause kept in `cause`.
 */
export class StoreUnavailableError extends Error {
  /** What failed, for the `imaging_store_errors_total` metric. */
  readonly kind: StoreErrorKind;
  /** Seconds after which a retry may succeed (the Retry-After header). */
  readonly retryAfterSeconds: number;

  constructor(
    kind: StoreErrorKind,
    message: string,
    options: { cause?: unknown; retryAfterSeconds?: number } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "StoreUnavailableError";
    this.kind = kind;
    this.retryAfterSeconds = options.retryAfterSeconds ?? STORE_RETRY_AFTER_SECONDS;
  }
}

/**
 * The kinds of store faults: `connect` (a new connection failed), `connection_lost` (an open one broke),
 * `timeout` (no answer in time), `full` (the server has no connection slot left), `read_only` (a standby
 * answered), `pool_exhausted` (no pooled connection freed in time), `refused` (turned away at once while
 * the database is known to be down), `busy` (SQLite: locked by another process), `io` (SQLite: the file
 * cannot be read or written, the disk is full).
 */
export type StoreErrorKind =
  | "connect"
  | "connection_lost"
  | "timeout"
  | "full"
  | "read_only"
  | "pool_exhausted"
  | "refused"
  | "busy"
  | "io";

/** What clients are told to wait before retrying: the pool retries the database at least this often. */
export const STORE_RETRY_AFTER_SECONDS = 2;

/** Node.js socket errors of a connection that cannot be made or was lost. */
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EHOSTDOWN",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/** node-postgres's own messages for a connection that ended or never came. */
const PG_CONNECTION_MESSAGES =
  /^(Connection terminated|Client has encountered a connection error|Client was closed|timeout expired|Query read timeout)/;

/** SQLite result codes (the primary code: extended codes carry it in their low byte). */
const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;
const SQLITE_NOMEM = 7;
const SQLITE_READONLY = 8;
const SQLITE_IOERR = 10;
const SQLITE_FULL = 13;
const SQLITE_CANTOPEN = 14;
const SQLITE_PROTOCOL = 15;

/**
 * The error as a StoreUnavailableError when it is a fault of the store rather than of the query (a
 * constraint violation, a syntax error: those stay as they are), else undefined.
 */
export function asStoreUnavailable(error: unknown): StoreUnavailableError | undefined {
  if (error instanceof StoreUnavailableError) return error;
  if (typeof error !== "object" || error === null) return undefined;
  const { code, errcode, message } = error as { code?: unknown; errcode?: unknown; message?: unknown };
  if (typeof errcode === "number") return sqliteFault(errcode, error);
  if (typeof code === "string") {
    const postgres = postgresFault(code, error);
    if (postgres) return postgres;
    if (SOCKET_CODES.has(code)) {
      return new StoreUnavailableError("connect", "the database cannot be reached", { cause: error });
    }
  }
  if (typeof message === "string" && PG_CONNECTION_MESSAGES.test(message)) {
    return /timeout/i.test(message)
      ? new StoreUnavailableError("timeout", "the database did not answer in time", { cause: error })
      : new StoreUnavailableError("connection_lost", "the connection to the database was lost", {
          cause: error,
        });
  }
  return undefined;
}

/** SQLSTATE codes of a server that cannot serve now (https://www.postgresql.org/docs/current/errcodes-appendix.html). */
function postgresFault(code: string, cause: unknown): StoreUnavailableError | undefined {
  // Class 08: connection exception.
  if (code.startsWith("08")) {
    return new StoreUnavailableError("connect", "the database cannot be reached", { cause });
  }
  switch (code) {
    case "57P01": // admin_shutdown: the server shuts down, or pg_terminate_backend
    case "57P02": // crash_shutdown: another backend crashed, the server restarts
      return new StoreUnavailableError("connection_lost", "the database ended the connection", { cause });
    case "57P03": // cannot_connect_now: starting up, shutting down, in recovery
      return new StoreUnavailableError("connect", "the database is starting up or shutting down", { cause });
    case "57P05": // idle_session_timeout
      return new StoreUnavailableError("connection_lost", "the database ended an idle connection", { cause });
    case "53300": // too_many_connections
      return new StoreUnavailableError("full", "the database has no free connection slot", { cause });
    case "53100": // disk_full
    case "53200": // out_of_memory
      return new StoreUnavailableError("io", "the database is out of disk space or memory", { cause });
    case "57014": // query_canceled: statement_timeout
      return new StoreUnavailableError("timeout", "the database did not answer in time", { cause });
    case "25006": // read_only_sql_transaction: a standby (after a failover)
      return new StoreUnavailableError("read_only", "the database answered read-only (a standby)", { cause });
    case "28000": // invalid_authorization_specification
    case "28P01": // invalid_password
    case "3D000": // invalid_catalog_name: the database does not exist (yet)
      return new StoreUnavailableError("connect", "the database refused the connection", { cause });
    default:
      return undefined;
  }
}

function sqliteFault(errcode: number, cause: unknown): StoreUnavailableError | undefined {
  switch (errcode & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return new StoreUnavailableError("busy", "the store file is locked by another process", { cause });
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_NOMEM:
    case SQLITE_PROTOCOL:
      return new StoreUnavailableError("io", "the store file cannot be read or written", { cause });
    default:
      return undefined;
  }
}

/** The cause's own message for the log (a driver message, a host), never for a client. */
export function causeText(error: StoreUnavailableError): string {
  const cause = error.cause as { message?: unknown; code?: unknown } | undefined;
  const text = typeof cause?.message === "string" && cause.message ? cause.message : String(cause ?? "");
  const code = typeof cause?.code === "string" ? ` (${cause.code})` : "";
  return text ? `${text}${code}` : error.message;
}
