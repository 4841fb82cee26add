/**
 * The scanner's npm evaluation corpus (npm run bench:scan:accuracy): real published applications, each
 * fetched from the npm registry with `npm pack`, locked by npm (or by the npm-shrinkwrap.json it ships),
 * installed once by `npm ci --ignore-scripts` to ask npm itself what the application is made of, then
 * cached under ~/.cache/imaging-ci/scan-subjects/corpus/npm/<subject> with the installed tree removed:
 *
 *   <subject>/app/                 the application as published (scripts removed), with its lockfile: the
 *                                  scanned input, given to our scanner and to every peer
 *   <subject>/npm-ls.json          `npm ls --all --json` on the installed tree (dev packages included)
 *   <subject>/npm-ls-prod.json     `npm ls --all --json --omit=dev` on the same tree
 *   <subject>/platform.json        lockfile packages npm skipped here only because their os/cpu/libc
 *                                  exclude this machine (optional, e.g. fsevents): part of the
 *                                  application on another platform, so part of the oracle
 *   <subject>/resolution.json      for every folder of the application holding code, the version
 *                                  Node.js loads for each package installed at several versions
 *                                  (Module._nodeModulePaths on the installed tree): the per-version oracle
 *
 * None of these subjects is used by the other tests (firebase-tools, json-server, typeorm, react-scripts and
 * mongoose are).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative, sep } from "node:path";
import { cached } from "../scan-subjects.ts";

export interface NpmCorpusSubject {
  /** Folder name in the cache. */
  id: string;
  /** What `npm pack` fetches. */
  spec: string;
  /** Keep the published devDependencies (they are then locked, installed and listed like the others). */
  keepDev: boolean;
  /** Why this subject is in the corpus. */
  why: string;
}

/** The corpus, smallest first within each kind. */
export const NPM_CORPUS: readonly NpmCorpusSubject[] = [
  {
    id: "express-generator-4.16.1",
    spec: "express-generator@4.16.1",
    keepDev: true,
    why: "a generator with templates; devDependencies kept (mocha, supertest...)",
  },
  { id: "localtunnel-2.0.2", spec: "localtunnel@2.0.2", keepDev: true, why: "small CLI, dev kept" },
  { id: "http-server-14.1.1", spec: "http-server@14.1.1", keepDev: true, why: "static server, dev kept" },
  { id: "nodemon-3.0.3", spec: "nodemon@3.0.3", keepDev: true, why: "dev kept; semver/debug duplicates" },
  { id: "jsdoc-4.0.2", spec: "jsdoc@4.0.2", keepDev: false, why: "CLI, lib/ + templates/" },
  { id: "mocha-10.2.0", spec: "mocha@10.2.0", keepDev: false, why: "test runner CLI" },
  { id: "eslint-8.56.0", spec: "eslint@8.56.0", keepDev: false, why: "CLI, lib/ with many modules" },
  { id: "node-red-3.1.3", spec: "node-red@3.1.3", keepDev: false, why: "server built from @node-red/*" },
  { id: "gatsby-cli-5.13.1", spec: "gatsby-cli@5.13.1", keepDev: false, why: "CLI, Babel output in lib/" },
  { id: "pm2-5.3.1", spec: "pm2@5.3.1", keepDev: false, why: "process manager; nested duplicates" },
  { id: "11ty-eleventy-2.0.1", spec: "@11ty/eleventy@2.0.1", keepDev: false, why: "scoped name, src/" },
  { id: "nestjs-cli-10.3.2", spec: "@nestjs/cli@10.3.2", keepDev: false, why: "TypeScript output, webpack" },
  { id: "sails-1.5.8", spec: "sails@1.5.8", keepDev: false, why: "web framework CLI, generators" },
  { id: "parse-server-6.4.0", spec: "parse-server@6.4.0", keepDev: false, why: "API server, Babel output" },
  { id: "serverless-3.38.0", spec: "serverless@3.38.0", keepDev: false, why: "large CLI (aws-sdk...)" },
  {
    id: "netlify-cli-12.2.7",
    spec: "netlify-cli@12.2.7",
    keepDev: false,
    why: "ships its own npm-shrinkwrap.json and seven function templates with their own package-lock.json",
  },
];

export const CORPUS_NPM_ENV = {
  ...process.env,
  npm_config_ignore_scripts: "true",
  npm_config_audit: "false",
  npm_config_fund: "false",
  npm_config_update_notifier: "false",
  npm_config_loglevel: "error",
};

function npm(cwd: string, args: string[], what: string): string {
  const result = spawnSync("npm", args, {
    cwd,
    env: CORPUS_NPM_ENV,
    encoding: "utf8",
    maxBuffer: 512 * 1024 * 1024,
    timeout: 1_200_000,
  });
  if (result.error) throw new Error(`corpus setup: cannot run npm (${result.error.message})`);
  // npm ls exits 1 on peer-dependency problems yet prints the whole tree: keep what it printed.
  if (result.status !== 0 && !(args[0] === "ls" && result.stdout.trim().startsWith("{"))) {
    throw new Error(
      `corpus setup: ${what}: npm ${args.join(" ")} failed in ${cwd}: ${result.stderr.slice(-1500)}`,
    );
  }
  return result.stdout;
}

const CODE_FILE = /\.(?:js|mjs|cjs|jsx|ts|mts|cts|tsx)$/;

/** Folders (relative, `/`-separated, "" for the root) of the application that hold code files. */
function codeFolders(app: string): string[] {
  const found = new Set<string>();
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules" && !entry.name.startsWith(".")) visit(join(dir, entry.name));
      } else if (CODE_FILE.test(entry.name)) found.add(relative(app, dir).split(sep).join("/"));
    }
  };
  visit(app);
  return [...found].sort();
}

interface LockEntry {
  version?: string;
  name?: string;
  optional?: boolean;
  link?: boolean;
  dev?: boolean;
}

function lockPackages(app: string): Record<string, LockEntry> {
  const file = existsSync(join(app, "npm-shrinkwrap.json"))
    ? join(app, "npm-shrinkwrap.json")
    : join(app, "package-lock.json");
  return (JSON.parse(readFileSync(file, "utf8")) as { packages?: Record<string, LockEntry> }).packages ?? {};
}

const nameOf = (path: string, entry: LockEntry) =>
  entry.name ?? path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length);

/** The installed version Node.js loads for `name` from a file in `folder`, per its own lookup paths. */
function loadedVersion(app: string, folder: string, name: string): string | undefined {
  const from = createRequire(join(app, folder, "__corpus__.js"));
  for (const base of from.resolve.paths(name) ?? []) {
    if (!base.startsWith(app)) break; // the application's own tree only
    const manifest = join(base, name, "package.json");
    if (existsSync(manifest))
      return (JSON.parse(readFileSync(manifest, "utf8")) as { version?: string }).version;
  }
  return undefined;
}

/** Prepares one subject (once; cached) and returns its folder. */
export function npmCorpusSubject(subject: NpmCorpusSubject): string {
  return cached(join("corpus", "npm", subject.id), (work) => {
    const app = join(work, "app");
    npm(work, ["pack", subject.spec, "--silent"], subject.id);
    const tarball = readdirSync(work).find((f) => f.endsWith(".tgz"));
    if (!tarball) throw new Error(`corpus setup: npm pack ${subject.spec} wrote no tarball`);
    execFileSync("mkdir", ["-p", app]);
    execFileSync("tar", ["xzf", join(work, tarball), "-C", app, "--strip-components=1"]);
    rmSync(join(work, tarball));
    const manifestFile = join(app, "package.json");
    const manifest = JSON.parse(readFileSync(manifestFile, "utf8")) as Record<string, unknown>;
    delete manifest.scripts;
    const shrinkwrapped = existsSync(join(app, "npm-shrinkwrap.json"));
    // a shipped shrinkwrap is the application's own lockfile: npm ci needs package.json to agree with it
    if (!subject.keepDev && !shrinkwrapped) delete manifest.devDependencies;
    writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
    if (!shrinkwrapped) npm(app, ["install", "--package-lock-only"], subject.id);
    npm(app, ["ci"], subject.id);
    writeFileSync(join(work, "npm-ls.json"), npm(app, ["ls", "--all", "--json"], subject.id));
    writeFileSync(
      join(work, "npm-ls-prod.json"),
      npm(app, ["ls", "--all", "--json", "--omit=dev"], subject.id),
    );

    const packages = lockPackages(app);
    const platform: string[] = [];
    const versionsByName = new Map<string, Set<string>>();
    for (const [path, entry] of Object.entries(packages)) {
      if (!path.includes("node_modules/") || entry.link || !entry.version) continue;
      const name = nameOf(path, entry);
      versionsByName.set(name, (versionsByName.get(name) ?? new Set()).add(entry.version));
      if (!existsSync(join(app, path, "package.json")) && entry.optional) {
        platform.push(`${name}@${entry.version}${entry.dev ? " dev" : ""}`);
      }
    }
    writeFileSync(join(work, "platform.json"), `${JSON.stringify(platform.sort(), null, 2)}\n`);
    const duplicated = [...versionsByName].filter(([, v]) => v.size > 1).map(([n]) => n);
    const resolution: Record<string, Record<string, string>> = {};
    for (const folder of codeFolders(app)) {
      const loaded: Record<string, string> = {};
      for (const name of duplicated) {
        const version = loadedVersion(app, folder, name);
        if (version) loaded[name] = version;
      }
      resolution[folder] = loaded;
    }
    writeFileSync(join(work, "resolution.json"), `${JSON.stringify(resolution)}\n`);
    rmSync(join(app, "node_modules"), { recursive: true, force: true });
  });
}

export interface NpmOracle {
  /** name@version of every package npm installed (dev included), plus other platforms' optional ones. */
  all: Set<string>;
  /** The same without dev packages (npm ls --omit=dev). */
  production: Set<string>;
  /** Of `all`, those only other platforms install. */
  platform: Set<string>;
  /** Code folder → package → the version Node.js loads there (packages installed at several versions). */
  resolution: Record<string, Record<string, string>>;
}

/** `name@version` of every package of an `npm ls --json` tree (workspaces and links left out). */
export function npmLsPackages(file: string): Set<string> {
  const found = new Set<string>();
  type Node = { version?: string; resolved?: string; dependencies?: Record<string, Node>; missing?: boolean };
  const visit = (deps: Record<string, Node> | undefined) => {
    for (const [name, dep] of Object.entries(deps ?? {})) {
      if (dep.version && !dep.missing && !dep.resolved?.startsWith("file:"))
        found.add(`${name}@${dep.version}`);
      visit(dep.dependencies);
    }
  };
  visit((JSON.parse(readFileSync(file, "utf8")) as Node).dependencies);
  return found;
}

export function npmOracle(dir: string): NpmOracle {
  const platformLines = JSON.parse(readFileSync(join(dir, "platform.json"), "utf8")) as string[];
  const platform = new Set(platformLines.map((l) => l.replace(/ dev$/, "")));
  const all = npmLsPackages(join(dir, "npm-ls.json"));
  const production = npmLsPackages(join(dir, "npm-ls-prod.json"));
  for (const line of platformLines) {
    const id = line.replace(/ dev$/, "");
    all.add(id);
    if (!line.endsWith(" dev")) production.add(id);
  }
  return {
    all,
    production,
    platform,
    resolution: JSON.parse(readFileSync(join(dir, "resolution.json"), "utf8")),
  };
}
