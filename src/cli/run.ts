import { Command, CommanderError } from "commander";
import { ConfigError } from "../config/load-config.ts";
import { ScanInputError } from "../scanner/inventory.ts";
import { IngestError } from "../store/ingest.ts";
import { VERSION } from "../version.ts";
import { registerAdvisories } from "./commands/advisories.ts";
import { registerApiKeys } from "./commands/api-keys.ts";
import { registerCimd } from "./commands/cimd.ts";
import { registerClientConfig } from "./commands/client-config.ts";
import { registerClients } from "./commands/clients.ts";
import { registerConfig } from "./commands/config.ts";
import { registerDemo } from "./commands/demo.ts";
import { registerDoctor } from "./commands/doctor.ts";
import { registerExport } from "./commands/export.ts";
import { registerIdp } from "./commands/idp.ts";
import { registerScan } from "./commands/scan.ts";
import { registerStart } from "./commands/start.ts";
import { registerUsers } from "./commands/users.ts";
import { CliError } from "./output.ts";

const program = new Command()
  .name("imaging")
  .description("imaging-services: OAuth gateway for MCP servers and application-analysis insights")
  .version(VERSION)
  .showHelpAfterError("(run with --help for usage)")
  .exitOverride();

registerStart(program);
registerDemo(program);
registerAdvisories(program);
registerScan(program);
registerExport(program);
registerApiKeys(program);
registerConfig(program);
registerClientConfig(program);
registerIdp(program);
registerCimd(program);
registerUsers(program);
registerClients(program);
registerDoctor(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    process.exitCode = error.exitCode;
  } else if (error instanceof CliError) {
    process.stderr.write(`imaging: ${error.message}\n`);
    process.exitCode = error.exitCode;
  } else if (
    error instanceof ConfigError ||
    error instanceof IngestError ||
    error instanceof ScanInputError
  ) {
    process.stderr.write(`imaging: ${error.message}\n`);
    process.exitCode = 1;
  } else {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`imaging: ${message}\n`);
    process.exitCode = 1;
  }
}
