/** The REST resources the Applications pages read, as src/contracts declares them (the API's own shapes). */

export { SEVERITIES, type Severity } from "../../../contracts/platform.ts";
export type {
  AnalysisHistoryEntry,
  ApplicationCounts as Counts,
  ApplicationDetail,
  ApplicationObject,
  ApplicationSummary,
  Changes,
  Comparison,
  CveInsight,
  CvePackage,
  DateTime,
  ExternalObject,
  GateEvaluation,
  GateHistoryEntry,
  Interaction,
  PackageUse as Package,
  ReferenceChange,
} from "../../../contracts/resources.ts";
