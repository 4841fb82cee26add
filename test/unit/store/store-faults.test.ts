import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parsePostgresUrl } from "../../../src/store/postgres-pool.ts";
import { asStoreUnavailable, StoreUnavailableError } from "../../../src/store/store-errors.ts";

describe("DATABASE_URL with several hosts (libpq's form)", () => {
  it("takes the hosts apart, in order, each with its port (5432 when none), and target_session_attrs", () => {
    const location = parsePostgresUrl(
      "postgres://imaging:s%40cret@db-1:5433,db-2,[::1]:5434/imaging?target_session_attrs=read-write&sslmode=disable",
    );
    assert.deepEqual(location.hosts, [
      { host: "db-1", port: 5433 },
      { host: "db-2", port: 5432 },
      { host: "::1", port: 5434 },
    ]);
    assert.equal(location.targetSessionAttrs, "read-write");
    // What node-postgres reads: one host, the credentials and other parameters as given.
    assert.equal(location.urlFor(0), "postgres://imaging:s%40cret@db-1:5433/imaging?sslmode=disable");
    assert.equal(location.urlFor(2), "postgres://imaging:s%40cret@[::1]:5434/imaging?sslmode=disable");
    // For messages: every host, no password.
    assert.equal(location.safe, "postgres://imaging@db-1:5433,db-2:5432,[::1]:5434/imaging?sslmode=disable");
  });

  it("reads a single host as before, target_session_attrs any by default", () => {
    const location = parsePostgresUrl("postgresql://u:p@localhost/db");
    assert.deepEqual(location.hosts, [{ host: "localhost", port: 5432 }]);
    assert.equal(location.targetSessionAttrs, "any");
    assert.equal(location.urlFor(0), "postgresql://u:p@localhost:5432/db");
    assert.doesNotMatch(location.safe, /:p@/);
  });

  it("refuses what it cannot honour, in one sentence that repeats no password", () => {
    for (const [url, message] of [
      [
        "postgres://u:secret@h1,h2/db?target_session_attrs=standby",
        /target_session_attrs=standby is not supported/,
      ],
      ["postgres://u:secret@h1:99999/db", /port of 'h1:99999' is not a port number/],
      ["postgres://u:secret@h1,,h2/db", /a host of the list is empty/],
      ["mysql://u:secret@h1/db", /postgres:\/\/user:password@host:port\/database/],
    ] as const) {
      assert.throws(
        () => parsePostgresUrl(url),
        (error: Error) => message.test(error.message) && !error.message.includes("secret"),
      );
    }
  });
});

describe("store faults told apart from query errors", () => {
  const pgError = (code: string, message = "server said so") => Object.assign(new Error(message), { code });
  const sqliteError = (errcode: number) =>
    Object.assign(new Error("sqlite said so"), { code: "ERR_SQLITE_ERROR", errcode });

  it("a server shutting down, restarting, full, paused or a standby: unavailable, with the kind", () => {
    const kinds = (error: unknown) => asStoreUnavailable(error)?.kind;
    assert.equal(
      kinds(pgError("57P01", "terminating connection due to administrator command")),
      "connection_lost",
    );
    assert.equal(kinds(pgError("57P03", "the database system is starting up")), "connect");
    assert.equal(kinds(pgError("53300", "sorry, too many clients already")), "full");
    assert.equal(kinds(pgError("57014", "canceling statement due to statement timeout")), "timeout");
    assert.equal(kinds(pgError("25006", "cannot execute INSERT in a read-only transaction")), "read_only");
    assert.equal(kinds(pgError("08006")), "connect");
    assert.equal(kinds(pgError("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:5432")), "connect");
    assert.equal(kinds(new Error("Connection terminated unexpectedly")), "connection_lost");
    assert.equal(kinds(new Error("Query read timeout")), "timeout");
    assert.equal(kinds(sqliteError(5)), "busy");
    assert.equal(kinds(sqliteError(5 | (2 << 8))), "busy"); // SQLITE_BUSY_SNAPSHOT
    assert.equal(kinds(sqliteError(10 | (3 << 8))), "io"); // SQLITE_IOERR_WRITE
    assert.equal(kinds(sqliteError(13)), "io"); // SQLITE_FULL
  });

  it("a query's own error stays as it is: a constraint, a syntax error, a bug", () => {
    assert.equal(asStoreUnavailable(pgError("23505", "duplicate key value")), undefined);
    assert.equal(asStoreUnavailable(pgError("42601", "syntax error")), undefined);
    assert.equal(asStoreUnavailable(sqliteError(19)), undefined); // SQLITE_CONSTRAINT
    assert.equal(asStoreUnavailable(new TypeError("x is undefined")), undefined);
    assert.equal(asStoreUnavailable(undefined), undefined);
  });

  it("says what failed without the host or the driver's words, which stay in `cause` for the log", () => {
    const cause = pgError("ECONNREFUSED", "connect ECONNREFUSED 10.1.2.3:5432");
    const fault = asStoreUnavailable(cause) as StoreUnavailableError;
    assert.ok(fault instanceof StoreUnavailableError);
    assert.doesNotMatch(fault.message, /10\.1\.2\.3|ECONNREFUSED/);
    assert.equal(fault.cause, cause);
    assert.equal(fault.retryAfterSeconds, 2);
  });
});
