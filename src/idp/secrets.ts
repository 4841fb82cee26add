import { randomBytes } from "node:crypto";
import { chmodSync, linkSync, mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Secrets the platform generates for itself (e.g. the confidential client `mcp-token-exchange`):
 * one file per secret, `<dataDir>/secrets/<name>.secret`, readable by the service's user only. The
 * identity provider and the gateway read the same file, so they agree without configuration.
 */

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export function secretsDir(dataDir: string): string {
  return join(dataDir, "secrets");
}

export function secretFilePath(dataDir: string, name: string): string {
  if (!NAME.test(name)) {
    throw new Error(
      `Invalid secret name '${name}': letters, digits, '.', '_' and '-' only, starting with a letter or digit`,
    );
  }
  return join(secretsDir(dataDir), `${name}.secret`);
}

/** The secret stored under `name`, or undefined when its file does not exist. */
export function readSecretFile(dataDir: string, name: string): string | undefined {
  const file = secretFilePath(dataDir, name);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const secret = text.trim();
  if (secret === "") throw new Error(`The secret file ${file} is empty: delete it to generate a new secret`);
  return secret;
}

/**
 * The secret stored under `name`, generated (32 random bytes, base64url) on the first call. The
 * directory is created with mode 0700 and the file with mode 0600. Processes starting at the same
 * time on the same data directory all end up with the same secret: the file appears complete or not
 * at all.
 */
export function ensureSecretFile(dataDir: string, name: string): string {
  const file = secretFilePath(dataDir, name);
  const existing = readSecretFile(dataDir, name);
  if (existing !== undefined) {
    restrict(file, 0o600);
    return existing;
  }
  const dir = secretsDir(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  restrict(dir, 0o700);
  const secret = randomBytes(32).toString("base64url");
  const temporary = join(dir, `.${name}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  writeFileSync(temporary, `${secret}\n`, { mode: 0o600, flag: "wx" });
  try {
    // link() fails if the file exists, so the first writer wins and nobody sees a half-written file.
    linkSync(temporary, file);
    return secret;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return readSecretFile(dataDir, name) as string;
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "ENOSYS") throw error;
    // File systems without hard links: exclusive create instead.
    try {
      writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: "wx" });
      return secret;
    } catch (fallbackError) {
      if ((fallbackError as NodeJS.ErrnoException).code === "EEXIST") {
        return readSecretFile(dataDir, name) as string;
      }
      throw fallbackError;
    }
  } finally {
    unlinkSync(temporary);
  }
}

/** Removes group and other permissions the file or directory may have been given by hand (POSIX). */
function restrict(path: string, mode: number): void {
  if (process.platform === "win32") return;
  try {
    if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, mode);
  } catch {
    // Not ours to change (another owner): leave it, reading still works.
  }
}
