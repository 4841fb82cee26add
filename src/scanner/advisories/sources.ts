/**
 * Where OSV records come from: a JSON file (one record, or an array of them), a directory of them
 * (recursive), or a zip archive of them (OSV's per-ecosystem `all.zip`), read entry by entry so an
 * archive of hundreds of megabytes never sits in memory whole.
 */
import { open, readdir, readFile, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import yauzl from "yauzl";

/** One file's text; `name` is what messages show (`npm-all.zip:GHSA-xxxx.json` for an archive entry). */
export interface SourceFile {
  name: string;
  text: string;
}

/** A PATH that cannot be read at all (missing, not a zip it claims to be): the import stops. */
export class AdvisorySourceError extends Error {
  override name = "AdvisorySourceError";
}

/** Every path is checked before the first record is read: a typo imports nothing. */
export async function* readSources(
  paths: readonly string[],
  onPath?: (path: string) => void,
): AsyncGenerator<SourceFile> {
  const infos = [];
  for (const path of paths) {
    const info = await stat(path).catch(() => null);
    if (!info) throw new AdvisorySourceError(`${path}: no such file or directory`);
    infos.push(info);
  }
  for (const [i, path] of paths.entries()) {
    const info = infos[i] as Awaited<ReturnType<typeof stat>>;
    onPath?.(path);
    if (info.isDirectory()) yield* readDirectory(path);
    else if (await isZip(path)) yield* readZip(path);
    else yield { name: path, text: await readFile(path, "utf8") };
  }
}

async function* readDirectory(dir: string): AsyncGenerator<SourceFile> {
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* readDirectory(path);
    else if (entry.isFile() && entry.name.endsWith(".json")) {
      yield { name: path, text: await readFile(path, "utf8") };
    } else if (entry.isFile() && entry.name.endsWith(".zip")) yield* readZip(path);
  }
}

async function isZip(path: string): Promise<boolean> {
  const handle = await open(path, "r");
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(4), 0, 4, 0);
    return bytesRead === 4 && buffer.readUInt32LE(0) === 0x04034b50;
  } finally {
    await handle.close();
  }
}

function openZip(path: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) =>
    yauzl.open(path, { lazyEntries: true, autoClose: false }, (error, zip) =>
      error
        ? reject(new AdvisorySourceError(`${path}: not a readable zip archive (${error.message})`))
        : resolve(zip),
    ),
  );
}

function readEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<string> {
  return new Promise((resolve, reject) =>
    zip.openReadStream(entry, (error, stream) => {
      if (error) return reject(error);
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("error", reject);
      stream.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    }),
  );
}

async function* readZip(path: string): AsyncGenerator<SourceFile> {
  const zip = await openZip(path);
  const label = basename(path);
  try {
    while (true) {
      const entry = await new Promise<yauzl.Entry | null>((resolve, reject) => {
        const onEntry = (e: yauzl.Entry) => {
          cleanup();
          resolve(e);
        };
        const onEnd = () => {
          cleanup();
          resolve(null);
        };
        const onError = (error: Error) => {
          cleanup();
          reject(new AdvisorySourceError(`${path}: damaged zip archive (${error.message})`));
        };
        const cleanup = () => {
          zip.off("entry", onEntry);
          zip.off("end", onEnd);
          zip.off("error", onError);
        };
        zip.on("entry", onEntry);
        zip.on("end", onEnd);
        zip.on("error", onError);
        zip.readEntry();
      });
      if (entry === null) return;
      if (entry.fileName.endsWith("/") || !entry.fileName.endsWith(".json")) continue;
      let text: string;
      try {
        text = await readEntry(zip, entry);
      } catch (error) {
        throw new AdvisorySourceError(
          `${path}: damaged entry ${entry.fileName} (${(error as Error).message})`,
        );
      }
      yield { name: `${label}:${entry.fileName}`, text };
    }
  } finally {
    zip.close();
  }
}
