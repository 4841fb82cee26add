import type { PublishedVersionInput } from "../../store/input-records.ts";
import type { FetchOutcome } from "../registry/cached-fetch.ts";

/** What a registry says about one package: its published versions, or why it could not say. */
export type VersionsLookup =
  | { kind: "ok"; versions: PublishedVersionInput[] }
  | Exclude<FetchOutcome, { kind: "ok" }>;
