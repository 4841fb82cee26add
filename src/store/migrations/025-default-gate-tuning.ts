import { type Kysely, sql } from "kysely";

/**
 * The default quality gate tuned on the evaluation corpus (issue 30): `max-releases-behind-safest` is
 * no longer enabled out of the box. On 33 real applications and artifacts (docs/benchmarks.md, "Quality
 * gate defaults") it failed 31 at its 10 releases, and still 18 at 100: a count of releases measures a
 * package's release cadence (minimatch, type-fest, aws-sdk) more than an application's neglect. The rule
 * stays, for an administrator to enable with a threshold of their own. A rule an administrator has
 * already edited (`updated_by` set) keeps what they chose. The triggers of migration 017 bump
 * `gate_facts_generation`, so stored verdicts are evaluated again.
 */
export function defaultGateTuningMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await sql`update gate_rules set enabled = 0
        where id = 'max-releases-behind-safest' and updated_by is null`.execute(db);
    },
  };
}
