import type { Kysely } from "kysely";
import type { StoreKind } from "../database.ts";
import { columnKinds } from "./column-kinds.ts";

/** The default rules as this migration creates them (later changes belong to later migrations). */
const DEFAULT_RULES = [
  {
    id: "max-releases-behind-safest",
    name: "Not too far behind the safest version",
    description:
      "Fails for each package whose version is more than maxReleases published releases (pre-releases " +
      "not counted) behind its safest version.",
    kind: "max-releases-behind-safest",
    parameters: { maxReleases: 10 },
  },
  {
    id: "no-referenced-severe-cve",
    name: "No severe CVE in a referenced package",
    description:
      "Fails for each CVE of severity minSeverity or above that affects a package the application " +
      "refers to (at least one of its external objects has a referring application object).",
    kind: "no-referenced-severe-cve",
    parameters: { minSeverity: "HIGH" },
  },
  {
    id: "no-unfixable-vulnerability",
    name: "No vulnerability without a fix",
    description: "Fails for each vulnerable package that has no safer version to upgrade to.",
    kind: "no-unfixable-vulnerability",
    parameters: {},
  },
];

/** A default rule's row as this migration inserts it (its type stands for the table of this version). */
const defaultRuleRow = (rule: (typeof DEFAULT_RULES)[number], now: string) => ({
  ...rule,
  enabled: 1,
  parameters: JSON.stringify(rule.parameters),
  updated_at: now,
  updated_by: null as string | null,
});

/** Quality gate rules: one row per rule, parameters as a JSON object, the defaults enabled. */
export function gateRulesMigration(kind: StoreKind) {
  const { sortText } = columnKinds(kind);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("gate_rules")
        .addColumn("id", "text", (c) => sortText(c).primaryKey())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("description", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("enabled", "integer", (c) => c.notNull().defaultTo(1))
        .addColumn("parameters", "text", (c) => c.notNull().defaultTo("{}"))
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addColumn("updated_by", "text")
        .execute();
      const now = new Date().toISOString();
      await (db as unknown as Kysely<{ gate_rules: ReturnType<typeof defaultRuleRow> }>)
        .insertInto("gate_rules")
        .values(DEFAULT_RULES.map((rule) => defaultRuleRow(rule, now)))
        .execute();
    },
  };
}
