import type { Generated } from "kysely";

/**
 * History is stored as validity intervals over an application's analysis sequence numbers: a row is
 * part of analysis `seq` when from_seq <= seq < to_seq. Unchanged rows are never copied, so storage
 * grows with what changes between analyses.
 */
export const OPEN_SEQ = 2_147_483_647;

interface ApplicationsTable {
  id: Generated<number>;
  name: string;
  description: string;
  demo: number;
  created_at: string;
}

interface AnalysesTable {
  id: Generated<number>;
  application_id: number;
  seq: number;
  analyzed_at: string;
  created_at: string;
}

interface PackagesTable {
  id: Generated<number>;
  ecosystem: string;
  name: string;
  releases_per_year: number | null;
  safest_version: string | null;
}

interface PackageVersionsTable {
  id: Generated<number>;
  package_id: number;
  version: string;
  released_at: string | null;
  /** 1 when the registry lists this version, 0 for a version only seen in use. */
  published: number;
  prerelease: number;
  /** Position in the package's version order. */
  rank: number;
  safer_closest_version: string | null;
  /** Where released_at comes from (RELEASE_DATE_SOURCES); null: recorded before sources were (021). */
  released_at_source: string | null;
}

interface VulnerabilitiesTable {
  id: Generated<number>;
  cve_id: string;
  severity: string;
  cvss_score: number | null;
  summary: string;
  published_at: string | null;
}

interface VulnerabilityAliasesTable {
  alias: string;
  vulnerability_id: number;
}

interface VulnerabilityRangesTable {
  id: Generated<number>;
  vulnerability_id: number;
  package_id: number;
  introduced: string | null;
  fixed: string | null;
  last_affected: string | null;
  /** The OSV record the range came from (null for advisories loaded otherwise). */
  record_id: string | null;
  /** OSV `limit`: only versions below it. */
  limit_version: string | null;
  /** An explicitly listed affected version (OSV `versions`); the other bounds are then null. */
  listed_version: string | null;
}

/** One OSV record as last imported (see migrations/008-advisory-records.ts). */
interface AdvisoryRecordsTable {
  /** OSV id: GHSA-..., MAL-..., CVE-... */
  id: string;
  /** The advisory it contributes to; null once withdrawn or no longer about npm/Maven packages. */
  vulnerability_id: number | null;
  /** ISO 8601 UTC revision time. */
  modified: string;
  withdrawn: number;
  severity: string;
  cvss_score: number | null;
  summary: string;
  published_at: string | null;
  /** JSON array of the record's aliases. */
  aliases: string;
  /** JSON array of the record's references ({type, url}); null when stored before migration 022. */
  reference_urls: string | null;
}

/** When advisories were last imported (one row, id 1; migration 022). */
interface AdvisoryImportStateTable {
  id: number;
  imported_at: string;
}

/** Derived from ranges and versions: which versions each vulnerability affects. */
interface VersionVulnerabilitiesTable {
  package_version_id: number;
  vulnerability_id: number;
}

interface ApplicationPackagesTable {
  id: Generated<number>;
  application_id: number;
  package_version_id: number;
  /** The package's name and ecosystem (packages.name, .ecosystem): the packages list walks them in order. */
  package_name: string;
  package_ecosystem: string;
  /** The version's scope in the application (PACKAGE_SCOPES); null: unknown (migration 024). */
  scope: string | null;
  from_seq: number;
  to_seq: number;
}

export interface ExternalObjectsTable {
  id: Generated<number>;
  application_id: number;
  package_id: number;
  /** The version of the package the referring code loads (migration 024): the object belongs to it. */
  package_version_id: number;
  object_id: string;
  name: string;
  full_name: string;
  mangling: string;
  type: string;
  type_id: string;
  from_seq: number;
  to_seq: number;
}

export interface ApplicationObjectsTable {
  id: Generated<number>;
  application_id: number;
  object_id: string;
  name: string;
  full_name: string;
  type: string;
  type_id: string;
  from_seq: number;
  to_seq: number;
}

interface ObjectReferencesTable {
  id: Generated<number>;
  application_id: number;
  source_id: number;
  target_id: number;
  from_seq: number;
  to_seq: number;
}

/**
 * Read model of the occurrences page (migrations/012-occurrence-model.ts, occurrence-model.ts): one row
 * per package version in use (an application_packages interval) and vulnerability affecting it, keyed
 * in page order. Maintained by ingestAnalysis and by every recomputation of version_vulnerabilities.
 */
interface CveOccurrencesTable {
  application_id: number;
  vulnerability_id: number;
  package_name: string;
  rank: number;
  version: string;
  package_version_id: number;
  package_id: number;
  /** The version's scope in that interval (application_packages.scope; migration 024). */
  scope: string | null;
  from_seq: number;
  to_seq: number;
}

/**
 * Read model of the occurrences page: an external object over the analyses where it exists unchanged
 * and is referred to, keyed by its package version then in page order, with its JSON (the API's
 * ExternalObject) ready to parse.
 */
interface OccurrenceObjectsTable {
  application_id: number;
  package_version_id: number;
  full_name: string;
  object_id: string;
  from_seq: number;
  to_seq: number;
  doc: string;
}

/**
 * A package version's referred objects as one JSON array (the occurrence_objects rows live in
 * [from_seq, to_seq), in key order), one row per run of analyses in which that list is unchanged
 * (migration 015 on PostgreSQL, 020 on SQLite; keyed by version since 021). `docs` is the text on PostgreSQL, the deflated text on SQLite
 * (occurrence-model.ts, objectListText).
 */
interface OccurrenceObjectListsTable {
  application_id: number;
  package_version_id: number;
  from_seq: number;
  to_seq: number;
  docs: string | Uint8Array;
}

/** The inputs a package version of an analysis was read from (migration 023): a JSON array of paths. */
interface PackageSourcesTable {
  id: Generated<number>;
  application_id: number;
  package_version_id: number;
  sources: string;
  from_seq: number;
  to_seq: number;
}

/** Packages whose registry facts an upload left to look up in the background (migration 023). */
interface PackageFactsQueueTable {
  package_id: number;
  /** Epoch ms. */
  enqueued_at: number;
  attempts: number;
  /** The process that holds the claim (for logs), null when unclaimed. */
  claimed_by: string | null;
  /** Epoch ms until which `claimed_by` works on it; 0 when unclaimed. */
  claimed_until: number;
  last_error: string | null;
}

interface ApiKeysTable {
  id: string;
  secret_hash: string;
  user_name: string;
  role: string;
  applications: string;
  created_at: string;
  revoked_at: string | null;
}

export interface GateRulesTable {
  id: string;
  name: string;
  description: string;
  kind: string;
  /** 1 enabled, 0 disabled. */
  enabled: number;
  /** JSON object of the rule's parameters. */
  parameters: string;
  updated_at: string;
  updated_by: string | null;
}

/** Change log of the package versions in use (migration 017, compare.ts): +1 / -1 per analysis from 2 on. */
interface PackageChangesTable {
  application_id: number;
  seq: number;
  package_version_id: number;
  sign: number;
}

/**
 * Change log of the references (migrations/017-compare-and-gate-models.ts, compare.ts): per analysis `seq`
 * from 2 on, +1 for each reference identity it adds to analysis `seq - 1` and -1 for each it removes;
 * keyed by application then the comparison's page order. Written once, when the analysis is ingested.
 */
export interface ReferenceChangesTable {
  application_id: number;
  target_full_name: string;
  target_object_id: string;
  source_full_name: string;
  source_object_id: string;
  /** The target's package version (migration 024): a reference to another version is another identity. */
  package_version_id: number;
  seq: number;
  sign: number;
  package_name: string;
  version: string;
}

/** How many identities each analysis's log adds and removes (the totals of an adjacent comparison). */
interface ReferenceChangeTotalsTable {
  application_id: number;
  seq: number;
  added: number;
  removed: number;
}

/**
 * The reference totals between two analyses that are not adjacent (lo < hi - 1): identities live in
 * `hi` and not in `lo` (added) and the reverse (removed). Written at ingest from the previous analysis's
 * totals and what the new one changed (migration 018).
 */
interface ReferenceRangeTotalsTable {
  application_id: number;
  lo: number;
  hi: number;
  added: number;
  removed: number;
}

/** One row (id 1): bumped by triggers on every write to a table a gate evaluation reads (migration 017). */
interface GateFactsGenerationTable {
  id: number;
  value: number;
}

/** A stored gate evaluation of one analysis (gates.ts), valid while the generation is current. */
interface GateEvaluationsTable {
  application_id: number;
  seq: number;
  generation: number;
  /** JSON of the rules' outcomes and verdict; their findings are rows of gate_findings (migration 019). */
  doc: string;
}

/** The findings of a stored gate evaluation, one row each in the rule's order (migration 019). */
interface GateFindingsTable {
  application_id: number;
  seq: number;
  /** The evaluation's generation: a recomputation writes new rows beside the old until it replaces them. */
  generation: number;
  rule_id: string;
  position: number;
  /** JSON of the finding (with its package id), without its objects. */
  doc: string;
}

/** Users of the embedded identity provider (migration 003). */
export interface UsersTable {
  id: string;
  username: string;
  password_hash: string;
  /** JSON array of role names. */
  roles: string;
  /** JSON array of application names. */
  applications: string;
  created_at: string;
  updated_at: string;
  /** 1 disabled, 0 enabled. */
  disabled: number;
}

/** Tables of migration 004: CIMD client profiles, policies and the clients `imaging cimd add` created. */
export interface CimdProfilesTable {
  name: string;
  executor: string;
  allow_http_scheme: number;
  restrict_same_domain: number;
  only_allow_confidential_client: number;
  /** JSON array of strings. */
  trusted_domains: string;
  updated_at: string;
}
export interface CimdPoliciesTable {
  name: string;
  condition: string;
  uri_schemes: string;
  trusted_domains: string;
  /** JSON array of profile names ("Associated client profiles"). */
  profiles: string;
  enabled: number;
  updated_at: string;
}
export interface CimdClientsTable {
  client: string;
  client_id: string;
  profile: string;
  policy: string;
  created_at: string;
  updated_at: string;
}

/** Rows of migration 014. */
interface ConsoleSignInsTable {
  state_hash: string;
  code_verifier: string;
  nonce: string;
  return_to: string;
  expires_at: number;
}

interface ConsoleSessionsTable {
  id_hash: string;
  username: string;
  csrf_token: string;
  access_token: string;
  access_expires_at: number;
  refresh_token: string | null;
  id_token: string | null;
  created_at: number;
  expires_at: number;
}

/** Rows of migration 008. */
export interface RegisteredClientsTable {
  client_id: string;
  client_name: string | null;
  /** JSON array of strings. */
  redirect_uris: string;
  source_address: string;
  created_at: number;
  last_used_at: number | null;
}

/** Rows of migration 013: failed sign-ins per account or address (`account:<name>`, `address:<ip>`). */
export interface SignInFailuresTable {
  key: string;
  failures: number;
  last_failure: number;
  locked_until: number;
}

/** Rows of migration 021: registrations per sender in its current window. */
export interface RegistrationCountsTable {
  sender: string;
  window_start: number;
  count: number;
}

/** Rows of migration 013. */
export interface ServiceSecretsTable {
  name: string;
  /** `v1.<base64url(iv | tag | ciphertext)>`, AES-256-GCM with the row's name as associated data. */
  sealed: string;
  /** Fingerprint of the key that sealed the row, so a wrong key is told apart from a damaged row. */
  key_id: string;
  version: number;
  updated_at: number;
}

/** Rows of migration 011: the functions an advisory names as vulnerable. */
interface AffectedFunctionsTable {
  id: Generated<number>;
  record_id: string;
  vulnerability_id: number;
  package_id: number;
  function: string;
  member: string;
}

/** Rows of migration 005: one per oidc-provider model instance. */
export interface OidcPayloadsTable {
  model: string;
  /** oidcKey(the instance's id): never the id itself (a refresh token, code or session id). */
  id: string;
  /** The model's JSON, without the fields whose value is the id (see ID_FIELDS). */
  payload: string;
  grant_id: string | null;
  uid: string | null;
  /** oidcKey(the device flow's user code). */
  user_code: string | null;
  /** Epoch milliseconds; null: never expires. */
  expires_at: number | null;
  /** Epoch milliseconds of the one-time use (authorization codes, rotated refresh tokens...). */
  consumed_at: number | null;
}

export interface Database {
  applications: ApplicationsTable;
  analyses: AnalysesTable;
  packages: PackagesTable;
  package_versions: PackageVersionsTable;
  vulnerabilities: VulnerabilitiesTable;
  vulnerability_aliases: VulnerabilityAliasesTable;
  vulnerability_ranges: VulnerabilityRangesTable;
  advisory_records: AdvisoryRecordsTable;
  advisory_import_state: AdvisoryImportStateTable;
  version_vulnerabilities: VersionVulnerabilitiesTable;
  application_packages: ApplicationPackagesTable;
  package_sources: PackageSourcesTable;
  package_facts_queue: PackageFactsQueueTable;
  external_objects: ExternalObjectsTable;
  application_objects: ApplicationObjectsTable;
  object_references: ObjectReferencesTable;
  cve_occurrences: CveOccurrencesTable;
  occurrence_objects: OccurrenceObjectsTable;
  occurrence_object_lists: OccurrenceObjectListsTable;
  package_changes: PackageChangesTable;
  reference_changes: ReferenceChangesTable;
  reference_change_totals: ReferenceChangeTotalsTable;
  reference_range_totals: ReferenceRangeTotalsTable;
  gate_facts_generation: GateFactsGenerationTable;
  gate_evaluations: GateEvaluationsTable;
  gate_findings: GateFindingsTable;
  api_keys: ApiKeysTable;
  gate_rules: GateRulesTable;
  users: UsersTable;
  cimd_profiles: CimdProfilesTable;
  cimd_policies: CimdPoliciesTable;
  cimd_clients: CimdClientsTable;
  console_sign_ins: ConsoleSignInsTable;
  console_sessions: ConsoleSessionsTable;
  registered_clients: RegisteredClientsTable;
  sign_in_failures: SignInFailuresTable;
  registration_counts: RegistrationCountsTable;
  service_secrets: ServiceSecretsTable;
  affected_functions: AffectedFunctionsTable;
  oidc_payloads: OidcPayloadsTable;
}
