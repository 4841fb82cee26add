/**
 * Builds the fuzz targets' seed corpora (test/fuzz/seeds/<target>/) from real inputs: the scanner suites'
 * cached subjects (~/.cache/imaging-ci/scan-subjects: firebase-tools 8.4.0's lockfiles in every format and
 * its SBOMs, the monorepos, json-server's sources, Maven Central POMs, jars and classes) and
 * test/fixtures (OSV records, the Gradle lockfile). Each seed is cut down to a few entries, so that a
 * fuzzing run mutates structure rather than megabytes. Run once after the suites filled the cache:
 * `node test/fuzz/make-seeds.ts`; the output is committed.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { unzipSync } from "fflate";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { SEPARATOR } from "./targets/maven-model.ts";

/** Packs the archive seeds (argv: the entries' JSON, the output folder). */
const PACK_ARCHIVES = `
import base64, io, json, sys, zipfile
spec = json.load(open(sys.argv[1])); out = sys.argv[2]
entries = {k: base64.b64decode(v) for k, v in spec["entries"].items()}
def pack(files, zip64=False):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            with z.open(zipfile.ZipInfo(name, (2021, 3, 6, 12, 0, 0)), "w", force_zip64=zip64) as f:
                f.write(data)
    return buffer.getvalue()
plain = pack(entries)
bare = pack({k: v for k, v in entries.items() if not k.startswith("META-INF/maven/")})
app_meta = "META-INF/maven/org.owasp.webgoat/webgoat-container/"
war = pack({"META-INF/MANIFEST.MF": b"Manifest-Version: 1.0\\r\\n\\r\\n",
            app_meta + "pom.xml": spec["appPom"].encode(),
            app_meta + "pom.properties": b"groupId=org.owasp.webgoat\\nartifactId=webgoat-container\\nversion=7.0.1\\n",
            "WEB-INF/web.xml": b"<web-app/>", "WEB-INF/lib/log4j-1.2.17.jar": plain,
            "WEB-INF/lib/commons-lang-2.6.jar": bare})
boot = pack({"META-INF/MANIFEST.MF": b"Manifest-Version: 1.0\\r\\nMain-Class: org.springframework.boot.loader.JarLauncher\\r\\n\\r\\n",
             "BOOT-INF/classes/app/Main.class": entries["org/apache/log4j/Level.class"],
             "BOOT-INF/lib/log4j-1.2.17.jar": plain})
for name, data in {"plain.jar": plain, "app.war": war, "spring-boot.jar": boot, "zip64.jar": pack(entries, True),
                   "prefixed.jar": b"#!/bin/sh\\nexec java -jar \\"$0\\" \\"$@\\"\\n" + plain}.items():
    open(out + "/" + name, "wb").write(data)
`;

const here = dirname(fileURLToPath(import.meta.url));
const fixtures = join(here, "..", "fixtures");
const subjects =
  process.env.IMAGING_SCAN_SUBJECTS ?? join(homedir(), ".cache", "imaging-ci", "scan-subjects");
const firebase = join(subjects, "firebase-tools-8.4.0");
const m2 = join(subjects, "maven", "m2");

const text = (path: string) => readFileSync(path, "utf8");
const json = (path: string) => JSON.parse(text(path)) as Record<string, unknown>;
const pretty = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

function write(target: string, name: string, content: string | Uint8Array): void {
  const dir = join(here, "seeds", target);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, name), content);
}

const firstEntries = (
  record: Record<string, unknown>,
  n: number,
  keep: (key: string) => boolean = () => false,
) => Object.fromEntries(Object.entries(record).filter(([key], i) => i < n || keep(key)));

// --- npm lockfiles -------------------------------------------------------------------------------------
for (const version of ["v1", "v2", "v3"]) {
  const lock = json(join(firebase, "npm", version, "package-lock.json"));
  if (lock.packages) lock.packages = firstEntries(lock.packages as Record<string, unknown>, 14);
  if (lock.dependencies) lock.dependencies = firstEntries(lock.dependencies as Record<string, unknown>, 10);
  write("npm-package-lock", `firebase-tools-${version}.json`, pretty(lock));
}
write(
  "npm-package-lock",
  "two-lodash-monorepo.json",
  text(join(subjects, "two-lodash-monorepo", "package-lock.json")),
);
{
  const lock = json(join(subjects, "workspace-monorepo", "npm", "package-lock.json"));
  lock.packages = firstEntries(
    lock.packages as Record<string, unknown>,
    12,
    (k) => !k.includes("node_modules/"),
  );
  write("npm-package-lock", "workspace-monorepo.json", pretty(lock));
}

/** A yarn.lock cut to its header and first entries (entries are separated by blank lines). */
function yarnHead(path: string, entries: number): string {
  const blocks = text(path).split(/\n\n+/);
  const header = blocks.filter(
    (b) => /^(#|__metadata:)/m.test(b.split("\n")[0] ?? "") || b.startsWith("__metadata"),
  );
  const body = blocks.filter((b) => !header.includes(b)).slice(0, entries);
  return `${[...header, ...body].join("\n\n")}\n`;
}
write(
  "npm-yarn-lock",
  "firebase-tools-classic.lock",
  yarnHead(join(firebase, "yarn", "classic", "yarn.lock"), 14),
);
write(
  "npm-yarn-lock",
  "firebase-tools-berry.lock",
  yarnHead(join(firebase, "yarn", "berry", "yarn.lock"), 14),
);
write(
  "npm-yarn-lock",
  "workspace-monorepo.lock",
  yarnHead(join(subjects, "workspace-monorepo-yarn", "yarn.lock"), 16),
);

for (const version of ["v6", "v9"]) {
  const lock = parseYaml(text(join(firebase, "pnpm", version, "pnpm-lock.yaml"))) as Record<string, unknown>;
  for (const key of ["packages", "snapshots"])
    if (lock[key]) lock[key] = firstEntries(lock[key] as Record<string, unknown>, 10);
  for (const key of ["dependencies", "devDependencies"])
    if (lock[key]) lock[key] = firstEntries(lock[key] as Record<string, unknown>, 6);
  if (lock.importers) {
    const importers = lock.importers as Record<string, Record<string, unknown>>;
    for (const importer of Object.values(importers))
      for (const key of ["dependencies", "devDependencies"])
        if (importer[key]) importer[key] = firstEntries(importer[key] as Record<string, unknown>, 6);
  }
  write("npm-pnpm-lock", `firebase-tools-${version}.yaml`, stringifyYaml(lock));
}
write(
  "npm-pnpm-lock",
  "workspace-monorepo.yaml",
  text(join(subjects, "workspace-monorepo", "pnpm", "pnpm-lock.yaml"))
    .slice(0, 6000)
    .replace(/\n[^\n]*$/, "\n"),
);

write("npm-package-json", "firebase-tools.json", text(join(firebase, "npm", "v3", "package.json")));
write(
  "npm-package-json",
  "workspace-monorepo.json",
  text(join(subjects, "workspace-monorepo", "npm", "package.json")),
);
write(
  "npm-package-json",
  "two-lodash-monorepo.json",
  text(join(subjects, "two-lodash-monorepo", "package.json")),
);
write(
  "npm-package-json",
  "json-server.json",
  text(join(subjects, "json-server-0.17.4", "published", "package.json")),
);

// --- Maven ---------------------------------------------------------------------------------------------
function findFiles(dir: string, suffix: string, found: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) findFiles(path, suffix, found);
    else if (entry.name.endsWith(suffix)) found.push(path);
  }
  return found;
}
const poms = findFiles(m2, ".pom").sort();
const pomAt = (groupId: string, artifactId: string, version: string) =>
  join(m2, ...groupId.split("."), artifactId, version, `${artifactId}-${version}.pom`);
const small = poms.filter((p) => statSync(p).size < 6000);
for (const [i, path] of small.filter((_, i) => i % Math.ceil(small.length / 8) === 0).entries())
  write("maven-pom", `${i}-${path.split("/").at(-1)}`, text(path));
for (const project of ["edge-cases", "webgoat-container-7.0.1"])
  write("maven-pom", `${project}.xml`, text(join(subjects, "maven", "projects", project, "pom.xml")));

/** A POM followed by its parents found in the local repository (what the model target's input holds). */
function lineage(path: string): string[] {
  const chain = [text(path)];
  for (let depth = 0; depth < 4; depth++) {
    const parent = /<parent>([\s\S]*?)<\/parent>/.exec(chain.at(-1) as string)?.[1];
    if (!parent) break;
    const field = (name: string) => new RegExp(`<${name}>\\s*([^<]+?)\\s*</${name}>`).exec(parent)?.[1];
    const [g, a, v] = [field("groupId"), field("artifactId"), field("version")];
    if (!g || !a || !v) break;
    try {
      chain.push(text(pomAt(g, a, v)));
    } catch {
      break;
    }
  }
  return chain;
}
const withParents = poms
  .map((p) => lineage(p))
  .filter((chain) => chain.length >= 2 && chain.join("").length < 48_000);
for (const [i, chain] of withParents.filter((_, i) => i % Math.ceil(withParents.length / 6) === 0).entries())
  write("maven-model", `lineage-${i}.xml`, chain.join(SEPARATOR));
write("maven-model", "edge-cases.xml", text(join(subjects, "maven", "projects", "edge-cases", "pom.xml")));

write(
  "gradle-lockfile",
  "vulnerable-java-application.lockfile",
  text(join(fixtures, "gradle", "vulnerable-java-application", "gradle.lockfile")),
);
write(
  "gradle-lockfile",
  "legacy.lockfile",
  "# This is a Gradle generated file for dependency locking.\norg.apache.logging.log4j:log4j-core:2.14.1\norg.apache.logging.log4j:log4j-api:2.14.1\n",
);

// Class files of real jars: small ones of several class-file versions, lambdas and switches among them.
const jars = findFiles(m2, ".jar").sort();
const classes = new Map<number, { name: string; bytes: Uint8Array }[]>();
for (const jar of jars) {
  let files: Record<string, Uint8Array>;
  try {
    files = unzipSync(readFileSync(jar), {
      filter: (f) => f.name.endsWith(".class") && f.originalSize < 3000,
    });
  } catch {
    continue;
  }
  for (const [name, bytes] of Object.entries(files).slice(0, 3)) {
    const major = (bytes[6] ?? 0) * 256 + (bytes[7] ?? 0);
    const list = classes.get(major) ?? [];
    if (list.length < 2) list.push({ name: name.replaceAll("/", "."), bytes });
    classes.set(major, list);
  }
}
for (const [major, list] of classes)
  for (const c of list) write("java-class-file", `${major}-${c.name}`, c.bytes);

// Archives: real metadata and classes, packed as a plain jar, a war nesting it, a Spring Boot jar, a
// zip64 jar and a jar behind a launcher script (Python's zipfile writes zip64 records on request).
const log4j = readFileSync(join(m2, "log4j", "log4j", "1.2.17", "log4j-1.2.17.jar"));
const log4jEntries = unzipSync(log4j, {
  filter: (f) => f.name.startsWith("META-INF/") || f.name === "org/apache/log4j/Level.class",
});
const archiveDir = join(here, "seeds", "maven-archive");
rmSync(archiveDir, { recursive: true, force: true });
mkdirSync(archiveDir, { recursive: true });
const entriesFile = join(archiveDir, "entries.json");
writeFileSync(
  entriesFile,
  JSON.stringify({
    entries: Object.fromEntries(
      Object.entries(log4jEntries).map(([k, v]) => [k, Buffer.from(v).toString("base64")]),
    ),
    appPom: text(join(subjects, "maven", "projects", "webgoat-container-7.0.1", "pom.xml")),
  }),
);
execFileSync("python3", ["-c", PACK_ARCHIVES, entriesFile, archiveDir], { stdio: "inherit" });
rmSync(entriesFile);

// --- advisories, SBOMs, CIMD, JavaScript ----------------------------------------------------------------
const osvDir = join(fixtures, "osv");
for (const path of findFiles(osvDir, ".json")
  .filter((p) => statSync(p).size < 24_000)
  .slice(0, 8))
  write("osv-record", path.slice(osvDir.length + 1).replaceAll("/", "-"), text(path));

for (const name of ["firebase-tools.1.4.cdx.json", "firebase-tools.1.6.cdx.json"]) {
  const bom = json(join(firebase, "sbom", name));
  const components = (bom.components as Record<string, unknown>[]).slice(0, 8);
  const refs = new Set(components.map((c) => c["bom-ref"]));
  const root = (bom.metadata as Record<string, Record<string, unknown>>).component?.["bom-ref"];
  bom.components = components;
  bom.dependencies = (bom.dependencies as Record<string, unknown>[])
    .filter((d) => refs.has(d.ref) || d.ref === root)
    .map((d) => ({ ...d, dependsOn: (d.dependsOn as unknown[] | undefined)?.filter((r) => refs.has(r)) }));
  write("sbom", name, pretty(bom));
}
{
  const spdx = json(join(firebase, "sbom", "firebase-tools.spdx.json"));
  const described = new Set(spdx.documentDescribes as string[]);
  const packages = (spdx.packages as Record<string, unknown>[]).filter(
    (p, i) => i < 8 || described.has(p.SPDXID as string),
  );
  const ids = new Set(packages.map((p) => p.SPDXID));
  ids.add(spdx.SPDXID);
  spdx.packages = packages;
  spdx.relationships = (spdx.relationships as Record<string, unknown>[]).filter(
    (r) => ids.has(r.spdxElementId) && ids.has(r.relatedSpdxElement),
  );
  write("sbom", "firebase-tools.spdx.json", pretty(spdx));
}

const claude = {
  client_id: "https://claude.ai/oauth/claude-code-client-metadata",
  client_name: "Claude Code",
  client_uri: "https://claude.ai",
  redirect_uris: ["http://localhost/callback", "http://127.0.0.1/callback"],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "none",
};
const vscode = {
  client_id: "https://vscode.dev/oauth/client-metadata.json",
  client_name: "Visual Studio Code",
  client_uri: "https://code.visualstudio.com",
  logo_uri: "https://code.visualstudio.com/assets/favicon.ico",
  redirect_uris: ["http://127.0.0.1:33418/", "https://vscode.dev/redirect"],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "none",
  application_type: "native",
};
write(
  "cimd-document",
  "claude-code.txt",
  `${claude.client_id}\nhttp://localhost:54321/callback\nmax-age=3600\n${JSON.stringify(claude)}`,
);
write(
  "cimd-document",
  "vscode.txt",
  `${vscode.client_id}\nhttps://vscode.dev/redirect\nno-cache\n${JSON.stringify(vscode)}`,
);
write(
  "cimd-document",
  "same-domain.txt",
  `https://app.example.com/client.json\n\npublic, max-age="600"\n${JSON.stringify({ ...claude, client_id: "https://app.example.com/client.json", redirect_uris: ["https://app.example.com/cb"], token_endpoint_auth_method: "private_key_jwt", jwks_uri: "https://app.example.com/jwks" })}`,
);

const extensions = ["js", "mjs", "cjs", "ts", "tsx", "jsx"];
const jsFiles = findFiles(join(subjects, "json-server-0.17.4", "published", "lib"), ".js").filter(
  (p) => statSync(p).size < 5000,
);
for (const [i, path] of jsFiles.slice(0, 8).entries())
  write(
    "js-extractor",
    `json-server-${path.split("/").at(-1)}.input`,
    Buffer.concat([Buffer.from([extensions.indexOf(i % 2 ? "cjs" : "js")]), readFileSync(path)]),
  );
write(
  "js-extractor",
  "typescript.ts.input",
  Buffer.concat([
    Buffer.from([extensions.indexOf("ts")]),
    Buffer.from(
      'import _, { merge } from "lodash";\nimport * as fs from "node:fs";\nimport type { Options } from "./options";\nexport { set as assign } from "lodash";\nexport default class Store<T> extends Map<string, T> {\n  save(path: string, options?: Options): void {\n    fs.writeFileSync(path, JSON.stringify(merge({}, _.pick(options, ["a"]))));\n  }\n}\nconst lazy = async () => (await import("lodash/fp")).get;\nexport = lazy;\n',
    ),
  ]),
);

console.log(`seeds written to ${join(here, "seeds")}`);
