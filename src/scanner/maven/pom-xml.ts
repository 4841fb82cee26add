/**
 * A POM as written (no inheritance, no interpolation): only the parts dependency resolution reads.
 * fast-xml-parser keeps every value a string (`1.10` must stay `1.10`, not the number 1.1).
 */
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { printable } from "../../domain/printable-text.ts";

interface RawExclusion {
  groupId: string;
  artifactId: string;
}

export interface RawDependency {
  groupId?: string;
  artifactId?: string;
  version?: string;
  type?: string;
  classifier?: string;
  scope?: string;
  optional?: string;
  systemPath?: string;
  exclusions: RawExclusion[];
}

interface RawParent {
  groupId?: string;
  artifactId?: string;
  version?: string;
  /** undefined = the default `../pom.xml`; "" = explicitly none (look in repositories only). */
  relativePath?: string;
}

export interface RawActivation {
  activeByDefault: boolean;
  jdk?: string;
  os?: { name?: string; family?: string; arch?: string; version?: string };
  property?: { name?: string; value?: string };
  file?: { exists?: string; missing?: string };
}

/** What both a POM and its profiles may contribute. */
export interface RawModelBase {
  properties: Map<string, string>;
  dependencies: RawDependency[];
  dependencyManagement: RawDependency[];
  modules: string[];
}

export interface RawProfile extends RawModelBase {
  id: string;
  activation?: RawActivation;
}

export interface RawPom extends RawModelBase {
  groupId?: string;
  artifactId?: string;
  version?: string;
  packaging?: string;
  parent?: RawParent;
  profiles: RawProfile[];
  relocation?: { groupId?: string; artifactId?: string; version?: string };
}

/** A POM that is not well-formed XML or not a `<project>`; `line` when the parser knows it. */
export class PomSyntaxError extends Error {
  override name = "PomSyntaxError";
  readonly line: number | undefined;
  constructor(message: string, line?: number) {
    // the XML parser's messages quote the input (tag and attribute names)
    super(printable(message));
    this.line = line;
  }
}

const parser = new XMLParser({
  ignoreAttributes: true,
  parseTagValue: false,
  trimValues: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  removeNSPrefix: true,
  processEntities: true,
  isArray: (_name, jpath) => ARRAY_PATHS.test(String(jpath)),
  // kept as unparsed text: most of a POM's bytes, never read for dependency resolution
  stopNodes: [
    "*.build",
    "*.reporting",
    "*.developers",
    "*.contributors",
    "*.mailingLists",
    "*.licenses",
    "*.scm",
    "*.description",
    "*.pluginRepositories",
    "*.repositories",
  ],
});

// Elements that may repeat; everything else is read as a single value.
const ARRAY_PATHS =
  /(?:^|\.)(?:dependencies\.dependency|exclusions\.exclusion|modules\.module|profiles\.profile)$/;

type Node = Record<string, unknown>;

function text(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  // <version><!-- comment --></version> and similar come back as objects or "" : treat as absent
  return undefined;
}

function child(node: unknown, name: string): Node | undefined {
  if (node === null || typeof node !== "object") return undefined;
  const value = (node as Node)[name];
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Node) : undefined;
}

function list(node: unknown, container: string, item: string): unknown[] {
  const holder = child(node, container);
  const items = holder?.[item];
  return Array.isArray(items) ? items : [];
}

function field(node: unknown, name: string): string | undefined {
  if (node === null || typeof node !== "object") return undefined;
  const value = text((node as Node)[name]);
  return value === "" ? undefined : value;
}

function readDependency(node: unknown): RawDependency {
  return {
    groupId: field(node, "groupId"),
    artifactId: field(node, "artifactId"),
    version: field(node, "version"),
    type: field(node, "type"),
    classifier: field(node, "classifier"),
    scope: field(node, "scope"),
    optional: field(node, "optional"),
    systemPath: field(node, "systemPath"),
    exclusions: list(node, "exclusions", "exclusion").map((e) => ({
      groupId: field(e, "groupId") ?? "*",
      artifactId: field(e, "artifactId") ?? "*",
    })),
  };
}

function readBase(node: unknown): RawModelBase {
  const properties = new Map<string, string>();
  const props = child(node, "properties");
  if (props) {
    for (const [name, value] of Object.entries(props)) {
      // <empty/> is "", nested elements (never meaningful as a property) are skipped; a property written
      // twice is read as an array, and Maven keeps the last one
      const v = text(Array.isArray(value) ? value.at(-1) : value);
      if (v !== undefined) properties.set(name, v);
    }
  }
  return {
    properties,
    dependencies: list(node, "dependencies", "dependency").map(readDependency),
    dependencyManagement: list(child(node, "dependencyManagement"), "dependencies", "dependency").map(
      readDependency,
    ),
    modules: list(node, "modules", "module")
      .map(text)
      .filter((m): m is string => m !== undefined && m !== ""),
  };
}

function readActivation(node: unknown): RawActivation | undefined {
  const activation = child(node, "activation");
  if (!activation) return undefined;
  const os = child(activation, "os");
  const property = child(activation, "property");
  const file = child(activation, "file");
  return {
    activeByDefault: field(activation, "activeByDefault") === "true",
    jdk: field(activation, "jdk"),
    os: os && {
      name: field(os, "name"),
      family: field(os, "family"),
      arch: field(os, "arch"),
      version: field(os, "version"),
    },
    property: property && { name: field(property, "name"), value: field(property, "value") },
    file: file && { exists: field(file, "exists"), missing: field(file, "missing") },
  };
}

/**
 * Parses POM text; throws PomSyntaxError for anything that is not a readable `<project>`. `validate`
 * (the default) checks well-formedness first, to name the line of an error in the user's own files;
 * POMs from repositories skip it (a third of the parsing time) and are only read leniently.
 */
export function parsePom(xml: string, options: { validate?: boolean } = {}): RawPom {
  if (options.validate !== false) {
    const validation = XMLValidator.validate(xml);
    if (validation !== true) {
      throw new PomSyntaxError(`not well-formed XML: ${validation.err.msg}`, validation.err.line);
    }
  }
  let document: Node;
  try {
    document = parser.parse(xml) as Node;
  } catch (error) {
    throw new PomSyntaxError(`not well-formed XML: ${(error as Error).message}`);
  }
  const project = child(document, "project");
  if (!project) throw new PomSyntaxError("not a Maven POM (no <project> root element)");
  const parent = child(project, "parent");
  const relocation = child(child(project, "distributionManagement"), "relocation");
  const relativePathValue = parent ? parent.relativePath : undefined;
  return {
    ...readBase(project),
    groupId: field(project, "groupId"),
    artifactId: field(project, "artifactId"),
    version: field(project, "version"),
    packaging: field(project, "packaging"),
    parent: parent && {
      groupId: field(parent, "groupId"),
      artifactId: field(parent, "artifactId"),
      version: field(parent, "version"),
      relativePath: relativePathValue === undefined ? undefined : (text(relativePathValue) ?? ""),
    },
    profiles: list(project, "profiles", "profile").map((p) => ({
      ...readBase(p),
      id: field(p, "id") ?? "",
      activation: readActivation(p),
    })),
    relocation: relocation && {
      groupId: field(relocation, "groupId"),
      artifactId: field(relocation, "artifactId"),
      version: field(relocation, "version"),
    },
  };
}
