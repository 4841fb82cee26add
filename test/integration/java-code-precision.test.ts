/**
 * Precision and recall of the Java code extractor on a real artifact, against an independent oracle:
 * solr-core 8.9.0 as a built project (its published POM, its published classes as target/classes),
 * scanned with `imaging scan --output` as a user does; the oracle is `javap -c -p -v` on the same classes
 * (what each method's instructions, exception table and bootstrap methods refer to), with classes
 * attributed to the jars `mvn dependency:list` resolves, listed by `zipinfo`. Compared reference by
 * reference in the analysis document's own terms (calling method, package, object full name, mangling).
 * The numbers are reported in docs/scanner.md.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { AnalysisDocument } from "../../src/scanner/analysis-document.ts";
import { runCli } from "../support/cli.ts";
import { builtSolrCore } from "../support/java-subjects.ts";
import { javapMethods, oracleClassOwners, oracleReferences } from "../support/javap-oracle.ts";
import { MAVEN_SUBJECTS_DIR, ORACLE_REPOSITORY, projectDir } from "../support/maven-subjects.ts";

const LOG4J_CORE = "maven:org.apache.logging.log4j:log4j-core";

describe("Java references of solr-core 8.9.0 compared with javap (the oracle)", () => {
  let dir: string;
  let document: AnalysisDocument;
  let summary: { code: { language: string; precision: string; files: number }[]; warnings: unknown[] };
  let mine: Set<string>;
  let oracle: Set<string>;
  const dataDir = join(MAVEN_SUBJECTS_DIR, "..", "java-precision-data");

  before(async () => {
    const built = await builtSolrCore();
    dir = built.dir;
    mkdirSync(dataDir, { recursive: true });
    const output = join(dataDir, "solr-core.analysis.json");
    const result = await runCli(
      ["scan", dir, "--app", "solr", "--output", output, "--json", "--data-dir", dataDir],
      { MAVEN_LOCAL_REPOSITORY: ORACLE_REPOSITORY, DATABASE_URL: "" },
    );
    assert.equal(result.code, 0, result.stderr);
    summary = JSON.parse(result.stdout);
    document = JSON.parse(readFileSync(output, "utf8"));
    const objects = new Map(document.objects.map((o) => [o.id, o]));
    mine = new Set(
      document.references.map((r) => {
        const o = objects.get(r.to);
        assert.ok(o, r.to);
        return `${r.from.fullName}|${r.from.typeId}|${o.package}|${o.typeId}|${o.fullName}|${o.mangling}`;
      }),
    );
    const classesDir = join(dir, "target", "classes");
    const classFiles = readdirSync(classesDir, { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".class") && !/(?:module|package)-info\.class$/.test(f))
      .sort();
    const methods = await javapMethods(classesDir, classFiles, join(dir, "javap-oracle-v3.json"));
    const published = await projectDir("solr-core-8.9.0", { coordinates: "org.apache.solr:solr-core:8.9.0" });
    const owners = await oracleClassOwners(
      join(published.dir, "mvn-dependency-list.txt"),
      join(dir, "dependency-classes.json"),
    );
    oracle = oracleReferences(methods, owners);
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it("reads every class file from bytecode and says so in the summary", () => {
    assert.equal(summary.code.length, 1);
    assert.equal(summary.code[0]?.language, "java");
    assert.equal(summary.code[0]?.precision, "bytecode");
    assert.ok((summary.code[0]?.files ?? 0) > 3000, JSON.stringify(summary.code));
  });

  it("reaches ≥ 95% recall and ≥ 98% precision of the references javap shows", () => {
    const both = [...mine].filter((line) => oracle.has(line)).length;
    const precision = both / mine.size;
    const recall = both / oracle.size;
    const missed = [...oracle].filter((l) => !mine.has(l)).slice(0, 10);
    const extra = [...mine].filter((l) => !oracle.has(l)).slice(0, 10);
    process.stdout.write(
      `# solr-core 8.9.0: ${oracle.size} oracle references, ${mine.size} found, ${both} in both: ` +
        `precision ${(precision * 100).toFixed(2)}%, recall ${(recall * 100).toFixed(2)}%\n`,
    );
    assert.ok(oracle.size > 10_000, `the oracle sees many references (${oracle.size})`);
    assert.ok(recall >= 0.95, `recall ${recall}; missed e.g. ${missed.join("\n")}`);
    assert.ok(precision >= 0.98, `precision ${precision}; extra e.g. ${extra.join("\n")}`);
  });

  it("lists log4j-core's classes and methods with the solr methods calling them", () => {
    const log4j = document.objects.filter((o) => o.package === LOG4J_CORE);
    const getConfiguration = log4j.find(
      (o) => o.fullName === "org.apache.logging.log4j.core.LoggerContext.getConfiguration",
    );
    assert.ok(getConfiguration, JSON.stringify(log4j.map((o) => o.fullName)));
    assert.equal(
      getConfiguration.mangling,
      "getConfiguration() return org.apache.logging.log4j.core.config.Configuration",
    );
    assert.equal(getConfiguration.type, "Java Method");
    assert.equal(getConfiguration.typeId, "JV_METHOD");
    const callers = document.references
      .filter((r) => r.to === getConfiguration.id)
      .map((r) => r.from.fullName);
    assert.ok(
      callers.includes("org.apache.solr.util.StartupLoggingUtils.changeLogLevel") ||
        callers.some((c) => c.startsWith("org.apache.solr.")),
      `solr methods call LoggerContext.getConfiguration: ${callers.join(", ")}`,
    );
    const loggerContext = log4j.find((o) => o.fullName === "org.apache.logging.log4j.core.LoggerContext");
    assert.deepEqual(
      loggerContext && {
        name: loggerContext.name,
        mangling: loggerContext.mangling,
        typeId: loggerContext.typeId,
      },
      { name: "LoggerContext", mangling: "", typeId: "JV_CLASS" },
    );
    const field = log4j.find((o) => o.fullName === "org.apache.logging.log4j.core.Filter$Result.ACCEPT");
    assert.deepEqual(
      field && { name: field.name, type: field.type, typeId: field.typeId, mangling: field.mangling },
      {
        name: "ACCEPT",
        type: "Java Field",
        typeId: "JV_FIELD",
        mangling: "",
      },
    );
    // attributed by binary name: log4j-api's own LoggerContext interface is not log4j-core's
    for (const o of document.objects.filter((x) => x.fullName.startsWith("org.apache.logging.log4j.spi."))) {
      assert.equal(o.package, "maven:org.apache.logging.log4j:log4j-api", o.fullName);
    }
  });

  it("writes each log4j-core method's mangling as javap declares the method (erasure of non-generic signatures)", () => {
    const jar = join(ORACLE_REPOSITORY, "org/apache/logging/log4j/log4j-core/2.13.2/log4j-core-2.13.2.jar");
    const methods = document.objects.filter((o) => o.package === LOG4J_CORE && o.typeId === "JV_METHOD");
    const owners = [...new Set(methods.map((o) => o.fullName.slice(0, o.fullName.lastIndexOf("."))))];
    const javap = execFileSync("javap", ["-p", "-cp", jar, ...owners], { encoding: "utf8" });
    const declared = new Map<string, Set<string>>();
    let owner = "";
    const MODIFIERS = new Set(
      "public private protected static final abstract synchronized native default strictfp".split(" "),
    );
    const PRIMITIVE = /^(?:boolean|byte|char|short|int|long|float|double|void)(?:\[\])*$/;
    // a bare type variable (`T`, `M`) erases to a bound javap -p does not print: not comparable
    const comparable = (type: string) => PRIMITIVE.test(type) || type.includes(".");
    for (const line of javap.split("\n")) {
      const header = /^(?:\w+ )*(?:class|interface|enum) ([\w.$]+)/.exec(line);
      if (header) owner = header[1] as string;
      const method = /^ {2}([^(]+)\(([^)]*)\)/.exec(line);
      if (!method || line.includes("<")) continue;
      const words = (method[1] as string)
        .trim()
        .split(/\s+/)
        .filter((w) => !MODIFIERS.has(w));
      const name = words.pop() as string;
      const isConstructor = words.length === 0 && name === owner;
      const returns = isConstructor ? "void" : words.join(" ");
      const params = (method[2] as string)
        .split(",")
        .map((p) => p.trim().replace("...", "[]"))
        .filter(Boolean);
      if (![returns, ...params].every(comparable)) continue;
      const member = isConstructor ? "<init>" : name;
      const set = declared.get(`${owner}.${member}`) ?? new Set();
      set.add(`${member}(${params.join(", ")}) return ${returns}`);
      declared.set(`${owner}.${member}`, set);
    }
    let checked = 0;
    for (const o of methods) {
      const forms = declared.get(o.fullName);
      // not declared by the owner itself (inherited), or only in generic forms: not comparable here
      if (!forms) continue;
      if (forms.has(o.mangling)) checked++;
      else if (forms.size === 1 && [...forms][0]?.split(",").length === o.mangling.split(",").length)
        assert.fail(`${o.fullName}: ${o.mangling} is not javap's ${[...forms].join(" | ")}`);
    }
    assert.ok(checked >= 10, `compared ${checked} manglings with javap's declarations`);
  });
});
