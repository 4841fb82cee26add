import type { Command } from "commander";
import { ROLES, type Role } from "../../contracts/platform.ts";
import { createApiKey } from "../../domain/api-keys.ts";
import { listApiKeys, revokeApiKey } from "../../store/api-keys.ts";
import { withStore } from "../context.ts";
import { CliError, columnsTable, emit } from "../output.ts";

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function registerApiKeys(program: Command): void {
  const keys = program
    .command("api-keys")
    .description("API keys for scripts calling the REST API (X-API-KEY)");
  const common = (c: Command) =>
    c
      .option("--data-dir <dir>", "data directory (default: IMAGING_DATA_DIR, else ./data)")
      .option("--config <file>", "JSON config file")
      .option("--json", "print JSON");

  common(
    keys
      .command("create")
      .description("Create a key; it is shown once and only its hash is stored")
      .requiredOption("--user <user>", "who the key acts for")
      .option("--role <role>", `role: ${ROLES.join(" or ")}`, "viewer")
      .option("--app <name>", "application a viewer may read (repeatable)", collect),
  ).action(
    async (options: { user: string; role: string; app?: string[]; json?: boolean; dataDir?: string }) => {
      if (!ROLES.includes(options.role as Role)) {
        throw new CliError(`--role must be ${ROLES.join(" or ")}, got '${options.role}'`, 2);
      }
      if (options.user.trim() === "") throw new CliError("--user must not be empty", 2);
      const created = await withStore(options, (store) =>
        createApiKey(store.db, {
          user: options.user,
          role: options.role as Role,
          applications: options.app ?? [],
        }),
      );
      emit(Boolean(options.json), created, () =>
        [
          `API key ${created.id} created for ${created.user} (${created.role}${
            created.role === "viewer" ? `: ${created.applications.join(", ") || "no application"}` : ""
          })`,
          "Copy it now, it is not shown again:",
          "",
          `  ${created.key}`,
          "",
          "Use it as the X-API-KEY header of REST API calls.",
        ].join("\n"),
      );
    },
  );

  common(keys.command("list").description("List keys (never their secrets)")).action(
    async (options: { json?: boolean; dataDir?: string }) => {
      const list = await withStore(options, (store) => listApiKeys(store.db));
      emit(Boolean(options.json), list, () =>
        columnsTable(list, {
          ID: (k) => k.id,
          USER: (k) => k.user,
          ROLE: (k) => k.role,
          APPLICATIONS: (k) => (k.role === "admin" ? "(all)" : k.applications.join(",") || "-"),
          CREATED: (k) => k.createdAt,
          REVOKED: (k) => k.revokedAt ?? "-",
        }),
      );
    },
  );

  common(
    keys.command("revoke").description("Revoke a key: it stops working at once").argument("<id>", "key id"),
  ).action(async (id: string, options: { json?: boolean; dataDir?: string }) => {
    const found = await withStore(options, (store) => revokeApiKey(store.db, id));
    if (!found) throw new CliError(`No API key with id '${id}' (see: imaging api-keys list)`);
    emit(Boolean(options.json), { id, revoked: true }, () => `API key ${id} revoked`);
  });
}
