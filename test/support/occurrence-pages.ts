/**
 * Occurrence pages read the ways the tests need them beside the service's own reads: the page's records
 * as objects, and the endpoint's text through the read pool without the HTTP answer's bytes. Both were
 * production exports the service never called (src/store/insights.ts, read-task-runner.ts).
 */
import type { CvePackageRecord, OccurrenceQuery } from "../../src/store/insights.ts";
import { listOccurrencesJson } from "../../src/store/insights.ts";
import { runReadTask } from "../../src/store/read-task-runner.ts";
import type { Db } from "../../src/store/read-tasks.ts";

/** The page's records, parsed from the JSON the store writes (the lists read afresh, not cached). */
export async function listOccurrences(db: Db, query: OccurrenceQuery): Promise<CvePackageRecord[]> {
  return JSON.parse(await listOccurrencesJson(db, query, { cachedLists: false })) as CvePackageRecord[];
}

/** The page's JSON text as the endpoint reads it: on SQLite a task of a reader thread. */
export function listOccurrencesPage(db: Db, query: OccurrenceQuery): Promise<string> {
  return runReadTask(db, "occurrencesJson", query);
}
