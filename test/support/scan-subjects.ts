/**
 * Real public software to scan, fetched from the npm registry and prepared once into a cache outside the
 * repository (IMAGING_SCAN_SUBJECTS, default ~/.cache/imaging-ci/scan-subjects): firebase-tools 8.4.0
 * (its lodash pinned to the vulnerable 4.17.15) with lockfiles written by npm (v1, v2, v3, shrinkwrap),
 * pnpm 8 and 9, yarn 1 and yarn 4, SBOMs written by @cyclonedx/cyclonedx-npm and `npm sbom`, and what
 * each tool itself lists for them (`npm ls`, `pnpm ls`, `yarn info`): the tests' oracles.
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { withCacheLockSync } from "./cache-lock.ts";

export const SUBJECTS_DIR =
  process.env.IMAGING_SCAN_SUBJECTS ??
  join(process.env.IMAGING_CI_CACHE ?? join(homedir(), ".cache", "imaging-ci"), "scan-subjects");

const TOOLS = {
  pnpm8: "pnpm@8.15.9",
  pnpm9: "pnpm@9.15.9",
  yarn1: "yarn@1.22.22",
  berry: "@yarnpkg/cli-dist@4.9.1",
  cyclonedx: "@cyclonedx/cyclonedx-npm@6.0.1",
};

// CI=true makes yarn 4 refuse to write a lockfile; none of these tools may run install scripts.
const TOOL_ENV = {
  ...process.env,
  YARN_ENABLE_IMMUTABLE_INSTALLS: "false",
  YARN_ENABLE_TELEMETRY: "0",
  npm_config_ignore_scripts: "true",
  npm_config_audit: "false",
  npm_config_fund: "false",
  npm_config_update_notifier: "false",
};

function run(cwd: string, command: string, args: string[], stdoutFile?: string): void {
  try {
    const out = execFileSync(command, args, {
      cwd,
      env: TOOL_ENV,
      stdio: ["ignore", "pipe", "pipe"],
      maxBuffer: 512 * 1024 * 1024,
      timeout: 600_000,
    });
    if (stdoutFile) writeFileSync(join(cwd, stdoutFile), out);
  } catch (error) {
    const e = error as { status?: number; stderr?: Buffer; stdout?: Buffer };
    // npm ls exits 1 on peer-dependency problems yet prints the full tree: keep it.
    if (stdoutFile && e.stdout && e.stdout.length > 0 && command === "npm") {
      writeFileSync(join(cwd, stdoutFile), e.stdout);
      return;
    }
    throw new Error(
      `${command} ${args.join(" ")} failed in ${cwd}: ${e.stderr?.toString().slice(-1500)} ${e.stdout?.toString().slice(-1500)}`,
    );
  }
}

const npx = (cwd: string, pkg: string, args: string[], stdoutFile?: string) =>
  run(cwd, "npx", ["--yes", `--package=${pkg}`, "--", ...args], stdoutFile);

/**
 * Builds `name` once: into a temporary folder renamed at the end, so an interrupted build is redone, under
 * a lock, so test files running in parallel never build it twice at once.
 */
export function cached(name: string, build: (dir: string) => void): string {
  const dir = join(SUBJECTS_DIR, name);
  if (existsSync(dir)) return dir;
  return withCacheLockSync(dir, () => {
    if (existsSync(dir)) return dir; // built by another test process while this one waited
    const work = `${dir}.partial`;
    rmSync(work, { recursive: true, force: true });
    mkdirSync(work, { recursive: true });
    build(work);
    renameSync(work, dir);
    return dir;
  });
}

function copy(from: string, to: string, files: string[]): void {
  mkdirSync(to, { recursive: true });
  for (const file of files) copyFileSync(join(from, file), join(to, file));
}

export interface FirebaseSubject {
  /** The published package as extracted (templates and all), with a v3 package-lock.json. */
  published: string;
  npm: { v1: string; v2: string; v3: string; shrinkwrap: string };
  pnpm: { v6: string; v9: string };
  yarn: { classic: string; berry: string };
  sbom: { cyclonedx14: string; cyclonedx16: string; spdx: string };
}

/** firebase-tools 8.4.0 with `lodash` pinned (dependency and override) to the vulnerable 4.17.15. */
export function firebaseTools(): FirebaseSubject {
  const root = cached("firebase-tools-8.4.0", (dir) => {
    const published = join(dir, "published");
    mkdirSync(published);
    run(dir, "npm", ["pack", "firebase-tools@8.4.0", "--silent"]);
    run(dir, "tar", ["xzf", "firebase-tools-8.4.0.tgz", "-C", published, "--strip-components=1"]);
    const manifestFile = join(published, "package.json");
    const manifest = JSON.parse(readFileSync(manifestFile, "utf8"));
    manifest.dependencies.lodash = "4.17.15";
    manifest.overrides = { lodash: "4.17.15" };
    delete manifest.scripts;
    writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
    run(published, "npm", ["install", "--package-lock-only"]);
    run(published, "npm", ["ls", "--all", "--json", "--package-lock-only"], "npm-ls.json");
    run(published, "npm", ["ls", "--all", "--json", "--package-lock-only", "--omit=dev"], "npm-ls-prod.json");

    const lockfiles = join(dir, "npm");
    for (const version of ["3", "2", "1"]) {
      const target = join(lockfiles, `v${version}`);
      copy(published, target, ["package.json", "package-lock.json", "npm-ls.json", "npm-ls-prod.json"]);
      if (version !== "3") {
        run(target, "npm", ["install", "--package-lock-only", `--lockfile-version=${version}`]);
      }
    }
    // npm-shrinkwrap.json wins over package-lock.json: the decoy lockfile beside it must be ignored.
    const shrinkwrap = join(lockfiles, "shrinkwrap");
    copy(published, shrinkwrap, ["package.json"]);
    copyFileSync(join(published, "package-lock.json"), join(shrinkwrap, "npm-shrinkwrap.json"));
    writeFileSync(
      join(shrinkwrap, "package-lock.json"),
      JSON.stringify({
        name: "firebase-tools",
        lockfileVersion: 3,
        packages: {
          "": { dependencies: { "left-pad": "1.3.0" } },
          "node_modules/left-pad": { version: "1.3.0" },
        },
      }),
    );
    run(shrinkwrap, "npm", ["ls", "--all", "--json", "--package-lock-only"], "npm-ls.json");

    for (const [format, tool] of [
      ["v9", TOOLS.pnpm9],
      ["v6", TOOLS.pnpm8],
    ] as const) {
      const target = join(dir, "pnpm", format);
      copy(published, target, ["package.json", "package-lock.json"]);
      npx(target, tool, ["pnpm", "import"]);
      rmSync(join(target, "package-lock.json"));
      const store = join(SUBJECTS_DIR, "pnpm-store");
      npx(target, tool, ["pnpm", "install", "--frozen-lockfile", "--ignore-scripts", `--store-dir=${store}`]);
      npx(target, tool, ["pnpm", "ls", "--depth=Infinity", "--json"], "pnpm-ls.json");
      npx(target, tool, ["pnpm", "ls", "--depth=Infinity", "--json", "--prod"], "pnpm-ls-prod.json");
      rmSync(join(target, "node_modules"), { recursive: true, force: true });
    }

    // yarn 1 imports npm's v1 lockfile keeping its versions; yarn 4 migrates yarn 1's lockfile.
    const classic = join(dir, "yarn", "classic");
    copy(join(lockfiles, "v1"), classic, ["package.json", "package-lock.json"]);
    npx(classic, TOOLS.yarn1, ["yarn", "import", "--ignore-engines", "--non-interactive"]);
    rmSync(join(classic, "package-lock.json"));
    const berry = join(dir, "yarn", "berry");
    copy(classic, berry, ["package.json", "yarn.lock"]);
    npx(berry, TOOLS.berry, ["yarn", "install", "--mode=update-lockfile"]);
    npx(berry, TOOLS.berry, ["yarn", "info", "--all", "--recursive", "--json"], "yarn-info.ndjson");
    rmSync(join(berry, ".yarn"), { recursive: true, force: true });

    const sbom = join(dir, "sbom");
    mkdirSync(sbom);
    for (const spec of ["1.4", "1.6"]) {
      npx(published, TOOLS.cyclonedx, [
        "cyclonedx-npm",
        "--package-lock-only",
        "--spec-version",
        spec,
        "--output-format",
        "JSON",
        "--output-file",
        join(sbom, `firebase-tools.${spec}.cdx.json`),
      ]);
    }
    run(published, "npm", ["sbom", "--sbom-format=spdx", "--package-lock-only"], "firebase-tools.spdx.json");
    renameSync(join(published, "firebase-tools.spdx.json"), join(sbom, "firebase-tools.spdx.json"));
  });
  return {
    published: join(root, "published"),
    npm: {
      v1: join(root, "npm", "v1"),
      v2: join(root, "npm", "v2"),
      v3: join(root, "npm", "v3"),
      shrinkwrap: join(root, "npm", "shrinkwrap"),
    },
    pnpm: { v6: join(root, "pnpm", "v6"), v9: join(root, "pnpm", "v9") },
    yarn: { classic: join(root, "yarn", "classic"), berry: join(root, "yarn", "berry") },
    sbom: {
      cyclonedx14: join(root, "sbom", "firebase-tools.1.4.cdx.json"),
      cyclonedx16: join(root, "sbom", "firebase-tools.1.6.cdx.json"),
      spdx: join(root, "sbom", "firebase-tools.spdx.json"),
    },
  };
}

/** `name@version` of every package a tool's JSON tree lists (npm ls, pnpm ls), workspaces and links left out. */
export function treePackages(file: string): Set<string> {
  const found = new Set<string>();
  const local = new Set<string>();
  const visit = (
    deps:
      | Record<
          string,
          { version?: string; from?: string; name?: string; resolved?: string; dependencies?: object }
        >
      | undefined,
  ) => {
    for (const [name, dep] of Object.entries(deps ?? {})) {
      const version = dep.version ?? "";
      const id = `${dep.from ?? dep.name ?? name}@${version}`;
      // Workspaces are linked folders of the application (npm repeats them deduped, without `resolved`).
      if (dep.resolved?.startsWith("file:")) local.add(id);
      else if (version !== "" && !version.startsWith("link:")) found.add(id);
      visit(dep.dependencies as never);
    }
  };
  const json = JSON.parse(readFileSync(file, "utf8"));
  for (const root of Array.isArray(json) ? json : [json]) {
    visit(root.dependencies);
    visit(root.devDependencies);
    visit(root.optionalDependencies);
  }
  for (const id of local) found.delete(id);
  return found;
}

/** name@version of `start` and everything it depends on, per `yarn info --all --recursive --json`. */
export function yarnInfoClosure(file: string, start: string): Set<string> {
  const entries = readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map(
      (line) =>
        JSON.parse(line) as {
          value: string;
          children: { Version: string; Dependencies?: { locator: string }[] };
        },
    );
  const byLocator = new Map(entries.map((e) => [e.value, e]));
  const found = new Set<string>();
  const stack = entries.filter((e) => e.value.startsWith(`${start}@`)).map((e) => e.value);
  const seen = new Set<string>();
  while (stack.length > 0) {
    // Packages with peer dependencies appear as virtual instances of their npm locator.
    const locator = (stack.pop() as string).replace(/@virtual:[^#]+#/, "@");
    const entry = byLocator.get(locator);
    if (!entry || seen.has(locator)) continue;
    seen.add(locator);
    const at = locator.indexOf("@", locator.startsWith("@") ? 1 : 0);
    found.add(`${locator.slice(0, at)}@${entry.children.Version}`);
    for (const dependency of entry.children.Dependencies ?? []) stack.push(dependency.locator);
  }
  return found;
}

/** `name@version` of every registry package `yarn info --all --recursive --json` lists. */
export function yarnInfoPackages(file: string): Set<string> {
  const found = new Set<string>();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    const entry = JSON.parse(line) as { value: string; children: { Version: string } };
    if (/@(workspace|link|portal|file):/.test(entry.value)) continue;
    const at = entry.value.indexOf("@", entry.value.startsWith("@") ? 1 : 0);
    found.add(`${entry.value.slice(0, at)}@${entry.children.Version}`);
  }
  return found;
}

export interface WorkspaceSubject {
  /** npm workspaces: package-lock.json v3 at the root, npm-ls.json / npm-ls-prod.json beside it. */
  npm: string;
  /** The same workspaces under pnpm 9 (pnpm-workspace.yaml), pnpm-ls.json / pnpm-ls-prod.json beside it. */
  pnpm: string;
}

function writeJson(path: string, json: unknown): void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, `${JSON.stringify(json, null, 2)}\n`);
}
/** The monorepo's package.json files. pnpm links a workspace only through the workspace: protocol. */
function writeMonorepo(target: string, workspaceRange: string): void {
  writeJson(join(target, "package.json"), {
    name: "shop-monorepo",
    private: true,
    workspaces: ["packages/*"],
    devDependencies: { "left-pad": "1.3.0" },
  });
  writeJson(join(target, "packages", "api", "package.json"), {
    name: "@shop/api",
    version: "1.0.0",
    dependencies: { ms: "2.1.1", lodash: "4.17.15" },
  });
  writeJson(join(target, "packages", "web", "package.json"), {
    name: "@shop/web",
    version: "1.0.0",
    dependencies: { "@shop/api": workspaceRange, minimist: "1.2.5" },
    devDependencies: { "is-number": "7.0.0" },
  });
  writeJson(join(target, "packages", "web", "test", "fixtures", "old-app", "package.json"), {
    name: "old-app",
    dependencies: { lodash: "3.0.0" },
  });
}

/**
 * A monorepo of two workspaces using real registry packages, with what a scan must not take for the
 * application's dependencies: a test fixture's package.json and a lockfile inside node_modules.
 */
export function workspaceMonorepo(): WorkspaceSubject {
  const root = cached("workspace-monorepo", (dir) => {
    const npmDir = join(dir, "npm");
    writeMonorepo(npmDir, "1.0.0");
    run(npmDir, "npm", ["install", "--package-lock-only"]);
    run(npmDir, "npm", ["ls", "--all", "--json", "--package-lock-only"], "npm-ls.json");
    run(npmDir, "npm", ["ls", "--all", "--json", "--package-lock-only", "--omit=dev"], "npm-ls-prod.json");
    writeJson(join(npmDir, "packages", "web", "node_modules", "stale", "package-lock.json"), {
      lockfileVersion: 3,
      packages: { "": {}, "node_modules/left-pad": { version: "1.0.0" } },
    });

    const pnpmDir = join(dir, "pnpm");
    writeMonorepo(pnpmDir, "workspace:*");
    writeFileSync(join(pnpmDir, "pnpm-workspace.yaml"), "packages:\n  - 'packages/*'\n");
    const store = join(SUBJECTS_DIR, "pnpm-store");
    npx(pnpmDir, TOOLS.pnpm9, ["pnpm", "install", "--ignore-scripts", `--store-dir=${store}`]);
    npx(pnpmDir, TOOLS.pnpm9, ["pnpm", "ls", "--recursive", "--depth=Infinity", "--json"], "pnpm-ls.json");
    npx(
      pnpmDir,
      TOOLS.pnpm9,
      ["pnpm", "ls", "--recursive", "--depth=Infinity", "--json", "--prod"],
      "pnpm-ls-prod.json",
    );
    rmSync(join(pnpmDir, "node_modules"), { recursive: true, force: true });
    for (const ws of ["api", "web"])
      rmSync(join(pnpmDir, "packages", ws, "node_modules"), { recursive: true, force: true });
  });
  return { npm: join(root, "npm"), pnpm: join(root, "pnpm") };
}

/**
 * About 2,000 packages: a package.json depending on four real published applications and libraries
 * (firebase-tools 8.4.0, react-scripts 5.0.1, typeorm 0.3.20, mongoose 8.4.0), locked by npm.
 */
export function benchLockfile(): string {
  return cached("bench-2000", (dir) => {
    writeFileSync(
      join(dir, "package.json"),
      `${JSON.stringify(
        {
          name: "bench-app",
          version: "1.0.0",
          private: true,
          dependencies: {
            "firebase-tools": "8.4.0",
            "react-scripts": "5.0.1",
            typeorm: "0.3.20",
            mongoose: "8.4.0",
          },
        },
        null,
        2,
      )}\n`,
    );
    run(dir, "npm", ["install", "--package-lock-only"]);
  });
}

/** @cyclonedx/cyclonedx-npm installed once into the cache; returns its command-line script. */
export function cyclonedxNpmBin(): string {
  const dir = cached("tools-cyclonedx-npm", (work) => {
    run(work, "npm", ["install", "--prefix", work, "--no-save", TOOLS.cyclonedx]);
  });
  return join(dir, "node_modules", "@cyclonedx", "cyclonedx-npm", "bin", "cyclonedx-npm-cli.js");
}

/** name@version of every package.json under a node_modules folder (nested ones included). */
function installedPackages(nodeModules: string): string[] {
  const found = new Set<string>();
  const visitPackage = (dir: string) => {
    const file = join(dir, "package.json");
    if (!existsSync(file)) return;
    const { name, version } = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version?: string };
    if (name && version) found.add(`${name}@${version}`);
    visitFolder(join(dir, "node_modules"));
  };
  const visitFolder = (folder: string) => {
    if (!existsSync(folder)) return;
    for (const entry of readdirSync(folder)) {
      if (entry.startsWith(".")) continue;
      if (entry.startsWith("@"))
        for (const scoped of readdirSync(join(folder, entry))) visitPackage(join(folder, entry, scoped));
      else visitPackage(join(folder, entry));
    }
  };
  visitFolder(nodeModules);
  return [...found].sort();
}

export interface YarnProductionInstall {
  /** What `yarn install --production` put into node_modules (bundled copies included). */
  installed: string[];
}

/** yarn 4's own production install (`yarn workspaces focus --production`) of the firebase-tools yarn.lock. */
export function yarnBerryProductionInstall(): YarnProductionInstall {
  const berry = firebaseTools().yarn.berry;
  const dir = cached("firebase-tools-8.4.0-berry-production", (work) => {
    copy(berry, work, ["package.json", "yarn.lock"]);
    const env = {
      ...TOOL_ENV,
      YARN_NODE_LINKER: "node-modules",
      YARN_ENABLE_SCRIPTS: "false",
      YARN_ENABLE_GLOBAL_CACHE: "false",
      YARN_CACHE_FOLDER: join(SUBJECTS_DIR, "berry-cache"),
    };
    execFileSync(
      "npx",
      ["--yes", `--package=${TOOLS.berry}`, "--", "yarn", "workspaces", "focus", "--production"],
      {
        cwd: work,
        env,
        stdio: "ignore",
        timeout: 600_000,
      },
    );
    const result: YarnProductionInstall = { installed: installedPackages(join(work, "node_modules")) };
    writeFileSync(join(work, "production.json"), `${JSON.stringify(result, null, 2)}\n`);
    rmSync(join(work, "node_modules"), { recursive: true, force: true });
    rmSync(join(work, ".yarn"), { recursive: true, force: true });
  });
  return JSON.parse(readFileSync(join(dir, "production.json"), "utf8")) as YarnProductionInstall;
}

/** yarn 1's own production install of the firebase-tools yarn.lock: the oracle for dev flags. */
export function yarnClassicProductionInstall(): YarnProductionInstall {
  const classic = firebaseTools().yarn.classic;
  const dir = cached("firebase-tools-8.4.0-yarn-production", (work) => {
    copy(classic, work, ["package.json", "yarn.lock"]);
    // yarn 1 says what it skips for this platform on stderr: keep both streams.
    const install = spawnSync(
      "npx",
      [
        "--yes",
        `--package=${TOOLS.yarn1}`,
        "--",
        "yarn",
        "install",
        "--production",
        "--frozen-lockfile",
        "--ignore-scripts",
        "--ignore-engines",
        "--non-interactive",
        `--cache-folder=${join(SUBJECTS_DIR, "yarn-cache")}`,
      ],
      { cwd: work, env: TOOL_ENV, encoding: "utf8", maxBuffer: 64 * 1024 * 1024, timeout: 600_000 },
    );
    if (install.status !== 0)
      throw new Error(`yarn install --production failed: ${install.stderr.slice(-2000)}`);
    writeFileSync(join(work, "yarn-install.log"), `${install.stdout}\n${install.stderr}`);
    const result: YarnProductionInstall = {
      installed: installedPackages(join(work, "node_modules")),
    };
    writeFileSync(join(work, "production.json"), `${JSON.stringify(result, null, 2)}\n`);
    rmSync(join(work, "node_modules"), { recursive: true, force: true });
  });
  return JSON.parse(readFileSync(join(dir, "production.json"), "utf8")) as YarnProductionInstall;
}

export interface YarnWorkspaceSubject {
  dir: string;
  /** What yarn 1 installs for the monorepo (workspaces left out), and with --production. */
  installed: string[];
  production: string[];
}

/** The same monorepo under yarn 1 workspaces: yarn.lock and what yarn itself installs from it. */
export function yarnWorkspaceMonorepo(): YarnWorkspaceSubject {
  const dir = cached("workspace-monorepo-yarn", (work) => {
    writeMonorepo(work, "1.0.0");
    const yarn = (extra: string[]) =>
      npx(work, TOOLS.yarn1, [
        "yarn",
        "install",
        "--ignore-scripts",
        "--non-interactive",
        `--cache-folder=${join(SUBJECTS_DIR, "yarn-cache")}`,
        ...extra,
      ]);
    const own = (list: string[]) => list.filter((p) => !p.startsWith("@shop/"));
    const clean = () => {
      for (const folder of ["node_modules", "packages/api/node_modules", "packages/web/node_modules"]) {
        rmSync(join(work, folder), { recursive: true, force: true });
      }
    };
    yarn([]);
    const installed = own(installedPackages(join(work, "node_modules")));
    clean();
    yarn(["--production", "--frozen-lockfile"]);
    const production = own(installedPackages(join(work, "node_modules")));
    clean();
    writeJson(join(work, "yarn-installs.json"), { installed, production });
  });
  const { installed, production } = JSON.parse(readFileSync(join(dir, "yarn-installs.json"), "utf8"));
  return { dir, installed, production };
}
