import { Command, CommanderError } from "commander";
import { causeText, StoreUnavailableError } from "../store/store-errors.ts";
import { VERSION } from "../version.ts";
import { type CliIo, processCliIo, withCliIo } from "./io.ts";
import { CliError } from "./output.ts";

type Register = (program: Command) => void;

/**
 * The commands, in help order, each loaded only when needed: a command's module pulls in what it runs
 * (the service, oidc-provider, Fastify, the MCP SDK, the Keycloak admin client, the store), which takes
 * most of a second, so `imaging --version` loads none and `imaging config show` only its own.
 */
const COMMANDS: readonly (readonly [name: string, load: () => Promise<Register>])[] = [
  ["start", async () => (await import("./commands/start.ts")).registerStart],
  ["demo", async () => (await import("./commands/demo.ts")).registerDemo],
  ["advisories", async () => (await import("./commands/advisories.ts")).registerAdvisories],
  ["scan", async () => (await import("./commands/scan.ts")).registerScan],
  ["export", async () => (await import("./commands/export.ts")).registerExport],
  ["api-keys", async () => (await import("./commands/api-keys.ts")).registerApiKeys],
  ["config", async () => (await import("./commands/config.ts")).registerConfig],
  ["client-config", async () => (await import("./commands/client-config.ts")).registerClientConfig],
  ["idp", async () => (await import("./commands/idp.ts")).registerIdp],
  ["cimd", async () => (await import("./commands/cimd.ts")).registerCimd],
  ["users", async () => (await import("./commands/users.ts")).registerUsers],
  ["clients", async () => (await import("./commands/clients.ts")).registerClients],
  ["doctor", async () => (await import("./commands/doctor.ts")).registerDoctor],
];

/** The commands an invocation needs: the one named, none for the version, all for help or a mistake. */
function commandsFor(args: readonly string[]): typeof COMMANDS {
  if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) return [];
  const named = COMMANDS.find(([name]) => name === args[0]);
  return named ? [named] : COMMANDS;
}

/**
 * Runs one `imaging` invocation (the arguments after the program name) with the given streams and
 * environment, and resolves with its exit code. main.ts runs it on the process; tests run commands here
 * in their own process, with what the command writes captured.
 */
export async function run(args: readonly string[], io: CliIo = processCliIo()): Promise<number> {
  return withCliIo(io, async () => {
    const program = new Command()
      .name("imaging")
      .description("imaging-services: OAuth gateway for MCP servers and application-analysis insights")
      .version(VERSION)
      .showHelpAfterError("(run with --help for usage)")
      .configureOutput({
        writeOut: (text) => io.stdout.write(text),
        writeErr: (text) => io.stderr.write(text),
      })
      .exitOverride();
    for (const register of await Promise.all(commandsFor(args).map(([, load]) => load()))) {
      register(program);
    }
    try {
      await program.parseAsync(args, { from: "user" });
    } catch (error) {
      if (error instanceof CommanderError) {
        const flag = /unknown option '([^']+)'/.exec(error.message)?.[1];
        const hint =
          flag && error.code === "commander.unknownOption" ? dashDashHint(program, args, flag) : undefined;
        if (hint) io.stderr.write(`${hint}\n`);
        io.exitCode = error.exitCode;
      } else if (error instanceof CliError) {
        io.stderr.write(`imaging: ${error.message}\n`);
        io.exitCode = error.exitCode;
      } else if (error instanceof StoreUnavailableError) {
        // The operator runs the command: the server's own reason ("password authentication failed for user
        // …", a refused host) says what to fix. Driver messages never carry the URL's password.
        io.stderr.write(`imaging: ${error.message}: ${causeText(error)}\n`);
        io.exitCode = 1;
      } else {
        // Configuration, ingest and scan-input errors carry a message written for the user, as do the others.
        const message = error instanceof Error ? error.message : String(error);
        io.stderr.write(`imaging: ${message}\n`);
        io.exitCode = 1;
      }
    }
    return io.exitCode;
  });
}

/**
 * For a command taking an argument (a client id, a key id, a user name), what to type when the value
 * starts with `-` and was read as an option: the value after `--`, which ends the options.
 */
function dashDashHint(program: Command, args: readonly string[], value: string): string | undefined {
  const words: string[] = [];
  let command: Command | undefined = program;
  for (const arg of args) {
    const sub: Command | undefined = command.commands.find((c) => c.name() === arg);
    if (!sub) break;
    words.push(arg);
    command = sub;
  }
  if (words.length === 0 || command.registeredArguments.length === 0) return undefined;
  return `(a value that starts with '-' goes after '--', which ends the options: imaging ${words.join(" ")} [options] -- ${value})`;
}
