import { cpSync, existsSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..", "..");

/** The migration the upgraded build adds: after every real one, whatever lands next. */
export const UPGRADE_MIGRATION = "999-rolling-upgrade-check";

export interface UpgradeBuild {
  /** Its `imaging` entry, for spawnService / ReplicaSet.restart. */
  cli: string;
  remove(): void;
}

/**
 * "The next release" for a rolling upgrade: a copy of this checkout's src/ (its own code, run as the
 * service runs it) with one more migration, as a release that changes the schema brings. The migration
 * follows the rule the store's migrations follow (src/store/database.ts): the previous release keeps
 * running on the new schema. It adds a column to a table the replicas write under load (`api_keys`,
 * an ALTER TABLE that takes its lock while they insert) and a table with a row, so the test can see it
 * applied once.
 *
 * The copy's database.ts becomes database-released.ts, and a new database.ts registers the migration in
 * its list and re-exports it: no line of the released code changes. node_modules and the console's build
 * are linked, not copied.
 */
export function createUpgradeBuild(): UpgradeBuild {
  const dir = mkdtempSync(join(tmpdir(), "imaging-upgrade-build-"));
  cpSync(join(ROOT, "src"), join(dir, "src"), { recursive: true });
  cpSync(join(ROOT, "package.json"), join(dir, "package.json"));
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  if (existsSync(join(ROOT, "dist"))) symlinkSync(join(ROOT, "dist"), join(dir, "dist"));
  const store = join(dir, "src", "store");
  renameSync(join(store, "database.ts"), join(store, "database-released.ts"));
  writeFileSync(
    join(store, "migrations", `${UPGRADE_MIGRATION}.ts`),
    `import { type Kysely, sql } from "kysely";

/** The upgrade test's schema change: a column on a table written under load, and a new table. */
export function rollingUpgradeCheckMigration() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable("api_keys").addColumn("upgrade_note", "text").execute();
      await db.schema.createTable("upgrade_marker").addColumn("applied", "text").execute();
      await sql\`insert into upgrade_marker (applied) values ('once')\`.execute(db);
    },
  };
}
`,
  );
  writeFileSync(
    join(store, "database.ts"),
    `import { MIGRATIONS } from "./database-released.ts";
import { rollingUpgradeCheckMigration } from "./migrations/${UPGRADE_MIGRATION}.ts";

(MIGRATIONS as unknown as [string, () => unknown][]).push(["${UPGRADE_MIGRATION}", rollingUpgradeCheckMigration]);

export * from "./database-released.ts";
`,
  );
  return {
    cli: join(dir, "src", "cli", "main.ts"),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
