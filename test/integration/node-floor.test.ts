import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import {
  accessSync,
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { NODE_FLOOR } from "../../src/cli/node-floor.ts";
import { VERSION } from "../../src/version.ts";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** A copy of the package as built (dist/ next to package.json), inside the repository for node_modules. */
const PACKAGE = join(ROOT, "test-artifacts", "node-floor");
const BUILT = join(PACKAGE, "dist");

/** Result of a command that may fail, as a user sees it. */
async function attempt(file: string, args: string[], cwd = ROOT, env = process.env) {
  try {
    const { stdout, stderr } = await run(file, args, { cwd, timeout: 120_000, env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}

/**
 * A Node.js older than the floor: IMAGING_TEST_OLD_NODE (.ci/run installs Node.js 20 into its cache),
 * else the system's /usr/bin/node when it is older. Never skipped: without one the test fails saying so.
 */
async function oldNode(): Promise<{ path: string; version: string }> {
  const candidates = [process.env.IMAGING_TEST_OLD_NODE, "/usr/bin/node"].filter(Boolean) as string[];
  for (const path of candidates) {
    const result = await attempt(path, ["-p", "process.versions.node"]);
    const version = result.stdout.trim();
    if (result.code === 0 && Number(version.split(".")[0]) < Number(NODE_FLOOR.split(".")[0]))
      return { path, version };
  }
  throw new Error(
    `no Node.js older than ${NODE_FLOOR} found (tried ${candidates.join(", ")}): run .ci/run, or set IMAGING_TEST_OLD_NODE to one`,
  );
}

/** npm's own script, to run under the old Node.js as `npm` would there. */
function npmCli(): string {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    try {
      accessSync(join(dir, "npm"), constants.X_OK);
      return realpathSync(join(dir, "npm"));
    } catch {}
  }
  throw new Error("npm is not on PATH");
}

describe("Node.js floor: an older Node.js gets one sentence, not a stack trace", () => {
  let old: { path: string; version: string };
  before(async () => {
    old = await oldNode();
    rmSync(PACKAGE, { recursive: true, force: true });
    mkdirSync(PACKAGE, { recursive: true });
    copyFileSync(join(ROOT, "package.json"), join(PACKAGE, "package.json"));
    // The entry as `npm start` and the `imaging` bin run it: compiled JavaScript.
    const built = await attempt(process.execPath, [
      join(ROOT, "node_modules", "typescript", "bin", "tsc"),
      "-p",
      "tsconfig.build.json",
      "--outDir",
      BUILT,
    ]);
    // Type errors elsewhere are the typecheck's to report; what matters here is the emitted entry.
    assert.ok(existsSync(join(BUILT, "cli", "main.js")), built.stdout + built.stderr);
  });
  after(() => rmSync(PACKAGE, { recursive: true, force: true }));

  it("the floor is package.json's engines.node", () => {
    const engines = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).engines.node as string;
    assert.equal(engines, `>=${NODE_FLOOR.replace(/\.0$/, "")}`);
  });

  it("npm start and the imaging bin run the entry that checks", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
    assert.match(pkg.scripts.start, /^node [^&|;]*dist\/cli\/main\.js start --demo --local$/);
    assert.equal(pkg.bin.imaging, "dist/cli/main.js");
  });

  for (const args of [["start", "--demo", "--local"], ["--version"], ["doctor"]]) {
    it(`imaging ${args.join(" ")} under the old Node.js: one line naming the Node.js needed and how to get it`, async () => {
      const result = await attempt(old.path, [join(BUILT, "cli", "main.js"), ...args]);
      assert.equal(result.code, 1);
      assert.equal(result.stdout, "");
      assert.equal(
        result.stderr,
        `imaging: Node.js 22.13 or newer is needed (this is Node.js ${old.version}): install Node.js 24 LTS from https://nodejs.org/en/download (or run \`nvm install 24\`) and run the command again.\n`,
      );
    });
  }

  it("the same entry runs under this Node.js", async () => {
    const result = await attempt(process.execPath, [join(BUILT, "cli", "main.js"), "--version"]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.trim(), VERSION);
  });

  for (const script of ["start", "test"]) {
    it(`npm ${script} on a fresh clone under the old Node.js: the one line, not "tsc: not found"`, async () => {
      // What a fresh clone has once `npm ci` refused the old Node.js: the sources, no node_modules.
      const dir = mkdtempSync(join(tmpdir(), "imaging-fresh-clone-"));
      try {
        for (const file of ["package.json", ".npmrc", "tsconfig.json", "tsconfig.build.json"])
          copyFileSync(join(ROOT, file), join(dir, file));
        mkdirSync(join(dir, "scripts"));
        copyFileSync(join(ROOT, "scripts", "check-node.js"), join(dir, "scripts", "check-node.js"));
        // npm runs its scripts with the `node` of PATH: the old one, as on the user's machine.
        const path = [dirname(old.path), process.env.PATH].join(delimiter);
        const result = await attempt(old.path, [npmCli(), script], dir, { ...process.env, PATH: path });
        assert.notEqual(result.code, 0);
        assert.doesNotMatch(result.stderr, /not found/);
        assert.ok(
          result.stderr.includes(
            `imaging: Node.js 22.13 or newer is needed (this is Node.js ${old.version}): install Node.js 24 LTS from https://nodejs.org/en/download (or run \`nvm install 24\`) and run the command again.\n`,
          ),
          result.stderr,
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  it("npm ci refuses the old Node.js (engine-strict)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "imaging-npm-ci-"));
    try {
      for (const file of ["package.json", "package-lock.json", ".npmrc"])
        copyFileSync(join(ROOT, file), join(dir, file));
      const result = await attempt(old.path, [npmCli(), "ci", "--dry-run", "--ignore-scripts"], dir);
      assert.notEqual(result.code, 0);
      assert.match(result.stderr, /EBADENGINE/);
      assert.match(result.stderr, /Required: \{"node":">=22\.13"\}/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
