/**
 * The CLI as a user meets it outside the clone: the npm package (`npm pack` of this repository) installed
 * globally from its tarball, the service started the way the image's entrypoint starts it
 * (the Dockerfile's ENTRYPOINT, CMD and ENV, run outside a container), and from a project
 * folder of the user's own, the documentation's CI commands run verbatim (only the key and the URL filled
 * in) against that running service.
 */
import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { INTERNAL_PORTS_ON_LOOPBACK } from "../support/cli.ts";

const run = promisify(execFile);
const ROOT = new URL("../..", import.meta.url).pathname;
const ADVISORY = join(ROOT, "test/fixtures/osv/GHSA-p6mc-m468-83gw.json"); // lodash < 4.17.20
const APP = "my-service";

/**
 * The documentation's CI command: the code line that runs `imaging scan` with `--server`. The README shows
 * it to newcomers and docs/developers-and-ci.md documents it: both must hold it, and every copy in the
 * documentation must be the same command, so the one run here is the one users read.
 */
function documentedCiCommand(): string {
  const docs = ["README.md", ...readdirSync(join(ROOT, "docs")).map((f) => join("docs", f))].filter((f) =>
    f.endsWith(".md"),
  );
  const found = new Map<string, string[]>();
  for (const file of docs) {
    const lines = readFileSync(join(ROOT, file), "utf8")
      .split("\n")
      .filter((l) => /^IMAGING_API_KEY=\S+ imaging scan .*--server \S+/.test(l))
      .map((l) => l.replace(/\s+#.*$/, ""));
    if (lines.length > 0) found.set(file, lines);
  }
  for (const file of ["README.md", join("docs", "developers-and-ci.md")]) {
    assert.ok(
      found.has(file),
      `${file} shows no CI command (IMAGING_API_KEY=... imaging scan ... --server URL)`,
    );
  }
  const commands = new Set([...found.values()].flat());
  assert.equal(
    commands.size,
    1,
    `the documentation shows different CI commands: ${[...commands].join(" | ")}`,
  );
  return [...commands][0] as string;
}

/** What the image runs: its entrypoint and command, and the environment its ENV lines set. */
function imageEntrypoint(): { command: string[]; env: Record<string, string> } {
  const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8").replace(/\\\n/g, " ");
  const runtime = dockerfile.slice(dockerfile.lastIndexOf("\nFROM "));
  const json = (instruction: string) =>
    JSON.parse(new RegExp(`^${instruction} (\\[.*\\])$`, "m").exec(runtime)?.[1] ?? "[]") as string[];
  const env: Record<string, string> = {};
  for (const [, pairs] of runtime.matchAll(/^ENV (.*)$/gm)) {
    for (const [, key, value] of (pairs ?? "").matchAll(/(\w+)=(\S+)/g)) env[key as string] = value as string;
  }
  return { command: [...json("ENTRYPOINT"), ...json("CMD")], env };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("the installed package: imaging-services from a user's project, scans sent to the running service", () => {
  let work: string;
  let clone: string;
  let bin: string;
  let env: NodeJS.ProcessEnv;
  let serviceData: string;
  let project: string;
  let baseUrl: string;
  let service: ChildProcess;
  let serviceOutput = "";

  const cli = (args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) =>
    run(join(bin, "imaging-services"), args, {
      cwd: options.cwd ?? project,
      env: { ...env, ...options.env },
    }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => ({
        code: e.code,
        stdout: e.stdout,
        stderr: e.stderr,
      }),
    );

  before(async () => {
    work = mkdtempSync(join(tmpdir(), "imaging-installed-"));
    // Build and pack a copy (the suite runs from src/; building in place would rewrite dist/ under others).
    const copy = join(work, "repo");
    mkdirSync(copy);
    for (const entry of [
      "package.json",
      "package-lock.json",
      ".npmrc",
      "tsconfig.json",
      "tsconfig.build.json",
      "README.md",
      "scripts",
      "src",
    ]) {
      cpSync(join(ROOT, entry), join(copy, entry), { recursive: true });
    }
    symlinkSync(join(ROOT, "node_modules"), join(copy, "node_modules"));
    // The README's build, from no dist/ at all.
    await run("npm", ["run", "build"], { cwd: copy });
    clone = copy;
    const packed = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], {
      cwd: copy,
    });
    const tarball = join(work, (JSON.parse(packed.stdout) as { filename: string }[])[0]?.filename ?? "");
    // A global install, as `npm install -g imaging-services` does: dependencies from the registry.
    const prefix = join(work, "global");
    await run(
      "npm",
      ["install", "-g", "--prefix", prefix, "--prefer-offline", "--no-audit", "--no-fund", tarball],
      {
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    bin = join(prefix, "bin");
    env = {
      ...process.env,
      PATH: `${bin}:${process.env.PATH}`,
      XDG_CACHE_HOME: join(work, "cache"),
      LOG_LEVEL: "warn",
    };
    delete env.IMAGING_DATA_DIR;
    delete env.DATABASE_URL;
    delete env.IMAGING_CONFIG;

    // The user's own project: a lockfile pinning a lodash the advisory affects.
    project = join(work, "my-service");
    mkdirSync(project);
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({ name: APP, version: "1.0.0", dependencies: { lodash: "4.17.19" } }),
    );
    writeFileSync(
      join(project, "package-lock.json"),
      JSON.stringify({
        name: APP,
        version: "1.0.0",
        lockfileVersion: 3,
        requires: true,
        packages: {
          "": { name: APP, version: "1.0.0", dependencies: { lodash: "4.17.19" } },
          "node_modules/lodash": {
            version: "4.17.19",
            resolved: "https://registry.npmjs.org/lodash/-/lodash-4.17.19.tgz",
            integrity:
              "sha512-JNvd8XER9GQX0v2qJgsaN/mzFCNA5BRe/j8JN9d+tWyGLSodKQHKFicdwNYzWwI3wjRnaKPsGj1XkBjx/F96DQ==",
          },
        },
      }),
    );

    // The service as the image runs it: its entrypoint and command, its ENV; the volume and the port
    // (8090 in the image, published by `docker run -p`) are this test's.
    const image = imageEntrypoint();
    assert.deepEqual(image.command, ["imaging-services", "start"]);
    assert.equal(image.env.IMAGING_DATA_DIR, "/var/lib/imaging");
    serviceData = join(work, "service-data");
    const port = await freePort();
    baseUrl = `http://localhost:${port}`;
    const serviceEnv = {
      ...env,
      ...image.env,
      ...INTERNAL_PORTS_ON_LOOPBACK,
      IMAGING_DATA_DIR: serviceData,
      PUBLIC_URL: image.env.PUBLIC_URL?.replace(":8090", `:${port}`),
      PORT: String(port),
    };
    assert.equal(serviceEnv.PUBLIC_URL, baseUrl);
    const imported = await cli(["advisories", "import", ADVISORY], { env: serviceEnv, cwd: work });
    assert.equal(imported.code, 0, imported.stderr);
    const [command, ...args] = image.command;
    service = spawn(join(bin, command as string), args, {
      cwd: work,
      env: serviceEnv,
      stdio: ["ignore", "pipe", "pipe"],
    });
    service.stderr?.on("data", (d) => {
      serviceOutput += d;
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the service did not start: ${serviceOutput}`)),
        120_000,
      );
      service.stdout?.on("data", (d) => {
        serviceOutput += d;
        if (serviceOutput.includes(" is up")) {
          clearTimeout(timer);
          resolve();
        }
      });
      service.once("exit", (code) => reject(new Error(`the service exited (${code}): ${serviceOutput}`)));
    });
  });

  after(async () => {
    if (service && service.exitCode === null) {
      const exited = new Promise((resolve) => service.once("exit", resolve));
      service.kill("SIGTERM");
      await exited;
    }
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("the start banner of the installed command names the console and the store", () => {
    assert.match(serviceOutput, new RegExp(`imaging-services ${baseUrl} is up`));
    assert.match(serviceOutput, new RegExp(`console   ${baseUrl}/`));
    assert.match(serviceOutput, new RegExp(`store     ${join(serviceData, "imaging.db")}`));
  });

  it("after rm -rf dist && npm run build, npx imaging still runs in the clone (the build sets the execute bit)", async () => {
    const version = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version as string;
    // npx links the clone into its cache once, with the command made executable; a rebuild then writes
    // a new dist/cli/main.js, which tsc leaves without the bit: "sh: 1: imaging: Permission denied".
    // Without the global install on PATH, and with an npm cache of its own: the clone's own command.
    const npx = () =>
      run("npx", ["--no-install", "imaging", "--version"], {
        cwd: clone,
        env: { ...process.env, npm_config_cache: join(work, "npx-cache") },
      });
    assert.equal((await npx()).stdout.trim(), version);
    rmSync(join(clone, "dist"), { recursive: true, force: true });
    await run("npm", ["run", "build"], { cwd: clone });
    assert.equal(statSync(join(clone, "dist/cli/main.js")).mode & 0o111, 0o111);
    assert.equal((await npx()).stdout.trim(), version);
  });

  it("npx imaging-services runs the globally installed package under its own name", async () => {
    const version = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version as string;
    const { stdout } = await run("npx", ["--no-install", "imaging-services", "--version"], {
      cwd: project,
      // npm's global prefix, where `npm install -g` put it (a temporary one here).
      env: { ...env, npm_config_prefix: join(bin, "..") },
    });
    assert.equal(stdout.trim(), version);
  });

  it("in the project folder, a command that would open a new store says so and creates nothing", async () => {
    for (const args of [
      ["scan", ".", "--app", APP],
      ["api-keys", "list"],
    ]) {
      const result = await cli(args);
      assert.equal(result.code, 1, result.stdout);
      assert.equal(result.stdout, "");
      assert.match(
        result.stderr,
        /^imaging: no store here \(.*my-service\/data\/imaging\.db does not exist\): .*--server URL\n$/,
      );
    }
    assert.equal(existsSync(join(project, "data")), false, "no ./data left in the user's project");
  });

  it("the documented CI command, run verbatim from the project, records the analysis in the running service", async () => {
    const created = await cli(["api-keys", "create", "--user", "ci", "--role", "admin", "--json"], {
      env: { IMAGING_DATA_DIR: serviceData },
    });
    assert.equal(created.code, 0, created.stderr);
    const key = (JSON.parse(created.stdout) as { key: string }).key;
    const command = documentedCiCommand()
      .replace(/IMAGING_API_KEY=\S+/, `IMAGING_API_KEY=${key}`)
      .replace(/--server \S+/, `--server ${baseUrl}`);
    const result = await run("sh", ["-c", command], { cwd: project, env }).catch(
      (e: { code: number; stdout: string; stderr: string }) =>
        assert.fail(`${command}: exit ${e.code}\n${e.stdout}${e.stderr}`),
    );
    assert.equal(result.stderr, "");
    assert.match(
      result.stdout,
      new RegExp(`^${APP} at \\S+: sent to ${baseUrl}/?, recorded there as analysis 1\\n`),
    );
    assert.match(result.stdout, /^ {2}packages: 1 \(0 dev only\)$/m);
    assert.match(result.stdout, /^ {2}vulnerable packages: 1$/m);
    assert.equal(existsSync(join(project, "data")), false, "no ./data left in the user's project");

    // The running service has it: its REST API answers the CVE for the application.
    const occurrences = await fetch(
      `${baseUrl}/rest/applications/${APP}/insights/cve/CVE-2020-8203/occurrences?limit=20`,
      { headers: { "x-api-key": key } },
    );
    assert.equal(occurrences.status, 200, await occurrences.clone().text());
    const body = (await occurrences.json()) as { name: string; version: string }[];
    assert.deepEqual(
      body.map((o) => `${o.name}@${o.version}`),
      ["lodash@4.17.19"],
    );
  });
});
