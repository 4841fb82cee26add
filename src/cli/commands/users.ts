import type { Command } from "commander";
import { ROLES, type Role } from "../../contracts/platform.ts";
import { generatePassword, passwordProblem } from "../../domain/passwords.ts";
import { UserError, usernameProblem } from "../../domain/users.ts";
import type { UserProfileDetails } from "../../idp/user-directory.ts";
import type { UserRecord } from "../../store/users.ts";
import { idpConfigFrom, withUserDirectory } from "../idp-context.ts";
import { cliIo } from "../io.ts";
import { CliError, columnsTable, emit } from "../output.ts";

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

interface AddOptions extends GrantOptions, PasswordOptions {
  email?: string;
  firstName?: string;
  lastName?: string;
}

export function registerUsers(program: Command): void {
  const users = program
    .command("users")
    .description(
      "Users of the identity provider (who signs in, their role and applications): in the platform store, " +
        "or in Keycloak's realm with IDP=keycloak",
    );
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
          .argument("<user>", "user name: letters, digits, '.', '_', '-', '@' (unique ignoring case)")
          .option("--email <address>", "e-mail address (IDP=keycloak only; its user profile requires it)")
          .option("--first-name <name>", "first name (IDP=keycloak only; its user profile requires it)")
          .option("--last-name <name>", "last name (IDP=keycloak only; its user profile requires it)"),
      ),
    ),
  ).action(async (username: string, options: AddOptions) => {
    checkUsername(username);
    const role = checkRole(options.role);
    const profile = await profileDetails(options);
    const { password, generated } = await obtainPassword(options);
    const { missingDetails = [], ...user } = await withUserDirectory(options, (directory) =>
      directory.create({ username, password, role, applications: options.app ?? [], profile }),
    ).catch(rethrow);
    emit(Boolean(options.json), generated ? { ...user, generatedPassword: password } : user, () =>
      [
        `User ${user.username} created (${describeRights(user)})`,
        ...showGenerated(generated, password),
        ...showMissing(user.username, missingDetails),
      ].join("\n"),
    );
  });

  common(users.command("list").description("List users (never their password hashes)")).action(
    async (options: CommonOptions) => {
      const list = await withUserDirectory(options, (directory) => directory.list());
      emit(Boolean(options.json), list, () =>
        columnsTable(list, {
          USER: (u) => u.username,
          ROLES: (u) => u.roles.join(","),
          APPLICATIONS: (u) => (u.roles.includes("admin") ? "(all)" : u.applications.join(",") || "-"),
          CREATED: (u) => u.createdAt,
          DISABLED: (u) => (u.disabled ? "yes" : "no"),
        }),
      );
    },
  );

  common(
    users
      .command("remove")
      .description("Remove a user: they can no longer sign in")
      .argument("<user>", "user name (any case)"),
  ).action(async (username: string, options: CommonOptions) => {
    const removed = await withUserDirectory(options, (directory) => directory.remove(username));
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
    const user = await withUserDirectory(options, (directory) =>
      directory.setPassword(username, password),
    ).catch(rethrow);
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
    const user = await withUserDirectory(options, (directory) =>
      directory.grant(username, { role, applications: options.app ?? [] }),
    ).catch(rethrow);
    emit(Boolean(options.json), user, () => `User ${user.username} is now ${describeRights(user)}`);
  });
}

function checkRole(role: string): Role {
  if (!ROLES.includes(role as Role))
    throw new CliError(`--role must be ${ROLES.join(" or ")}, got '${role}'`, 2);
  return role as Role;
}

/** --email, --first-name and --last-name: Keycloak's user profile has them, the embedded IdP does not. */
async function profileDetails(options: AddOptions): Promise<UserProfileDetails | undefined> {
  const given = (
    [
      ["--email", options.email],
      ["--first-name", options.firstName],
      ["--last-name", options.lastName],
    ] as const
  ).filter(([, value]) => value !== undefined);
  if (given.length === 0) return undefined;
  const { idp } = await idpConfigFrom(options);
  if (idp !== "keycloak")
    throw new CliError(
      `${given.map(([flag]) => flag).join(", ")}: only with IDP=keycloak (the embedded identity provider keeps no e-mail or name)`,
      2,
    );
  for (const [flag, value] of given)
    if ((value as string).trim() === "") throw new CliError(`${flag} must not be empty`, 2);
  return {
    email: options.email?.trim(),
    firstName: options.firstName?.trim(),
    lastName: options.lastName?.trim(),
  };
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
  for await (const chunk of cliIo().stdin) chunks.push(Buffer.from(chunk));
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

const DETAIL_FLAGS: Record<string, [label: string, flag: string]> = {
  email: ["e-mail", "--email"],
  firstName: ["first name", "--first-name"],
  lastName: ["last name", "--last-name"],
};

/** Keycloak asks at the first sign-in for what its user profile requires and the user lacks. */
function showMissing(username: string, missing: readonly string[]): string[] {
  if (missing.length === 0) return [];
  const labels = missing.map((name) => DETAIL_FLAGS[name]?.[0] ?? name);
  const flags = missing.flatMap((name) => DETAIL_FLAGS[name]?.[1] ?? []);
  const list = labels.length > 1 ? `${labels.slice(0, -1).join(", ")} and ${labels.at(-1)}` : labels[0];
  const hint = flags.length > 0 ? ` (give ${flags.join(", ")} to avoid it)` : "";
  return ["", `Note: Keycloak asks ${username} for ${list} at the first sign-in${hint}`];
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
