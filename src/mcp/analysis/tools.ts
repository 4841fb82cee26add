/**
 * Tools of the analysis MCP server: the applications, their CVEs and where the vulnerable packages
 * are used in the code, as of any analysis in an application's history.
 */
import * as z from "zod";
import { SCOPE_FILTERS } from "../../contracts/platform.ts";
import {
  applicationCounts,
  applicationDetail,
  applicationSummary,
  cveInsight,
  cvePackage,
  externalObjectMatch,
  interaction,
  packageUse,
} from "../../contracts/resources.ts";
import type { CveOccurrence, ExternalObject } from "../rest-client.ts";
import {
  type AnyToolSpec,
  applicationInput,
  applicationObjectOutput,
  count,
  dateInput,
  defineTool,
  externalObjectOutput,
  instant,
  packageFactsOutput,
  pageOutput,
  pagingInput,
  readPage,
  releaseDateFields,
  SEVERITIES,
} from "../tool-kit.ts";
import { clip, joinLines, pageNote, plural, table } from "../tool-text.ts";
import { cveInput, cveReferences } from "./cve-references-tool.ts";

export const ANALYSIS_INSTRUCTIONS = [
  "Answers questions about the applications analyzed by the imaging platform: their packages " +
    "(dependencies), the CVEs affecting them, and which code of the application uses the vulnerable packages.",
  "Start with `applications` to learn the exact application names, then `application` for an application's " +
    "analysis history. `cve_insights` lists the CVEs affecting an application (most severe first); " +
    "`cve_occurrences` shows, for one CVE, the affected package versions, the upgrade to choose and the " +
    "external objects (classes, methods, functions) of those packages that the application refers to; " +
    "`cve_references` marks the references that reach the functions the advisory names as vulnerable. " +
    "`packages` lists dependencies with their vulnerabilities and safer versions; `package_interactions` " +
    "shows which application objects call a package; `objects` searches external objects by name.",
  "Every answer is as of the latest analysis unless `date` is given (ISO 8601, e.g. 2024-03-01T00:00:00Z): " +
    "then as of the latest analysis at or before that instant. Lists are paged with `limit` and `skip`; " +
    "an answer whose page.hasMore is true continues at skip=page.nextSkip.",
  "You only see the applications your account may read: a 403 error means no access to that application.",
].join("\n\n");

// -------------------------------------------------------------------------------------------------

const applicationSummaryOutput = applicationSummary.extend({
  latestAnalysis: z.string().nullable().describe("Date-time of the latest analysis (null if never analyzed)"),
});

const applications = defineTool({
  name: "applications",
  title: "List applications",
  description:
    "List all applications you may read, with their description, number of analyses and the date of the " +
    "latest one. Use it first to find exact application names for the other tools, or to answer " +
    '"which applications are there?". Paged: limit (default 100) and skip.',
  input: z.object({ ...pagingInput("applications", 100) }),
  output: z.object({ applications: z.array(applicationSummaryOutput), page: pageOutput }),
  async run(args, rest) {
    const { items, page } = await readPage(args, (p) => rest.listApplications(p));
    const list = items.map((a) => ({ ...a, latestAnalysis: instant(a.latestAnalysis) }));
    const text =
      list.length === 0
        ? page.skip > 0
          ? pageNote(page, "applications")
          : "No application is visible to you: an administrator grants viewers access per application."
        : joinLines(
            `${plural(list.length, "application")}${page.hasMore ? " (more follow)" : ""}:`,
            table(
              ["application", "analyses", "latest analysis", "description"],
              list.map((a) => [a.name, a.analysisCount, a.latestAnalysis, clip(a.description, 100)]),
            ),
            pageNote(page, "applications"),
          );
    return { structured: { applications: list, page }, text };
  },
});

// -------------------------------------------------------------------------------------------------

const HISTORY_SHOWN = 12;

const application = defineTool({
  name: "application",
  title: "Application summary",
  description:
    "Summary of one application: description, the dates of all its analyses (its history, oldest first) " +
    "and counts in the latest analysis (packages, vulnerable packages, CVEs, external objects, references). " +
    "Use it to see which analysis dates exist before asking for an answer as of a date.",
  input: z.object({ application: applicationInput }),
  output: applicationDetail.extend({
    latestAnalysis: z.string().nullable(),
    analyses: z.array(z.string()).describe("Date-times of all analyses, oldest first"),
    counts: applicationCounts.describe("Counts in the latest analysis"),
  }),
  async run(args, rest) {
    const a = await rest.getApplication(args.application);
    const analyses = a.analyses.map((x) => x.dateTime);
    const c = a.counts;
    const shown = analyses.slice(-HISTORY_SHOWN).reverse();
    const history =
      analyses.length > HISTORY_SHOWN
        ? `${shown.join(", ")} and ${plural(analyses.length - HISTORY_SHOWN, "earlier one")}`
        : shown.join(", ");
    const text = joinLines(
      `${a.name}: ${a.description}`,
      `Latest analysis: ${instant(a.latestAnalysis) ?? "none"}. ${plural(analyses.length, "analysis", "analyses")}` +
        (analyses.length > 0 ? ` (newest first): ${history}.` : "."),
      `In the latest analysis: ${plural(c.packages, "package")} (${c.vulnerablePackages} vulnerable), ` +
        `${plural(c.vulnerabilities, "CVE")}, ${plural(c.externalObjects, "external object")} referred to by ` +
        `${plural(c.references, "reference")}.`,
    );
    return {
      structured: { ...a, latestAnalysis: instant(a.latestAnalysis), analyses },
      text,
    };
  },
});

// -------------------------------------------------------------------------------------------------

const asOf = (date: string | undefined) =>
  date ? `the latest analysis at or before ${date}` : "the latest analysis";

const cveInsights = defineTool({
  name: "cve_insights",
  title: "CVEs affecting an application",
  description:
    "List the CVEs (known vulnerabilities) affecting an application's packages, most severe first, with " +
    "severity, CVSS score, summary, GHSA aliases, the number of affected packages and the number of external " +
    "objects of those packages the application refers to (0 means the vulnerable code is not referenced). " +
    'Filter with severity, e.g. ["CRITICAL","HIGH"]. Then use cve_occurrences for the details of one CVE.',
  input: z.object({
    application: applicationInput,
    severity: z
      .array(z.enum(SEVERITIES))
      .min(1)
      .optional()
      .describe('Keep only these severities, e.g. ["CRITICAL","HIGH"]; omit for all'),
    date: dateInput(),
    ...pagingInput("CVEs", 50),
  }),
  output: z.object({
    application: z.string(),
    cves: z.array(
      cveInsight.extend({
        id: z.string().describe("CVE id"),
        aliases: z.array(z.string()).describe("Other ids of the advisory, e.g. GHSA-..."),
      }),
    ),
    page: pageOutput,
  }),
  async run(args, rest) {
    const { items, page } = await readPage(args, (p) =>
      rest.listCveInsights(args.application, { ...p, date: args.date, severity: args.severity }),
    );
    const cves = items;
    const filter = args.severity ? ` of severity ${args.severity.join(" or ")}` : "";
    const text =
      cves.length === 0
        ? pageNote(page, "CVEs") || `No CVE${filter} affects ${args.application} in ${asOf(args.date)}.`
        : joinLines(
            `CVEs${filter} affecting ${args.application} in ${asOf(args.date)}:`,
            table(
              ["CVE", "severity", "score", "packages", "referring objects", "summary"],
              cves.map((c) => [
                c.id,
                c.severity,
                c.score,
                c.affectedPackageCount,
                c.referringObjectCount,
                clip(c.summary, 90),
              ]),
            ),
            pageNote(page, "CVEs"),
          );
    return { structured: { application: args.application, cves, page }, text };
  },
});

// -------------------------------------------------------------------------------------------------

const OBJECTS_SHOWN = 10;

const renderObjects = (objects: readonly ExternalObject[], indent = "  ") => {
  const lines = objects.slice(0, OBJECTS_SHOWN).map((o) => `${indent}- ${o.fullName} (${o.type})`);
  if (objects.length > OBJECTS_SHOWN) {
    lines.push(`${indent}- … and ${objects.length - OBJECTS_SHOWN} more (all in structuredContent)`);
  }
  return lines.join("\n");
};

const facts = (
  p: Pick<
    CveOccurrence,
    "releaseDate" | "releasesPerYear" | "saferClosestVersion" | "safestVersion" | "scope"
  >,
) =>
  [
    `scope ${p.scope}`,
    p.releaseDate
      ? `released ${p.releaseDate.dateTime.slice(0, 10)}${p.releaseDate.source ? ` (${p.releaseDate.source})` : ""}`
      : null,
    p.releasesPerYear !== null ? `${p.releasesPerYear} releases/year` : null,
    `safer closest version ${p.saferClosestVersion ?? "none"}`,
    `safest version ${p.safestVersion ?? "none"}`,
  ]
    .filter(Boolean)
    .join(", ");

const cveOccurrences = defineTool({
  name: "cve_occurrences",
  title: "Where a CVE occurs in an application",
  description:
    "For one CVE in one application: the affected package versions in use, with their scope (production, " +
    "dev, test...), release date, releases per year, the safer closest version (smallest upgrade with no " +
    "known vulnerability) and the safest version, and the external objects of each version (classes, " +
    "methods, functions) that the application's code refers to (the objects of the version that code loads). " +
    "Use it to judge the impact of a CVE and the upgrade to make. cve is a CVE id such as CVE-2021-44228 " +
    "(or a GHSA alias such as GHSA-jfh8-c2jp-5v3q).",
  input: z.object({
    application: applicationInput,
    cve: cveInput("CVE-2021-44228", "GHSA-jfh8-c2jp-5v3q"),
    date: dateInput(),
    ...pagingInput("packages", 20),
  }),
  output: z.object({
    application: z.string(),
    cve: z.string(),
    packages: z.array(
      cvePackage.extend({
        ...packageFactsOutput,
        objectCount: count(),
        objects: z
          .array(externalObjectOutput)
          .describe("External objects of the package the application refers to"),
      }),
    ),
    page: pageOutput,
  }),
  async run(args, rest) {
    const { items, page } = await readPage(args, (p) =>
      rest.listCveOccurrences(args.application, args.cve, { ...p, date: args.date }),
    );
    const packages = items.map((p) => ({
      ...p,
      ...releaseDateFields(p.releaseDate),
      objectCount: p.objects.length,
    }));
    const text =
      packages.length === 0
        ? pageNote(page, "packages") ||
          `${args.cve} affects no package of ${args.application} in ${asOf(args.date)}.`
        : joinLines(
            `${args.cve} affects ${plural(packages.length, "package")}${page.hasMore ? " (more follow)" : ""} of ` +
              `${args.application} in ${asOf(args.date)}:`,
            items
              .map(
                (p) =>
                  `- ${p.name} ${p.version} (${facts(p)}): ` +
                  (p.objects.length === 0
                    ? "the application refers to none of its objects."
                    : `the application refers to ${plural(p.objects.length, "of its objects", "of its objects")}:\n${renderObjects(p.objects)}`),
              )
              .join("\n"),
            pageNote(page, "packages"),
          );
    return { structured: { application: args.application, cve: args.cve, packages, page }, text };
  },
});

// -------------------------------------------------------------------------------------------------

const packages = defineTool({
  name: "packages",
  title: "Packages of an application",
  description:
    "List the packages (npm and Maven dependencies) an application uses, ordered by name, with the version in " +
    "use, its scope (npm production, dev, optional, peer; Maven compile, runtime, provided, test, system; " +
    "unknown), the CVEs affecting that version and the most severe of them, its release date and releases " +
    "per year, the safer closest and safest versions to upgrade to, and the lockfiles or manifests it was read " +
    "from (factsPending: its registry facts are still being gathered). vulnerable=true keeps only affected " +
    "versions; query keeps names containing the text (any case); scopes keeps the versions of those scopes " +
    "(e.g. [production, compile, runtime] leaves out development-only packages).",
  input: z.object({
    application: applicationInput,
    vulnerable: z
      .boolean()
      .optional()
      .describe("true: only versions affected by a CVE; false: only unaffected ones; omit for all"),
    query: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe("Keep package names containing this text (any case)"),
    scopes: z
      .array(z.enum(SCOPE_FILTERS))
      .min(1)
      .optional()
      .describe("Keep the versions of these scopes only (unknown: scope not recorded); omit for all"),
    date: dateInput(),
    ...pagingInput("packages", 50),
  }),
  output: z.object({
    application: z.string(),
    packages: z.array(packageUse.extend(packageFactsOutput)),
    page: pageOutput,
  }),
  async run(args, rest) {
    const { items, page } = await readPage(args, (p) =>
      rest.listPackages(args.application, {
        ...p,
        date: args.date,
        vulnerable: args.vulnerable,
        q: args.query,
        scope: args.scopes?.join(","),
      }),
    );
    const list = items.map((p) => ({ ...p, ...releaseDateFields(p.releaseDate) }));
    const which = [
      args.vulnerable === true ? "vulnerable " : args.vulnerable === false ? "unaffected " : "",
      "packages",
      args.query ? ` matching '${args.query}'` : "",
      args.scopes ? ` of scope ${args.scopes.join(" or ")}` : "",
    ].join("");
    const text =
      list.length === 0
        ? pageNote(page, "packages") || `No ${which} in ${args.application} in ${asOf(args.date)}.`
        : joinLines(
            `${which[0]?.toUpperCase()}${which.slice(1)} of ${args.application} in ${asOf(args.date)}:`,
            table(
              [
                "package",
                "version",
                "ecosystem",
                "scope",
                "CVEs",
                "max severity",
                "safer closest",
                "safest",
                "released",
                "read from",
              ],
              list.map((p) => [
                p.name,
                p.version,
                p.ecosystem,
                p.scope,
                p.vulnerabilities.length === 0
                  ? "0"
                  : `${p.vulnerabilities.length}: ${clip(p.vulnerabilities.join(", "), 60)}`,
                p.maxSeverity,
                p.saferClosestVersion,
                p.safestVersion,
                p.factsPending ? "(facts pending)" : p.releaseDate?.slice(0, 10),
                clip(p.sources.join(", "), 60),
              ]),
            ),
            pageNote(page, "packages"),
          );
    return { structured: { application: args.application, packages: list, page }, text };
  },
});

// -------------------------------------------------------------------------------------------------

const packageInteractions = defineTool({
  name: "package_interactions",
  title: "Application code using a package",
  description:
    "List the references from the application's own objects (source) to the external objects of one package " +
    "(target): which application code calls or uses that package, and the version of it that code loads. " +
    "Use it to find the code to change or test when upgrading or replacing a package. package is the npm " +
    "name or Maven groupId:artifactId, e.g. org.apache.logging.log4j:log4j-core; ecosystem is needed only " +
    "when the name exists in both; version keeps the objects of one version of the package.",
  input: z.object({
    application: applicationInput,
    package: z
      .string()
      .min(1)
      .max(300)
      .describe("npm package name, or Maven groupId:artifactId, exactly as the packages tool lists it"),
    ecosystem: z.enum(["npm", "maven"]).optional().describe("Needed only when the name is used in both"),
    version: z
      .string()
      .min(1)
      .max(256)
      .optional()
      .describe("Keep the objects of this version of the package only, e.g. 4.17.21"),
    date: dateInput(),
    ...pagingInput("references", 50),
  }),
  output: z.object({
    application: z.string(),
    package: z.string(),
    interactions: z.array(
      interaction.extend({
        source: applicationObjectOutput.describe("The application object that refers to the package"),
        target: externalObjectOutput.describe("The external object of the package it refers to"),
      }),
    ),
    page: pageOutput,
  }),
  async run(args, rest) {
    const { items, page } = await readPage(args, (p) =>
      rest.listInteractions(args.application, {
        ...p,
        package: args.package,
        ecosystem: args.ecosystem,
        version: args.version,
        date: args.date,
      }),
    );
    const which = args.version ? `${args.package} ${args.version}` : args.package;
    const text =
      items.length === 0
        ? pageNote(page, "references") ||
          `${args.application} uses ${which} but none of its objects refers to the package's objects (${asOf(args.date)}).`
        : joinLines(
            `Application objects of ${args.application} referring to ${which} (${asOf(args.date)}):`,
            table(
              ["application object", "refers to", "target type", "version"],
              items.map((i) => [i.source.fullName, i.target.fullName, i.target.type, i.version]),
            ),
            pageNote(page, "references"),
          );
    return {
      structured: {
        application: args.application,
        package: args.package,
        interactions: items,
        page,
      },
      text,
    };
  },
});

// -------------------------------------------------------------------------------------------------

const objects = defineTool({
  name: "objects",
  title: "Search external objects",
  description:
    "Search the external objects (classes, methods, functions of the packages) that an application refers " +
    "to, by text found in their name, fullName, mangling (signature) or type, any case; optionally only one " +
    "type given by its typeId (e.g. JS_FUNCTION). Each result names its package. Use it to check whether the " +
    "application uses a given API, e.g. query=JndiLookup.",
  input: z.object({
    application: applicationInput,
    query: z
      .string()
      .min(1)
      .max(200)
      .describe("Text to look for in name, fullName, mangling or type (any case)"),
    type: z.string().min(1).max(200).optional().describe("Exact typeId to keep, e.g. JS_FUNCTION"),
    date: dateInput(),
    ...pagingInput("objects", 50),
  }),
  output: z.object({
    application: z.string(),
    objects: z.array(externalObjectMatch),
    page: pageOutput,
  }),
  async run(args, rest) {
    const { items, page } = await readPage(args, (p) =>
      rest.searchObjects(args.application, { ...p, q: args.query, type: args.type, date: args.date }),
    );
    const list = items;
    const text =
      list.length === 0
        ? pageNote(page, "objects") ||
          `No external object matching '${args.query}'${args.type ? ` of type ${args.type}` : ""} is referred to by ${args.application} (${asOf(args.date)}).`
        : joinLines(
            `External objects matching '${args.query}' referred to by ${args.application} (${asOf(args.date)}):`,
            table(
              ["object", "type", "package", "version", "signature"],
              list.map((o) => [o.fullName, o.type, o.package, o.version, o.mangling]),
            ),
            pageNote(page, "objects"),
          );
    return { structured: { application: args.application, objects: list, page }, text };
  },
});

export const analysisTools: readonly AnyToolSpec[] = [
  applications,
  application,
  cveInsights,
  cveOccurrences,
  cveReferences,
  packages,
  packageInteractions,
  objects,
];
