/**
 * One application per scan. A scanned tree may hold several projects: the application itself (its
 * lockfile and workspaces, its root POM and modules, its Gradle build and included projects) and others
 * found below it — scaffolding templates, examples and test fixtures with their own package.json and
 * lockfile, as published npm packages carry them. Only the application's inputs are read; every other
 * project is listed as skipped with its path and the reason, unless `--all-projects` asks for them too.
 *
 * Projects: the folder of an npm lockfile (members: its workspaces), of a package.json without one (no
 * input, but a project boundary), of a pom.xml (members: its modules, profiles' included), and of a
 * Gradle build (settings.gradle[.kts]: its included projects and builds; else build.gradle[.kts] or a
 * gradle.lockfile alone). The application is the projects at the scanned folder; when the scanned folder
 * is none, the projects nearest to it (inside no other one: `frontend/` and `backend/` of one
 * repository). A project whose folder is a member of another ecosystem's project (the package-lock.json
 * of a Maven module) is part of that project's application.
 */
import { readFileSync } from "node:fs";
import { join, posix } from "node:path";
import { parse as parseYaml } from "yaml";
import { isObject } from "./input-files.ts";
import { parsePom } from "./maven/pom-xml.ts";
import { expandWorkspaces } from "./npm/manifest.ts";
import { isSampleFolder } from "./walk.ts";

export interface SkippedProject {
  /** The project's input as the scan would have read it (`templates/ts/yarn.lock`), relative. */
  path: string;
  reason: string;
}

export interface ProjectSelection {
  /** The walk's files that belong to the application (or to every project, with allProjects). */
  files: string[];
  skipped: SkippedProject[];
  /** Projects of the application that have nothing to read (a package.json without a lockfile). */
  warnings: { file: string; message: string }[];
}

type Kind = "npm" | "maven" | "gradle" | "manifest";

interface Project {
  kind: Kind;
  /** Folder relative to the scanned root, "" for the root itself. */
  folder: string;
  /** The file that makes it a project (shown in messages). */
  marker: string;
  /** Folders of the project: its own and its workspaces, modules or included projects. */
  members: Set<string>;
  /** Set when the project is never a candidate (a POM under another project's src/). */
  never?: string;
}

const NPM_LOCKFILES = ["npm-shrinkwrap.json", "package-lock.json", "pnpm-lock.yaml", "yarn.lock"];
const GRADLE_SETTINGS = ["settings.gradle", "settings.gradle.kts"];
const GRADLE_MARKERS = [...GRADLE_SETTINGS, "build.gradle", "build.gradle.kts", "gradle.lockfile"];
const LEGACY_GRADLE_LOCKFILE = /^(.*?)\/?gradle\/dependency-locks\/[^/]+\.lockfile$/;

const folderOf = (file: string) => (file.includes("/") ? file.slice(0, file.lastIndexOf("/")) : "");
const nameOf = (file: string) => file.slice(file.lastIndexOf("/") + 1);
const joinFolder = (a: string, b: string) => posix.normalize(a === "" ? b : `${a}/${b}`).replace(/\/$/, "");
/** Whether `folder` is `ancestor` or lies inside it. */
const within = (folder: string, ancestor: string) =>
  ancestor === "" || folder === ancestor || folder.startsWith(`${ancestor}/`);

const NOUN: Record<Kind, string> = {
  npm: "workspaces",
  manifest: "workspaces",
  maven: "modules",
  gradle: "included projects",
};

/**
 * Splits the walk's files (relative, `/`-separated) into the application's and the skipped projects'.
 * `root` is the scanned folder (absolute).
 */
export function selectApplication(
  root: string,
  files: readonly string[],
  options: { allProjects: boolean },
): ProjectSelection {
  const projects = findProjects(root, files);
  const application = new Set<Project>();
  const skipped: SkippedProject[] = [];
  const candidates = projects.filter((p) => p.never === undefined);

  // Same-ecosystem members are no projects of their own (a module's POM, a workspace's package.json).
  const memberOf = (p: Project, kinds: readonly Kind[]) =>
    candidates.find((q) => q !== p && kinds.includes(q.kind) && q.members.has(p.folder));
  const own = candidates.filter((p) => {
    if (p.kind === "maven") return memberOf(p, ["maven"]) === undefined;
    if (p.kind === "manifest") return memberOf(p, ["npm", "manifest"]) === undefined;
    if (p.kind === "gradle") return memberOf(p, ["gradle"]) === undefined;
    return true;
  });
  const workspaceLock = new Map<Project, Project>();
  for (const p of own) {
    if (p.kind !== "npm") continue;
    const parent = memberOf(p, ["npm"]);
    if (parent && parent.folder !== p.folder) workspaceLock.set(p, parent);
  }
  const units = own.filter((p) => !workspaceLock.has(p));

  const atRoot = units.filter((p) => p.folder === "" && !isSampleFolder(p.folder));
  const nearest = units.filter(
    (p) =>
      !isSampleFolder(p.folder) &&
      !units.some((q) => q !== p && q.folder !== p.folder && within(p.folder, q.folder)),
  );
  for (const p of atRoot.length > 0 ? atRoot : nearest) application.add(p);
  // Projects at the root of a member folder of another ecosystem's project of the application join it.
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of units) {
      if (application.has(p)) continue;
      if ([...application].some((a) => a.kind !== p.kind && a.members.has(p.folder))) {
        application.add(p);
        grew = true;
      }
    }
  }

  const included = new Set<Project>(options.allProjects ? units : application);
  const warnings: ProjectSelection["warnings"] = [];
  for (const p of units) {
    if (included.has(p)) {
      if (p.kind === "manifest" && p.folder !== "") {
        warnings.push({
          file: p.marker,
          message: "no lockfile beside it: its npm dependencies are not listed",
        });
      }
      continue;
    }
    if (p.kind === "manifest") continue; // nothing would have been read from it
    skipped.push({ path: p.marker, reason: reasonOf(p, application) });
  }
  for (const [p, parent] of workspaceLock) {
    skipped.push({
      path: p.marker,
      reason: `a lockfile inside ${parent.folder === "" ? "the" : `${parent.folder}/'s`} workspace ${p.folder}: npm, yarn and pnpm read only ${parent.marker}`,
    });
  }
  for (const p of projects) {
    if (p.never !== undefined) skipped.push({ path: p.marker, reason: p.never });
  }
  skipped.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));

  // Every file goes with the project whose member folder is nearest above it.
  const owners = new Map<string, Project>();
  for (const p of [...units, ...workspaceLock.keys()]) {
    for (const member of p.members) {
      const seen = owners.get(member);
      // A member claimed twice (a Maven module that is also an npm workspace): the application wins.
      if (!seen || (!included.has(seen) && included.has(p))) owners.set(member, p);
    }
  }
  for (const p of projects) if (p.never !== undefined && !owners.has(p.folder)) owners.set(p.folder, p);
  const ownerCache = new Map<string, Project | null>();
  const ownerOf = (folder: string): Project | null => {
    const cached = ownerCache.get(folder);
    if (cached !== undefined) return cached;
    const found = owners.get(folder) ?? (folder === "" ? null : ownerOf(folderOf(folder)));
    ownerCache.set(folder, found);
    return found;
  };
  const kept = files.filter((file) => {
    const owner = ownerOf(folderOf(file));
    if (owner === null) return !isSampleFolder(folderOf(file));
    if (!included.has(owner)) return false;
    // Sample folders (examples, fixtures) hold no code of the application unless a project of its own.
    return !isSampleFolder(folderOf(file)) || isSampleFolder(owner.folder);
  });
  return { files: kept, skipped, warnings };
}

function reasonOf(p: Project, application: ReadonlySet<Project>): string {
  if (isSampleFolder(p.folder))
    return "an example or test fixture: a project of its own, not the application";
  const around = [...application]
    .filter((a) => within(p.folder, a.folder))
    .sort((a, b) => b.folder.length - a.folder.length)[0];
  if (!around) return "a project of its own beside the application, not part of it";
  return `a project of its own inside the application, not one of the ${NOUN[around.kind]} of ${around.marker}`;
}

function findProjects(root: string, files: readonly string[]): Project[] {
  const byFolder = new Map<string, Set<string>>();
  const legacyGradle = new Map<string, string>();
  for (const file of files) {
    const folder = folderOf(file);
    const names = byFolder.get(folder) ?? new Set<string>();
    names.add(nameOf(file));
    byFolder.set(folder, names);
    const legacy = LEGACY_GRADLE_LOCKFILE.exec(file);
    if (legacy && !legacyGradle.has(legacy[1] as string)) legacyGradle.set(legacy[1] as string, file);
  }
  const projects: Project[] = [];
  const pomFolders = new Set<string>();
  for (const [folder, names] of byFolder) if (names.has("pom.xml")) pomFolders.add(folder);

  for (const [folder, names] of byFolder) {
    const at = (name: string) => (folder === "" ? name : `${folder}/${name}`);
    const lockfile = NPM_LOCKFILES.find((n) => names.has(n));
    if (lockfile) {
      projects.push({ kind: "npm", folder, marker: at(lockfile), members: npmMembers(root, folder) });
    } else if (names.has("package.json")) {
      projects.push({
        kind: "manifest",
        folder,
        marker: at("package.json"),
        members: npmMembers(root, folder),
      });
    }
    if (names.has("pom.xml")) {
      const container = [...pomFolders].find(
        (other) => other !== folder && within(folder, joinFolder(other, "src")),
      );
      projects.push({
        kind: "maven",
        folder,
        marker: at("pom.xml"),
        members: mavenMembers(root, folder),
        ...(container === undefined
          ? {}
          : {
              never: `under the src/ folder of ${container === "" ? "" : `${container}/`}pom.xml: a test resource or an archetype template, never read`,
            }),
      });
    }
    const gradle = GRADLE_MARKERS.find((n) => names.has(n));
    if (gradle || legacyGradle.has(folder)) {
      const marker = names.has("gradle.lockfile")
        ? at("gradle.lockfile")
        : (legacyGradle.get(folder) ?? at(gradle as string));
      projects.push({ kind: "gradle", folder, marker, members: gradleMembers(root, folder, names) });
    }
  }
  for (const [folder, file] of legacyGradle) {
    if (!byFolder.has(folder)) {
      projects.push({ kind: "gradle", folder, marker: file, members: new Set([folder]) });
    }
  }
  return projects.sort((a, b) => (a.folder < b.folder ? -1 : a.folder > b.folder ? 1 : 0));
}

function readOptional(root: string, file: string): string | undefined {
  try {
    return readFileSync(join(root, file), "utf8");
  } catch {
    return undefined;
  }
}

/** The folder and its workspaces (package.json `workspaces`, pnpm-workspace.yaml `packages`). */
function npmMembers(root: string, folder: string): Set<string> {
  const members = new Set([folder]);
  const patterns: string[] = [];
  try {
    const manifest = JSON.parse(readOptional(root, joinFolder(folder, "package.json")) ?? "{}") as unknown;
    const workspaces = isObject(manifest) ? manifest.workspaces : undefined;
    const list = Array.isArray(workspaces)
      ? workspaces
      : isObject(workspaces) && Array.isArray(workspaces.packages)
        ? workspaces.packages
        : [];
    patterns.push(...list.filter((w): w is string => typeof w === "string"));
  } catch {
    // a malformed package.json is reported by the reader that reads it
  }
  try {
    const pnpm = parseYaml(readOptional(root, joinFolder(folder, "pnpm-workspace.yaml")) ?? "") as unknown;
    if (isObject(pnpm) && Array.isArray(pnpm.packages)) {
      for (const p of pnpm.packages) if (typeof p === "string") patterns.push(p);
    }
  } catch {
    // idem
  }
  if (patterns.length === 0) return members;
  for (const ws of expandWorkspaces(join(root, folder), patterns)) members.add(joinFolder(folder, ws));
  return members;
}

/** The POM's folder and its modules', recursively (profiles' modules included: any may be activated). */
function mavenMembers(root: string, folder: string): Set<string> {
  const members = new Set<string>();
  const visit = (at: string) => {
    if (members.has(at)) return;
    members.add(at);
    const text = readOptional(root, joinFolder(at, "pom.xml"));
    if (text === undefined) return;
    let modules: string[];
    try {
      const pom = parsePom(text);
      modules = [...pom.modules, ...pom.profiles.flatMap((p) => p.modules)];
    } catch {
      return; // the reader reports the malformed POM
    }
    for (const module of modules) {
      // A module names a folder, or a POM file in one.
      const path = joinFolder(at, module.trim().replace(/\\/g, "/"));
      const moduleFolder = /\.xml$/i.test(path) ? folderOf(path) : path;
      if (!moduleFolder.startsWith("..")) visit(moduleFolder === "." ? "" : moduleFolder);
    }
  };
  visit(folder);
  return members;
}

/** The build's folder and those of its included projects and builds (settings.gradle[.kts]). */
function gradleMembers(root: string, folder: string, names: ReadonlySet<string>): Set<string> {
  const members = new Set([folder]);
  const settingsName = GRADLE_SETTINGS.find((n) => names.has(n));
  if (!settingsName) return members;
  const text = (readOptional(root, joinFolder(folder, settingsName)) ?? "")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/\/\/.*$/gm, "");
  const dirs = new Map<string, string>();
  for (const m of text.matchAll(
    /project\(\s*["']([^"']+)["']\s*\)\.projectDir\s*=\s*(?:file\(\s*|new\s+File\(\s*settingsDir\s*,\s*)["']([^"']+)["']/g,
  )) {
    dirs.set((m[1] as string).replace(/^:/, ""), m[2] as string);
  }
  for (const statement of text.matchAll(/\b(include|includeBuild)\b\s*\(?([^\n)]*)/g)) {
    for (const quoted of (statement[2] as string).matchAll(/["']([^"']+)["']/g)) {
      const path = quoted[1] as string;
      const dir =
        statement[1] === "includeBuild"
          ? path
          : (dirs.get(path.replace(/^:/, "")) ?? path.replace(/^:/, "").replaceAll(":", "/"));
      const member = joinFolder(folder, dir);
      if (!member.startsWith("..")) members.add(member === "." ? "" : member);
    }
  }
  return members;
}
