import { execFileSync } from "node:child_process";
import {
  chownSync,
  closeSync,
  existsSync,
  fchownSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "./service.ts";

/**
 * A PostgreSQL server of the test's own (initdb in a temporary directory, its own loopback port), for the
 * tests that restart, kill, pause or fail over a database: the shared server of TEST_POSTGRES_URL is never
 * touched. PostgreSQL refuses to run as root: under root (`.ci/run`) the server runs as the `postgres`
 * user Debian's package creates, its directories handed to that user; otherwise as the current user.
 */

/** Debian's binaries (`/usr/lib/postgresql/<major>/bin`, the highest installed), or IMAGING_TEST_PG_BIN. */
export function postgresBinDir(): string {
  if (process.env.IMAGING_TEST_PG_BIN) return process.env.IMAGING_TEST_PG_BIN;
  const root = "/usr/lib/postgresql";
  const majors = existsSync(root)
    ? readdirSync(root)
        .filter((name) => existsSync(join(root, name, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (majors.length === 0) {
    throw new Error(
      "No PostgreSQL server binaries in /usr/lib/postgresql/*/bin: run 'bash .ci/run' (apt-get install postgresql) or set IMAGING_TEST_PG_BIN",
    );
  }
  return join(root, majors[0] as string, "bin");
}

/** The uid and gid the server runs as: `postgres` under root, else ours (undefined: no switch). */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((entry) => entry.startsWith("postgres:"));
  const [, , uid, gid] = line?.split(":") ?? [];
  if (!uid || !gid) throw new Error("running as root, and no 'postgres' user to run PostgreSQL as");
  return { uid: Number(uid), gid: Number(gid) };
}

/** The role the service uses: an ordinary role (no superuser), as in production. */
export const SERVICE_ROLE = { user: "imaging", password: "imaging" };
/** The server's superuser (the tests' administration: terminating backends, promoting). */
const ADMIN_ROLE = "admin";

export interface PostgresServer {
  port: number;
  dataDir: string;
  /** A URL of `database` as the service's role. */
  url(database?: string): string;
  /** A URL as the superuser. */
  adminUrl(database?: string): string;
  /** `pg_ctl restart -m <mode>`: fast (clean shutdown) or immediate (a crash, WAL replay at start). */
  restart(mode: "fast" | "immediate"): Promise<void>;
  stop(mode?: "fast" | "immediate"): Promise<void>;
  start(): Promise<void>;
  /** SIGSTOP to the postmaster and every backend: the server freezes, its sockets stay open. */
  pause(): void;
  resume(): void;
  /** `pg_terminate_backend` of every connection of `database` but the caller's; resolves their number. */
  terminateBackends(database: string): Promise<number>;
  /**
   * A streaming standby of this server (pg_basebackup -R), on its own port, running. Synchronous: this
   * server then acknowledges a commit once the standby has it, so a failover loses no acknowledged write.
   */
  createStandby(options?: { synchronous?: boolean; port?: number }): Promise<PostgresServer>;
  /** `pg_ctl promote`: a standby becomes a primary. */
  promote(): Promise<void>;
  /** Whether the server answers as a primary (not in recovery). */
  isPrimary(): Promise<boolean>;
  log(): string;
  /** Stops the server (immediate) and deletes its directory. */
  destroy(): Promise<void>;
}

interface ServerOptions {
  /** postgresql.conf settings beyond the defaults below. */
  settings?: Record<string, string | number>;
}

/**
 * Runs a PostgreSQL program as the server's user, resolving its output; throws with it on failure. The
 * output goes through a file, not a pipe: `pg_ctl start` leaves the server running with its descriptors,
 * and a pipe would keep the caller waiting for the server's end.
 */
function runAs(program: string, args: string[], user = serverUser()): string {
  const outDir = mkdtempSync(join(tmpdir(), "imaging-pg-out-"));
  const outFile = join(outDir, "out");
  const out = openSync(outFile, "w");
  if (user) fchownSync(out, user.uid, user.gid);
  try {
    execFileSync(join(postgresBinDir(), program), args, {
      stdio: ["ignore", out, out],
      ...(user ? { uid: user.uid, gid: user.gid } : {}),
      // The server's user cannot enter root's working directory.
      cwd: tmpdir(),
      env: { ...process.env, LC_ALL: "C" },
      timeout: 120_000,
    });
    return readFileSync(outFile, "utf8");
  } catch (error) {
    const text = existsSync(outFile) ? readFileSync(outFile, "utf8") : "";
    throw new Error(`${program} ${args.join(" ")} failed: ${text || (error as Error).message}`);
  } finally {
    closeSync(out);
    rmSync(outDir, { recursive: true, force: true });
  }
}

/** A directory the server's user owns. */
function ownedDirectory(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const user = serverUser();
  if (user) chownSync(dir, user.uid, user.gid);
  return dir;
}

function configLines(port: number, dir: string, settings: Record<string, string | number>): string {
  const all: Record<string, string | number> = {
    listen_addresses: "'127.0.0.1'",
    port,
    unix_socket_directories: `'${dir}'`,
    // A test server: the WAL reaches the OS at each commit (a killed server loses nothing acknowledged),
    // it is not forced to disk (an OS crash is not among the faults).
    fsync: "off",
    full_page_writes: "off",
    max_connections: 60,
    shared_buffers: "32MB",
    wal_level: "replica",
    max_wal_senders: 4,
    hot_standby: "on",
    log_min_messages: "warning",
    ...settings,
  };
  return `${Object.entries(all)
    .map(([key, value]) => `${key} = ${value}`)
    .join("\n")}\n`;
}

/** A fresh cluster (initdb), with the service's role and a database it owns, started. */
export async function startPostgresServer(options: ServerOptions = {}): Promise<PostgresServer> {
  const root = ownedDirectory("imaging-pg-");
  const dataDir = join(root, "data");
  runAs("initdb", [
    "-D",
    dataDir,
    "-U",
    ADMIN_ROLE,
    "--auth=trust",
    "--no-sync",
    "--encoding=UTF8",
    "--locale=C",
  ]);
  const port = await freePort();
  writeFileSync(join(dataDir, "postgresql.auto.conf"), configLines(port, root, options.settings ?? {}));
  chownToServer(join(dataDir, "postgresql.auto.conf"));
  // Replication connections from loopback (the standby's pg_basebackup and walreceiver).
  writeFileSync(
    join(dataDir, "pg_hba.conf"),
    "local all all trust\nhost all all 127.0.0.1/32 trust\nhost replication all 127.0.0.1/32 trust\n",
  );
  chownToServer(join(dataDir, "pg_hba.conf"));
  const server = serverAt(root, dataDir, port);
  await server.start();
  const admin = new pg.Client({ connectionString: server.adminUrl("postgres") });
  await admin.connect();
  try {
    await admin.query(`create role ${SERVICE_ROLE.user} login createdb password '${SERVICE_ROLE.password}'`);
    await admin.query(`create database imaging owner ${SERVICE_ROLE.user}`);
  } finally {
    await admin.end();
  }
  return server;
}

function chownToServer(file: string): void {
  const user = serverUser();
  if (user) chownSync(file, user.uid, user.gid);
}

function serverAt(root: string, dataDir: string, port: number): PostgresServer {
  const logFile = join(root, "server.log");
  const pgCtl = (...args: string[]) =>
    runAs("pg_ctl", ["-D", dataDir, "-l", logFile, "-w", "-t", "60", ...args]);
  const postmasterPid = (): number => {
    const text = readFileSync(join(dataDir, "postmaster.pid"), "utf8");
    return Number(text.split("\n")[0]);
  };
  /** The postmaster and its children (backends, background workers), from /proc. */
  const serverPids = (): number[] => {
    const parent = postmasterPid();
    const children = readdirSync("/proc")
      .filter((entry) => /^\d+$/.test(entry))
      .filter((entry) => {
        try {
          const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
          // pid (comm) state ppid ...: comm may hold spaces, so read after its closing parenthesis.
          const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
          return ppid === parent;
        } catch {
          return false;
        }
      })
      .map(Number);
    return [parent, ...children];
  };
  /** A signal to one of them; a backend that exited since the listing (ESRCH) needs none. */
  const signal = (pid: number, name: NodeJS.Signals) => {
    try {
      process.kill(pid, name);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ESRCH" || pid === postmasterPid()) throw error;
    }
  };
  const url = (user: string, database: string, password?: string) =>
    `postgres://${user}${password ? `:${password}` : ""}@127.0.0.1:${port}/${database}`;
  const query = async <T extends pg.QueryResultRow>(sql: string, params: unknown[] = []) => {
    const client = new pg.Client({ connectionString: url(ADMIN_ROLE, "postgres") });
    await client.connect();
    try {
      return (await client.query<T>(sql, params)).rows;
    } finally {
      await client.end();
    }
  };
  const server: PostgresServer = {
    port,
    dataDir,
    url: (database = "imaging") => url(SERVICE_ROLE.user, database, SERVICE_ROLE.password),
    adminUrl: (database = "postgres") => url(ADMIN_ROLE, database),
    async restart(mode) {
      pgCtl("restart", "-m", mode);
    },
    async stop(mode = "fast") {
      pgCtl("stop", "-m", mode);
    },
    async start() {
      pgCtl("start");
    },
    pause() {
      for (const pid of serverPids()) signal(pid, "SIGSTOP");
    },
    resume() {
      for (const pid of serverPids().reverse()) signal(pid, "SIGCONT");
    },
    async terminateBackends(database) {
      const rows = await query<{ terminated: boolean }>(
        "select pg_terminate_backend(pid) as terminated from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()",
        [database],
      );
      return rows.filter((row) => row.terminated).length;
    },
    async createStandby(options = {}) {
      const standbyRoot = ownedDirectory("imaging-pg-standby-");
      const standbyData = join(standbyRoot, "data");
      runAs("pg_basebackup", [
        "-h",
        "127.0.0.1",
        "-p",
        String(port),
        "-U",
        ADMIN_ROLE,
        "-D",
        standbyData,
        "-R",
        "--checkpoint=fast",
        "--no-sync",
      ]);
      const standbyPort = options.port ?? (await freePort());
      // The copy carries the primary's settings: the standby gets its own port and socket directory.
      writeFileSync(
        join(standbyData, "postgresql.auto.conf"),
        `${readFileSync(join(standbyData, "postgresql.auto.conf"), "utf8")}port = ${standbyPort}\nunix_socket_directories = '${standbyRoot}'\nsynchronous_standby_names = ''\n`,
      );
      chownToServer(join(standbyData, "postgresql.auto.conf"));
      const standby = serverAt(standbyRoot, standbyData, standbyPort);
      await standby.start();
      if (options.synchronous) {
        await query("alter system set synchronous_standby_names = '*'");
        await query("select pg_reload_conf()");
        // Synchronous once the standby streams and the primary counts it as such.
        const until = Date.now() + 30_000;
        for (;;) {
          const rows = await query<{ sync_state: string }>("select sync_state from pg_stat_replication");
          if (rows.some((row) => row.sync_state === "sync")) break;
          if (Date.now() > until) throw new Error(`the standby never became synchronous: ${standby.log()}`);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      return standby;
    },
    async promote() {
      pgCtl("promote");
    },
    async isPrimary() {
      const [row] = await query<{ recovery: boolean }>("select pg_is_in_recovery() as recovery");
      return row?.recovery === false;
    },
    log: () => (existsSync(logFile) ? readFileSync(logFile, "utf8") : ""),
    async destroy() {
      if (existsSync(join(dataDir, "postmaster.pid"))) {
        try {
          server.resume();
        } catch {
          // already gone
        }
        try {
          pgCtl("stop", "-m", "immediate");
        } catch {
          // already stopped
        }
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
  return server;
}
