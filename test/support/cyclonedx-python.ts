import { execFileSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { withCacheLockSync } from "./cache-lock.ts";

/**
 * cyclonedx-python-lib from PyPI, with its JSON validation extra, in a virtual environment cached
 * outside the repository (IMAGING_CI_CACHE, as .ci/run sets it), once per version: a consumer of
 * CycloneDX documents that is not ours (another model, another JSON Schema validator).
 */
const CACHE = process.env.IMAGING_CI_CACHE ?? join(homedir(), ".cache", "imaging-ci");
export const CYCLONEDX_PYTHON_VERSION = "11.12.0";
export const READ_CYCLONEDX = join(process.cwd(), "test", "support", "python", "read_cyclonedx.py");

/** Returns the python of the environment. */
export function ensureCycloneDxPython(): string {
  const venv = join(CACHE, `cyclonedx-python-lib-${CYCLONEDX_PYTHON_VERSION}`);
  const python = join(venv, "bin", "python");
  const marker = join(venv, ".installed");
  if (!existsSync(marker))
    withCacheLockSync(venv, () => {
      if (existsSync(marker)) return;
      execFileSync("python3", ["-m", "venv", venv], { stdio: "pipe" });
      execFileSync(
        python,
        [
          "-m",
          "pip",
          "install",
          "-q",
          "--disable-pip-version-check",
          `cyclonedx-python-lib[json-validation]==${CYCLONEDX_PYTHON_VERSION}`,
        ],
        { stdio: "pipe" },
      );
      writeFileSync(marker, `${CYCLONEDX_PYTHON_VERSION}\n`);
    });
  return python;
}
