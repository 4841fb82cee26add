/**
 * `imaging advisories sync`: downloads OSV's per-ecosystem archives (`<mirror>/<Ecosystem>/all.zip`,
 * the layout of OSV's public bucket) through the scanner's cached fetcher — an unchanged archive is
 * revalidated, not downloaded again, and `--offline` uses the cached copy — then imports them.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Kysely } from "kysely";
import type { Ecosystem } from "../../domain/versions/index.ts";
import type { Database } from "../../store/schema.ts";
import { type RegistryFetcher, redactUrl } from "../registry/cached-fetch.ts";
import { type ImportOptions, type ImportResult, importAdvisories } from "./import.ts";
import { AdvisorySourceError } from "./sources.ts";

/** OSV's ecosystem names, as its bucket's folders spell them. */
const OSV_FOLDER: Record<Ecosystem, string> = { npm: "npm", maven: "Maven" };

function archiveUrl(mirrorUrl: string, ecosystem: Ecosystem): string {
  return `${mirrorUrl.replace(/\/+$/, "")}/${OSV_FOLDER[ecosystem]}/all.zip`;
}

interface SyncOptions extends ImportOptions {
  mirrorUrl: string;
  ecosystems: readonly Ecosystem[];
  fetcher: RegistryFetcher;
}

interface SyncResult extends ImportResult {
  archives: { ecosystem: Ecosystem; url: string; bytes: number; fromCache: boolean }[];
}

export async function syncAdvisories(db: Kysely<Database>, options: SyncOptions): Promise<SyncResult> {
  const dir = await mkdtemp(join(tmpdir(), "imaging-osv-"));
  try {
    const archives: SyncResult["archives"] = [];
    const files: string[] = [];
    for (const ecosystem of options.ecosystems) {
      const url = archiveUrl(options.mirrorUrl, ecosystem);
      options.progress?.(`advisories: downloading ${redactUrl(url)}`);
      const outcome = await options.fetcher.get(url);
      if (outcome.kind === "not-found") {
        throw new AdvisorySourceError(
          `${redactUrl(url)}: the mirror has no such archive (HTTP ${outcome.status})`,
        );
      }
      if (outcome.kind === "not-cached") {
        throw new AdvisorySourceError(
          `${redactUrl(url)}: not downloaded before, and --offline uses the cache only`,
        );
      }
      if (outcome.kind === "failed") throw new AdvisorySourceError(outcome.reason);
      const file = join(dir, `${OSV_FOLDER[ecosystem]}-all.zip`);
      await writeFile(file, outcome.body);
      files.push(file);
      archives.push({
        ecosystem,
        url: redactUrl(url),
        bytes: outcome.body.length,
        fromCache: outcome.fromCache,
      });
    }
    const result = await importAdvisories(db, files, options);
    return { ...result, archives };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
