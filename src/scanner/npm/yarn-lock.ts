/**
 * yarn.lock: v1 (yarn classic, parsed by @yarnpkg/lockfile) and Berry (yarn 2+, a YAML subset parsed by
 * @yarnpkg/parsers). Entries are keyed by the descriptors (`name@range`) they satisfy; dev dependencies
 * are told apart by walking from the package.json files (see dependency-graph.ts).
 */
import lockfile from "@yarnpkg/lockfile";
import { parseSyml } from "@yarnpkg/parsers";
import { isObject, lineOf } from "../input-files.ts";
import { type InventoryWarning, ScanInputError } from "../inventory.ts";
import { type GraphRoots, type LockNode, registryPackagesFromGraph } from "./dependency-graph.ts";
import type { Manifest } from "./manifest.ts";
import type { LockfileRead } from "./package-lock.ts";

/** `name@range` → [name, range]; scoped names start with `@`. */
export function splitDescriptor(descriptor: string): [string, string] {
  const at = descriptor.indexOf("@", descriptor.startsWith("@") ? 1 : 0);
  if (at <= 0) return [descriptor, ""];
  return [descriptor.slice(0, at), descriptor.slice(at + 1)];
}

export function readYarnLock(text: string, shown: string, manifests: readonly Manifest[]): LockfileRead {
  return /^__metadata:/m.test(text) ? readBerry(text, shown, manifests) : readClassic(text, shown, manifests);
}

function errorLine(message: string): number | undefined {
  const match = /(?:^|\s|\()(\d+):\d+\)?/.exec(message);
  return match ? Number(match[1]) : undefined;
}

/**
 * @yarnpkg/lockfile 1.1.0 counts lines wrongly: its tokenizer takes "\n\n" for one "\r\n" line end, so
 * every blank line before the error shifts its line number by one. Replay its counting to find the
 * file's real line.
 */
function classicErrorLine(text: string, reported: number | undefined): number | undefined {
  if (reported === undefined) return undefined;
  let counted = 1;
  let real = 1;
  for (let i = 0; i < text.length && counted < reported; ) {
    if (text[i] === "\n" || text[i] === "\r") {
      const pair = text[i + 1] === "\n";
      real += (text[i] === "\n" ? 1 : 0) + (pair ? 1 : 0);
      i += pair ? 2 : 1;
      counted++;
    } else i++;
  }
  return real;
}

/**
 * @yarnpkg/lockfile 1.1.0's tokenizer never ends on a string without its closing quote, nor on a comment
 * without a line end after it (each loop reads past the end of the text): the line of the first such
 * string, found by walking the text with the tokenizer's own rules, or undefined. Comments are made
 * safe by the line end readClassic adds.
 */
export function unterminatedStringLine(text: string): number | undefined {
  let line = 1;
  let at = 0;
  const n = text.length;
  while (at < n) {
    const c = text[at] as string;
    if (c === "\n" || c === "\r") {
      at += c === "\r" && text[at + 1] === "\n" ? 2 : 1;
      line++;
    } else if (c === "#") {
      const end = text.indexOf("\n", at);
      if (end < 0) return undefined;
      at = end;
    } else if (c === '"') {
      let i = at + 1;
      for (; i < n; i++) {
        if (text[i] === '"' && !(text[i - 1] === "\\" && text[i - 2] !== "\\")) break;
      }
      if (i >= n) return line;
      for (let k = at; k < i; k++) if (text[k] === "\n" || (text[k] === "\r" && text[k + 1] !== "\n")) line++;
      at = i + 1;
    } else if (text.startsWith("true", at) || text.startsWith("false", at)) {
      at += text.startsWith("true", at) ? 4 : 5;
    } else if (/[a-zA-Z/-]/.test(c)) {
      while (at < n && !/[: \n\r,]/.test(text[at] as string)) at++;
    } else at++;
  }
  return undefined;
}

function readClassic(text: string, shown: string, manifests: readonly Manifest[]): LockfileRead {
  const unterminated = unterminatedStringLine(text);
  if (unterminated !== undefined) {
    throw new ScanInputError(
      shown,
      "not a valid yarn v1 lockfile: a string has no closing quote",
      unterminated,
    );
  }
  let parsed: ReturnType<typeof lockfile.parse>;
  try {
    parsed = lockfile.parse(text.endsWith("\n") ? text : `${text}\n`, shown);
  } catch (error) {
    const message = (error as Error).message.split("\n")[0] ?? "";
    throw new ScanInputError(
      shown,
      `not a valid yarn v1 lockfile: ${message.replace(/\s*\d+:\d+ in .*$/, "")}`,
      classicErrorLine(text, errorLine(message)),
    );
  }
  if (parsed.type !== "success") {
    throw new ScanInputError(shown, "has unresolved merge conflicts", lineOf(text, "<<<<<<<"));
  }
  const byDescriptor = new Map<string, string>();
  const nodes = new Map<string, LockNode>();
  const pending: [string, Record<string, unknown>][] = [];
  for (const [descriptor, entry] of Object.entries(parsed.object)) {
    if (!isObject(entry) || typeof entry.version !== "string") {
      throw new ScanInputError(shown, `entry "${descriptor}" has no version`, lineOf(text, descriptor));
    }
    let [name, range] = splitDescriptor(descriptor);
    if (range.startsWith("npm:")) [name] = splitDescriptor(range.slice(4)); // alias: the real package
    const id = `${name}@${entry.version}`;
    byDescriptor.set(descriptor, id);
    if (!nodes.has(id)) {
      nodes.set(id, { name, version: entry.version, dependencies: [], optionalDependencies: [] });
      pending.push([id, entry]);
    }
  }
  for (const [id, entry] of pending) {
    const node = nodes.get(id) as LockNode;
    for (const field of ["dependencies", "optionalDependencies"] as const) {
      const deps = entry[field];
      if (!isObject(deps)) continue;
      const edges = field === "dependencies" ? node.dependencies : node.optionalDependencies;
      for (const [dep, range] of Object.entries(deps)) {
        const target = byDescriptor.get(`${dep}@${range}`);
        if (target) edges.push(target);
      }
    }
  }
  const roots = rootsOf(manifests, (name, range) => byDescriptor.get(`${name}@${range}`));
  return finish(nodes, roots, shown, manifests);
}

function readBerry(text: string, shown: string, manifests: readonly Manifest[]): LockfileRead {
  let parsed: Record<string, unknown>;
  try {
    parsed = parseSyml(text);
  } catch (error) {
    const message = (error as Error).message.split("\n")[0] ?? "";
    throw new ScanInputError(
      shown,
      `not a valid yarn lockfile: ${message.replace(/\s*\(\d+:\d+\)$/, "")}`,
      errorLine(message),
    );
  }
  const byDescriptor = new Map<string, string>();
  const nodes = new Map<string, LockNode>();
  const entries: [string, Record<string, unknown>][] = [];
  for (const [key, entry] of Object.entries(parsed)) {
    if (key === "__metadata") continue;
    if (!isObject(entry) || typeof entry.resolution !== "string" || entry.version === undefined) {
      throw new ScanInputError(shown, `entry "${key}" has no resolution or version`, lineOf(text, key));
    }
    const resolution = entry.resolution;
    const [name, reference] = splitDescriptor(resolution);
    const protocol = /^([a-z]+):/.exec(reference)?.[1] ?? "npm";
    const own = ["workspace", "link", "portal", "file"].includes(protocol);
    for (const descriptor of key.split(",")) byDescriptor.set(descriptor.trim(), resolution);
    nodes.set(resolution, {
      name,
      version: String(entry.version),
      dependencies: [],
      optionalDependencies: [],
      own,
    });
    entries.push([resolution, entry]);
  }
  for (const [resolution, entry] of entries) {
    const node = nodes.get(resolution) as LockNode;
    for (const field of ["dependencies", "optionalDependencies"] as const) {
      const deps = entry[field];
      if (!isObject(deps)) continue;
      const edges = field === "dependencies" ? node.dependencies : node.optionalDependencies;
      for (const [dep, range] of Object.entries(deps)) {
        const target = byDescriptor.get(`${dep}@${String(range)}`);
        if (target) edges.push(target);
      }
    }
  }
  // yarn applies its builtin patches (typescript, resolve, fsevents) to the entry they patch without any
  // entry naming the patched one: it is a dependency of whatever depends on the original.
  for (const [resolution] of entries) {
    const patched = /^(?:@[^/]+\/)?[^@]+@patch:(.+?)(?:#|$)/.exec(resolution)?.[1];
    const original = patched ? resolutionOf(byDescriptor, decodeURIComponent(patched)) : undefined;
    if (original && original !== resolution) nodes.get(original)?.dependencies.push(resolution);
  }
  // package.json ranges carry no protocol; the lockfile's descriptors say `npm:` for registry ones.
  const berryRange = (range: string) => (/^[a-z]+:/.test(range) ? range : `npm:${range}`);
  const roots = rootsOf(manifests, (name, range) => byDescriptor.get(`${name}@${berryRange(range)}`));
  return finish(nodes, roots, shown, manifests);
}

/** The resolution a patch's inner reference names: a descriptor (`resolve@npm:^1`) or a resolution. */
function resolutionOf(byDescriptor: Map<string, string>, reference: string): string | undefined {
  return byDescriptor.get(reference) ?? [...byDescriptor.values()].find((r) => r === reference);
}

function rootsOf(
  manifests: readonly Manifest[],
  resolve: (name: string, range: string) => string | undefined,
): GraphRoots | undefined {
  if (manifests.length === 0) return undefined;
  const roots = {
    production: [] as string[],
    dev: [] as string[],
    optional: [] as string[],
    peer: [] as string[],
  };
  for (const manifest of manifests) {
    for (const [field, list] of [
      [manifest.dependencies, roots.production],
      [manifest.optional, roots.optional],
      [manifest.peer, roots.peer],
      [manifest.dev, roots.dev],
    ] as const) {
      for (const [name, range] of Object.entries(field)) {
        const id = resolve(name, range);
        if (id) list.push(id);
      }
    }
  }
  return roots;
}

function finish(
  nodes: Map<string, LockNode>,
  roots: GraphRoots | undefined,
  shown: string,
  manifests: readonly Manifest[],
): LockfileRead {
  const warnings: InventoryWarning[] = [];
  if (manifests.length === 0) {
    warnings.push({
      file: shown,
      message: "no package.json beside the lockfile: dev dependencies cannot be told apart",
    });
  }
  const packages = registryPackagesFromGraph(nodes, roots, shown, warnings);
  return { packages, warnings };
}
