import { chmodSync, closeSync, mkdirSync, openSync, statSync } from "node:fs";

/**
 * The data directory and the SQLite store hold refresh tokens, sessions, password hashes and API key
 * hashes: only the service's user may read them. The directory is kept at 0700 and every store file
 * at 0600 (SQLite creates `-wal` and `-shm` with the database file's mode, so creating the file
 * 0600 before SQLite opens it covers them). Existing ones are tightened; each change is returned
 * as a sentence for the log.
 */
const DATA_DIR_MODE = 0o700;
const STORE_FILE_MODE = 0o600;

/** The files SQLite keeps next to the database file. */
const SQLITE_SIDE_FILES = ["-wal", "-shm", "-journal"] as const;

const posix = process.platform !== "win32";
const octal = (mode: number) => (mode & 0o777).toString(8).padStart(4, "0");

/** Removes group and other permissions from an existing path; returns what was done, if anything. */
function tighten(path: string, mode: number, what: string): string | undefined {
  if (!posix) return undefined;
  let current: number;
  try {
    current = statSync(path).mode;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  if ((current & 0o077) === 0) return undefined;
  try {
    chmodSync(path, mode);
  } catch (error) {
    return `${what} ${path} has mode ${octal(current)} and could not be tightened to ${octal(mode)}: ${(error as Error).message}`;
  }
  return `${what} ${path} had mode ${octal(current)}: tightened to ${octal(mode)}`;
}

/** Creates the data directory 0700, or tightens an existing one. */
export function secureDataDirectory(dir: string): string[] {
  mkdirSync(dir, { recursive: true, mode: DATA_DIR_MODE });
  const notice = tighten(dir, DATA_DIR_MODE, "data directory");
  return notice ? [notice] : [];
}

/**
 * Creates the SQLite database file 0600 when it does not exist yet (SQLite takes an empty file as a
 * new database), and tightens the file and its side files when they exist.
 */
export function secureSqliteFiles(file: string): string[] {
  // O_CREAT with mode 0600 (umask can only remove bits); an existing file is left as it is here.
  closeSync(openSync(file, "a", STORE_FILE_MODE));
  const notices: string[] = [];
  for (const path of [file, ...SQLITE_SIDE_FILES.map((suffix) => `${file}${suffix}`)]) {
    const notice = tighten(path, STORE_FILE_MODE, "store file");
    if (notice) notices.push(notice);
  }
  return notices;
}
