import { resolve } from "node:path";
import type { Command } from "commander";
import { KEY_RETENTION_SECONDS } from "../../idp/provider/realm.ts";
import { rotateSigningKeys } from "../../idp/provider/signing-keys.ts";
import { secretVault } from "../../idp/secrets-key.ts";
import { settingsFrom, withStore } from "../context.ts";
import { emit } from "../output.ts";

export function registerIdp(program: Command): void {
  const idp = program.command("idp").description("The embedded identity provider");
  idp
    .command("rotate-keys")
    .description(
      "Make a new token signing key current; the previous one stays published until the tokens it signed expire",
    )
    .option("--data-dir <dir>", "data directory (default: IMAGING_DATA_DIR, else ./data)")
    .option("--config <file>", "JSON config file (default: IMAGING_CONFIG)")
    .option("--json", "print JSON")
    .action(async (options: { dataDir?: string; config?: string; json?: boolean }) => {
      const settings = settingsFrom(options);
      const dataDir = resolve(settings.dataDir);
      const result = await withStore(options, (store) =>
        rotateSigningKeys(secretVault(store.db, { ...settings, dataDir }), KEY_RETENTION_SECONDS, {
          importFrom: dataDir,
        }),
      );
      emit(Boolean(options.json), result, () =>
        [
          `Signing key ${result.current} is now current (in the store).`,
          ...result.retired.map((r) => `Previous key ${r.kid} stays published until ${r.publishedUntil}.`),
          `Key ${result.next} is published for the next rotation.`,
          "Every running replica picks the change up within KEY_POLL_INTERVAL (2 s by default).",
        ].join("\n"),
      );
    });
}
