/**
 * Where OSV records come from: a JSON file (one record, or an array of them), a directory of them
 * (recursive), or a zip archive of them (OSV's per-ecosystem `all.zip`), read entry by entry so an
 * archive of hundreds of megabytes never sits in memory whole.
 */
import { createReadStream } from "node:fs";
import { open, readdir, readFile, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { inflateRawSync } from "node:zlib";
import { type AsyncFlateStreamHandler, Unzip, type UnzipDecoder } from "fflate";

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

/** "entries" for an archive starting with a file, "empty" for an archive of nothing, else false. */
async function zipKind(path: string): Promise<"entries" | "empty" | false> {
  const handle = await open(path, "r");
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(4), 0, 4, 0);
    if (bytesRead < 4) return false;
    const signature = buffer.readUInt32LE(0);
    if (signature === 0x04034b50) return "entries"; // a local file header
    return signature === 0x06054b50 ? "empty" : false; // the end-of-directory record alone
  } finally {
    await handle.close();
  }
}

async function isZip(path: string): Promise<boolean> {
  return (await zipKind(path)) !== false;
}

/**
 * Deflate entries inflated by Node's zlib once complete: OSV records are small, and the native inflater
 * is several times faster than fflate's streaming one on thousands of them.
 */
class NativeInflate implements UnzipDecoder {
  static compression = 8;
  ondata: AsyncFlateStreamHandler = () => {};
  private readonly chunks: Uint8Array[] = [];
  push(chunk: Uint8Array, final: boolean): void {
    // fflate reuses its buffers: keep a copy.
    this.chunks.push(chunk.slice());
    if (!final) return;
    try {
      this.ondata(null, inflateRawSync(Buffer.concat(this.chunks)), true);
    } catch (error) {
      this.ondata(error as never, new Uint8Array(0), true);
    }
  }
}

/**
 * Streams the archive through fflate's Unzip: sequential reads of large chunks, each entry inflated as
 * its bytes arrive (random-access readers spend most of their time waiting on small reads here).
 */
async function* readZip(path: string): AsyncGenerator<SourceFile> {
  const label = basename(path);
  const done: SourceFile[] = [];
  let failure: Error | null = null;
  let entries = 0;
  let started = 0;
  let complete = 0;
  const unzip = new Unzip((file) => {
    entries++;
    if (file.name.endsWith("/") || !file.name.endsWith(".json")) return;
    started++;
    const chunks: Uint8Array[] = [];
    file.ondata = (error, chunk, final) => {
      if (error) {
        failure = new AdvisorySourceError(`${path}: damaged entry ${file.name} (${error.message})`);
        return;
      }
      chunks.push(chunk);
      if (final) complete++;
      if (final) done.push({ name: `${label}:${file.name}`, text: Buffer.concat(chunks).toString("utf8") });
    };
    file.start();
  });
  unzip.register(NativeInflate);
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 })) {
    try {
      unzip.push(chunk as Buffer);
    } catch (error) {
      throw new AdvisorySourceError(`${path}: damaged zip archive (${(error as Error).message})`);
    }
    if (failure) throw failure;
    yield* done.splice(0);
  }
  try {
    unzip.push(new Uint8Array(0), true);
  } catch (error) {
    throw new AdvisorySourceError(`${path}: damaged zip archive (${(error as Error).message})`);
  }
  if (failure) throw failure;
  yield* done.splice(0);
  // fflate's stream parser stops quietly at bytes that are not a zip entry: say so.
  if (entries === 0 && (await zipKind(path)) === "entries") {
    throw new AdvisorySourceError(`${path}: not a readable zip archive (no entry found)`);
  }
  if (complete < started) {
    throw new AdvisorySourceError(`${path}: damaged zip archive (an entry ends before its data)`);
  }
}
