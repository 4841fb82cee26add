/**
 * The independent oracle of the Java code extractor: what `javap -c -p -v` (the JDK's disassembler) says
 * each method of compiled classes refers to, and which dependency jar declares each class according to
 * `mvn dependency:list` and `zipinfo -1` on those jars. javap's output is parsed into compact tuples and
 * cached beside the subject (it takes a minute or two on a few thousand classes).
 *
 * What javap shows per method: the operand comments of its instructions (`// Method owner.name:desc`,
 * `// InterfaceMethod ...`, `// Field ...`, `// class X`, `// InvokeDynamic #n:...`), its exception
 * table (`Class X`), and per class the BootstrapMethods section (`REF_invoke* owner.name:desc` handles
 * of the bootstrap method and its arguments); the class header gives the supertypes.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { methodMangling } from "../../src/scanner/code/java/descriptor.ts";
import { ORACLE_REPOSITORY, parseDependencyList } from "./maven-subjects.ts";

export interface OracleUse {
  kind: "method" | "field" | "class";
  owner: string;
  name: string;
  descriptor: string;
}

export interface OracleMethod {
  /** Internal name of the class; method name ("" for the class itself: its supertypes) and descriptor. */
  className: string;
  name: string;
  descriptor: string;
  uses: OracleUse[];
}

function run(command: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    const chunks: Buffer[] = [];
    let errors = "";
    child.stdout.on("data", (d: Buffer) => chunks.push(d));
    child.stderr.on("data", (d) => {
      errors += d;
    });
    child.on("error", (error) => reject(new Error(`test setup: cannot run ${command} (${error.message})`)));
    child.on("close", (code) =>
      code === 0
        ? resolve(Buffer.concat(chunks).toString("utf8"))
        : reject(new Error(`test setup: ${command} failed (${code}): ${errors.slice(-2000)}`)),
    );
  });
}

const parseMember = (text: string): { owner: string | undefined; name: string; descriptor: string } => {
  // owner.name:descriptor, the owner omitted for the class's own members; names of constructors quoted
  const left = text.slice(0, findNameColon(text));
  const descriptor = text.slice(left.length + 1);
  const dot = left.lastIndexOf(".");
  const unquote = (s: string) => s.replace(/^"|"$/g, "");
  return dot < 0
    ? { owner: undefined, name: unquote(left), descriptor }
    : { owner: unquote(left.slice(0, dot)), name: unquote(left.slice(dot + 1)), descriptor };
};

/** The colon between a member and its descriptor (array owners are quoted and hold `;`, never `:`). */
function findNameColon(text: string): number {
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '"') quoted = !quoted;
    else if (text[i] === ":" && !quoted) return i;
  }
  return -1;
}

const stripGenerics = (text: string): string => {
  let out = "";
  let depth = 0;
  for (const c of text) {
    if (c === "<") depth++;
    else if (c === ">") depth--;
    else if (depth === 0) out += c;
  }
  return out;
};

/** Parses the output of `javap -c -p -v` on several classes. */
export function parseJavap(text: string): OracleMethod[] {
  const methods: OracleMethod[] = [];
  let className = "";
  let binary = "";
  let header: string | undefined;
  let pendingHeader: string | undefined;
  let current: OracleMethod | undefined;
  let classMethods: OracleMethod[] = [];
  /** Per method of the class, the bootstrap indexes its invokedynamic instructions use. */
  let indy = new Map<OracleMethod, Set<number>>();
  let bootstraps = new Map<number, OracleUse[]>();
  let bootstrap: number | undefined;
  let poolClasses = new Map<number, string>();
  let section: "header" | "pool" | "members" | "attributes" = "header";
  const finishClass = () => {
    for (const [method, indexes] of indy) {
      for (const i of indexes) method.uses.push(...(bootstraps.get(i) ?? []));
    }
    methods.push(...classMethods);
    classMethods = [];
    indy = new Map();
    bootstraps = new Map();
    poolClasses = new Map();
  };
  for (const line of text.split("\n")) {
    if (line.startsWith("Classfile ")) {
      if (className) finishClass();
      section = "header";
      header = undefined;
      className = "";
      continue;
    }
    if (section === "header") {
      if (header === undefined && /^[a-z@]/.test(line) && !line.startsWith("Compiled from")) header = line;
      const thisClass = /^ {2}this_class: #\d+\s+\/\/ (.+)$/.exec(line);
      if (thisClass) {
        className = thisClass[1] as string;
        binary = className.replaceAll("/", ".");
        // the superclass comes from the super_class line; the interfaces from the header
        const plain = stripGenerics(header ?? "");
        const isInterface = /\binterface\b/.test(plain.split(binary)[0] ?? "");
        const listed = isInterface ? / extends (.+)$/.exec(plain)?.[1] : / implements (.+)$/.exec(plain)?.[1];
        const supertypes: OracleUse[] = (listed ? listed.split(",") : [])
          .map((n) => n.trim().replaceAll(".", "/"))
          .filter((n) => n !== "")
          .map((owner) => ({ kind: "class", owner, name: "", descriptor: "" }));
        classMethods.push({ className, name: "", descriptor: "", uses: supertypes });
      }
      const superClass = /^ {2}super_class: #\d+\s+\/\/ (.+)$/.exec(line);
      if (superClass) {
        classMethods
          .find((m) => m.className === className && m.name === "")
          ?.uses.unshift({ kind: "class", owner: superClass[1] as string, name: "", descriptor: "" });
      }
      if (line === "Constant pool:") section = "pool";
      continue;
    }
    if (section === "pool") {
      if (line === "{") section = "members";
      // Class entries, to tell a bootstrap method's class arguments from its strings and method types
      const entry = /^ +#(\d+) = Class +#\d+ +\/\/ (.+)$/.exec(line);
      if (entry) poolClasses.set(Number(entry[1]), (entry[2] as string).replace(/^"|"$/g, ""));
      continue;
    }
    if (section === "members") {
      if (line === "}") {
        section = "attributes";
        current = undefined;
        continue;
      }
      if (/^ {2}\S/.test(line)) {
        pendingHeader = line.trim();
        current = undefined;
        continue;
      }
      const descriptor = /^ {4}descriptor: (.+)$/.exec(line);
      if (descriptor && pendingHeader !== undefined) {
        const desc = descriptor[1] as string;
        if (desc.startsWith("(")) {
          let name: string;
          if (pendingHeader.startsWith("static {}")) name = "<clinit>";
          else {
            const beforeParen = stripGenerics(pendingHeader.slice(0, pendingHeader.indexOf("(")));
            const last = beforeParen.trim().split(/\s+/).pop() ?? "";
            name = last === binary ? "<init>" : last;
          }
          current = { className, name, descriptor: desc, uses: [] };
          classMethods.push(current);
        }
        pendingHeader = undefined;
        continue;
      }
      if (!current) continue;
      const instruction = /^\s+\d+: \w+\s+#\d+(?:,\s*\d+)?\s+\/\/ (\w+) (.+)$/.exec(line);
      if (instruction) {
        const [, kind, rest] = instruction as unknown as [string, string, string];
        if (kind === "Method" || kind === "InterfaceMethod" || kind === "Field") {
          const m = parseMember(rest);
          current.uses.push({
            kind: kind === "Field" ? "field" : "method",
            owner: m.owner ?? className,
            name: m.name,
            descriptor: m.descriptor,
          });
        } else if (kind === "class") {
          current.uses.push({ kind: "class", owner: rest.replace(/^"|"$/g, ""), name: "", descriptor: "" });
        } else if (kind === "InvokeDynamic" || kind === "Dynamic") {
          const index = Number(/^#(\d+):/.exec(rest)?.[1]);
          const set = indy.get(current) ?? new Set<number>();
          set.add(index);
          indy.set(current, set);
        } else if (kind === "MethodHandle") {
          const m = parseMember(rest.replace(/^REF_\w+ /, ""));
          current.uses.push({
            kind: "method",
            owner: m.owner ?? className,
            name: m.name,
            descriptor: m.descriptor,
          });
        }
        continue;
      }
      const handler = /^\s+\d+\s+\d+\s+\d+\s+Class (\S+)$/.exec(line);
      if (handler)
        current.uses.push({ kind: "class", owner: handler[1] as string, name: "", descriptor: "" });
      continue;
    }
    // attributes after the members: BootstrapMethods
    const entry = /^ {2}(\d+): #\d+ REF_\w+ (.+)$/.exec(line);
    if (entry) {
      bootstrap = Number(entry[1]);
      const m = parseMember(entry[2] as string);
      bootstraps.set(bootstrap, [
        { kind: "method", owner: m.owner ?? className, name: m.name, descriptor: m.descriptor },
      ]);
      continue;
    }
    const classArgument = /^ {6}#(\d+) /.exec(line);
    const argumentClass = classArgument ? poolClasses.get(Number(classArgument[1])) : undefined;
    if (argumentClass !== undefined && bootstrap !== undefined) {
      bootstraps.get(bootstrap)?.push({ kind: "class", owner: argumentClass, name: "", descriptor: "" });
      continue;
    }
    const argument = /^ {6}#\d+ REF_(\w+) (.+)$/.exec(line);
    if (argument && bootstrap !== undefined) {
      const m = parseMember(argument[2] as string);
      const field = /^(?:get|put)/.test(argument[1] as string);
      bootstraps.get(bootstrap)?.push({
        kind: field ? "field" : "method",
        owner: m.owner ?? className,
        name: m.name,
        descriptor: m.descriptor,
      });
    }
  }
  if (className) finishClass();
  return methods;
}

/** javap's view of every class under `classesDir`, cached in `cacheFile`. */
export async function javapMethods(
  classesDir: string,
  classFiles: readonly string[],
  cacheFile: string,
): Promise<OracleMethod[]> {
  if (existsSync(cacheFile)) return JSON.parse(await readFile(cacheFile, "utf8")) as OracleMethod[];
  const batches: string[][] = [];
  for (let i = 0; i < classFiles.length; i += 300) batches.push(classFiles.slice(i, i + 300));
  const methods: OracleMethod[] = [];
  // two javap processes at a time: the machine has two cores
  for (let i = 0; i < batches.length; i += 2) {
    const outputs = await Promise.all(
      batches.slice(i, i + 2).map((batch) => run("javap", ["-c", "-p", "-v", ...batch], classesDir)),
    );
    for (const output of outputs) methods.push(...parseJavap(output));
  }
  await writeFile(`${cacheFile}.part`, JSON.stringify(methods));
  await rename(`${cacheFile}.part`, cacheFile);
  return methods;
}

/** Internal class name → `maven:g:a` of the jars `mvn dependency:list` resolved (listed with zipinfo). */
export async function oracleClassOwners(
  dependencyList: string,
  cacheFile: string,
): Promise<Map<string, string[]>> {
  let listing: Record<string, string[]>;
  if (existsSync(cacheFile)) listing = JSON.parse(await readFile(cacheFile, "utf8"));
  else {
    listing = {};
    for (const a of parseDependencyList(await readFile(dependencyList, "utf8"))) {
      if (a.type !== "jar") continue;
      const jar = join(
        ORACLE_REPOSITORY,
        a.groupId.replaceAll(".", "/"),
        a.artifactId,
        a.version,
        `${a.artifactId}-${a.version}${a.classifier ? `-${a.classifier}` : ""}.jar`,
      );
      const names = (await run("zipinfo", ["-1", jar], ORACLE_REPOSITORY)).split("\n");
      listing[`maven:${a.groupId}:${a.artifactId}`] = names
        .filter((n) => n.endsWith(".class") && !n.endsWith("module-info.class"))
        .map((n) => n.replace(/^META-INF\/versions\/\d+\//, "").slice(0, -6))
        .filter((n) => !n.startsWith("META-INF/"));
    }
    await writeFile(`${cacheFile}.part`, JSON.stringify(listing));
    await rename(`${cacheFile}.part`, cacheFile);
  }
  const owners = new Map<string, string[]>();
  for (const [pkg, names] of Object.entries(listing)) {
    for (const n of names) {
      const list = owners.get(n) ?? [];
      if (!list.includes(pkg)) list.push(pkg);
      owners.set(n, list);
    }
  }
  return owners;
}

/**
 * The oracle's answer in the analysis document's terms, one line per reference:
 * `from.fullName|from.typeId|object.package|object.typeId|object.fullName|object.mangling`.
 */
export function oracleReferences(
  methods: readonly OracleMethod[],
  owners: ReadonlyMap<string, readonly string[]>,
): Set<string> {
  const own = new Set(methods.map((m) => m.className));
  const lines = new Set<string>();
  for (const m of methods) {
    const binary = m.className.replaceAll("/", ".");
    const from = m.name === "" ? `${binary}|JV_CLASS` : `${binary}.${m.name}|JV_METHOD`;
    for (const use of m.uses) {
      let owner = use.owner;
      if (owner.startsWith("[")) {
        if (use.kind !== "class") continue; // members of array types belong to no library
        const element = /^\[+L(.+);$/.exec(owner)?.[1];
        if (!element) continue;
        owner = element;
      }
      if (own.has(owner)) continue;
      const ownerBinary = owner.replaceAll("/", ".");
      for (const pkg of owners.get(owner) ?? []) {
        const object =
          use.kind === "class"
            ? `JV_CLASS|${ownerBinary}|`
            : use.kind === "field"
              ? `JV_FIELD|${ownerBinary}.${use.name}|`
              : `JV_METHOD|${ownerBinary}.${use.name}|${methodMangling(use.name, use.descriptor)}`;
        lines.add(`${from}|${pkg}|${object}`);
      }
    }
  }
  return lines;
}
