/**
 * `imaging advisories import`: OSV records from files, directories and archives into the store, in
 * transactions of a few hundred records; each transaction recomputes the facts of the packages its
 * records touched, so what is committed is always consistent. A malformed record is reported (file and
 * field) and skipped; the rest goes on.
 */

import type { Kysely } from "kysely";
import { recomputeTouched } from "../../domain/package-facts.ts";
import { applyOsvRecords, noteAdvisoryImport } from "../../store/advisories.ts";
import type { OsvRecordInput } from "../../store/input-records.ts";
import type { Database } from "../../store/schema.ts";
import { readOsvRecord } from "./osv-record.ts";
import { readSources, type SourceFile } from "./sources.ts";

interface ImportCounts {
  imported: number;
  updated: number;
  unchanged: number;
  /** Records about other ecosystems, malformed ones, and withdrawals of records never imported. */
  skipped: number;
  /** Records whose withdrawal removed what they had brought (not counted in the others). */
  withdrawn: number;
}

interface MalformedRecord {
  file: string;
  reason: string;
}

export interface ImportResult extends ImportCounts {
  malformed: MalformedRecord[];
}

export interface ImportOptions {
  /** Progress for people (stderr), never parsed. */
  progress?: (message: string) => void;
  /** Each malformed record as it is met. */
  onMalformed?: (record: MalformedRecord) => void;
  /** Records per transaction (default 500). */
  batchSize?: number;
}

const PROGRESS_EVERY_MS = 2_000;

export async function importAdvisories(
  db: Kysely<Database>,
  paths: readonly string[],
  options: ImportOptions = {},
): Promise<ImportResult> {
  const result: ImportResult = {
    imported: 0,
    updated: 0,
    unchanged: 0,
    skipped: 0,
    withdrawn: 0,
    malformed: [],
  };
  const batchSize = options.batchSize ?? 500;
  let batch: OsvRecordInput[] = [];
  let read = 0;
  let lastProgress = Date.now();
  const packageIds = new Map<string, number>();

  const flush = async () => {
    if (batch.length === 0) return;
    const records = batch;
    batch = [];
    const outcomes = await db.transaction().execute(async (trx) => {
      const touched = new Set<number>();
      const list = await applyOsvRecords(trx, records, touched, packageIds);
      await recomputeTouched(trx, touched);
      return list;
    });
    for (const outcome of outcomes) result[outcome]++;
  };

  for await (const file of readSources(paths, (path) => options.progress?.(`advisories: reading ${path}`))) {
    for (const item of recordsIn(file)) {
      read++;
      if (item.kind === "malformed") {
        const malformed = { file: file.name, reason: item.reason };
        result.malformed.push(malformed);
        result.skipped++;
        options.onMalformed?.(malformed);
      } else if (item.kind === "other-ecosystem") {
        result.skipped++;
      } else {
        batch.push(item.record);
        if (batch.length >= batchSize) await flush();
      }
      if (options.progress && Date.now() - lastProgress >= PROGRESS_EVERY_MS) {
        lastProgress = Date.now();
        options.progress(`advisories: ${read.toLocaleString("en")} records read, ${summary(result)}`);
      }
    }
  }
  await flush();
  // An import that changed nothing still tells that the store is current as of now.
  await noteAdvisoryImport(db);
  return result;
}

export function summary(counts: ImportCounts): string {
  return (
    `${counts.imported} imported, ${counts.updated} updated, ${counts.unchanged} unchanged, ` +
    `${counts.skipped} skipped, ${counts.withdrawn} withdrawn`
  );
}

/** The records of one file: an object is one record, an array holds several. */
function* recordsIn(file: SourceFile): Generator<ReturnType<typeof readOsvRecord>> {
  let json: unknown;
  try {
    json = JSON.parse(file.text);
  } catch (error) {
    yield { kind: "malformed", reason: `not valid JSON (${(error as Error).message})` };
    return;
  }
  if (Array.isArray(json)) {
    for (const [i, element] of json.entries()) {
      const item = readOsvRecord(element);
      yield item.kind === "malformed" ? { kind: "malformed", reason: `[${i}].${item.reason}` } : item;
    }
  } else {
    yield readOsvRecord(json);
  }
}
