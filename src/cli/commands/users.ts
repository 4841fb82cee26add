import type { Command } from "commander";
import { generatePassword, passwordProblem } from "../../idp/passwords.ts";
import {
  createUser,
  grantUser,
  listUsers,
  ROLES,
  type Role,
  removeUser,
  setPassword,
  UserError,
  type UserRecord,
  usernameProblem,
} from "../../store/users.ts";
import { withStore } from "../context.ts";
import { CliError, emit, table } from "../output.ts";

const collect = (value: string, previous: string[] = []) => [...previous, value];

interface CommonOptions {
  dataDir?: string;
  config?: string;
  json?: boolean;
}

interface PasswordOptions extends CommonOptions {
  passwordStdin?: boolean;
}

interface GrantOptions extends CommonOptions {
  role: string;
  app?: string[];
}

export function registerUsers(program: Command): void {
  const users = program
    .command("users")
    .description("Users of the embedded identity provider (who signs in, their role and applications)");
  const common = (c: Command) =>
    c
      .option("--data-dir <dir>", "data directory (default: IMAGING_DATA_DIR, else ./data)")
      .option("--config <file>", "JSON config file")
      .option("--json", "print JSON");
  const grantOptions = (c: Command) =>
    c
      .requiredOption("--role <role>", `role: ${ROLES.join(" or ")}`)
      .option("--app <name>", "application the user may read (repeatable; admins read all)", collect);
  const stdinOption = (c: Command) =>
    c.option(
      "--password-stdin",
      "read the password from standard input (else one is generated and shown once)",
    );

  common(
    stdinOption(
      grantOptions(
        users
          .command("add")
          .description("Create a user; the password is read from stdin or generated and shown once")
          .argument("<user>", "user name: letters, digits, '.', '_', '-', '@' (unique ignoring case)"),
      ),
    ),
  ).action(async (username: string, options: GrantOptions & PasswordOptions) => {
    checkUsername(username);
    const role = checkRole(options.role);
    const { password, generated } = await obtainPassword(options);
    const user = await withStore(options, (store) =>
      createUser(store.db, { username, password, role, applications: options.app ?? [] }).catch(rethrow),
    );
    emit(Boolean(options.json), generated ? { ...user, generatedPassword: password } : user, () =>
      [`User ${user.username} created (${describeRights(user)})`, ...showGenerated(generated, password)].join(
        "\n",
      ),
    );
  });

  common(users.command("list").description("List users (never their password hashes)")).action(
    async (options: CommonOptions) => {
      const list = await withStore(options, (store) => listUsers(store.db));
      emit(Boolean(options.json), list, () =>
        table(
          ["USER", "ROLES", "APPLICATIONS", "CREATED", "DISABLED"],
          list.map((u) => [
            u.username,
            u.roles.join(","),
            u.roles.includes("admin") ? "(all)" : u.applications.join(",") || "-",
            u.createdAt,
            u.disabled ? "yes" : "no",
          ]),
        ),
      );
    },
  );

  common(
    users
      .command("remove")
      .description("Remove a user: they can no longer sign in")
      .argument("<user>", "user name (any case)"),
  ).action(async (username: string, options: CommonOptions) => {
    const removed = await withStore(options, (store) => removeUser(store.db, username));
    if (!removed) throw unknownUser(username);
    emit(Boolean(options.json), { username, removed: true }, () => `User ${username} removed`);
  });

  common(
    stdinOption(
      users
        .command("passwd")
        .description("Set a user's password: read from stdin or generated and shown once")
        .argument("<user>", "user name (any case)"),
    ),
  ).action(async (username: string, options: PasswordOptions) => {
    const { password, generated } = await obtainPassword(options);
    const user = await withStore(options, (store) =>
      setPassword(store.db, username, password).catch(rethrow),
    );
    const result = { username: user.username, passwordChanged: true };
    emit(Boolean(options.json), generated ? { ...result, generatedPassword: password } : result, () =>
      [`Password of ${user.username} changed`, ...showGenerated(generated, password)].join("\n"),
    );
  });

  common(
    grantOptions(
      users
        .command("grant")
        .description("Replace a user's role and set the applications they may read")
        .argument("<user>", "user name (any case)"),
    ),
  ).action(async (username: string, options: GrantOptions) => {
    const role = checkRole(options.role);
    const user = await withStore(options, (store) =>
      grantUser(store.db, username, { role, applications: options.app ?? [] }).catch(rethrow),
    );
    emit(Boolean(options.json), user, () => `User ${user.username} is now ${describeRights(user)}`);
  });
}

function checkRole(role: string): Role {
  if (!ROLES.includes(role as Role))
    throw new CliError(`--role must be ${ROLES.join(" or ")}, got '${role}'`, 2);
  return role as Role;
}

function checkUsername(username: string): void {
  const problem = usernameProblem(username);
  if (problem) throw new CliError(problem, 2);
}

async function obtainPassword(options: PasswordOptions): Promise<{ password: string; generated: boolean }> {
  if (!options.passwordStdin) return { password: generatePassword(), generated: true };
  const password = await readPasswordFromStdin();
  const problem = passwordProblem(password);
  if (problem) throw new CliError(problem, 2);
  return { password, generated: false };
}

/** The whole of standard input, without its final line break; one line only. */
async function readPasswordFromStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "");
  if (text === "") throw new CliError("--password-stdin: no password on standard input", 2);
  if (/[\r\n]/.test(text)) throw new CliError("--password-stdin: the password must be a single line", 2);
  return text;
}

function showGenerated(generated: boolean, password: string): string[] {
  if (!generated) return [];
  return ["Generated password: copy it now, it is not shown again:", "", `  ${password}`];
}

function describeRights(user: UserRecord): string {
  if (user.roles.includes("admin")) return "admin: all applications";
  return `${user.roles.join(", ")}: ${user.applications.join(", ") || "no application"}`;
}

function unknownUser(username: string): CliError {
  return new CliError(`No user named '${username}' (see: imaging users list)`);
}

/** Store refusals become readable errors: bad input exits with 2, unknown or duplicate user with 1. */
function rethrow(error: unknown): never {
  if (error instanceof UserError) {
    const notFoundOrTaken = error.code === "unknown" || error.code === "duplicate";
    throw new CliError(error.message, notFoundOrTaken ? 1 : 2);
  }
  throw error;
}
