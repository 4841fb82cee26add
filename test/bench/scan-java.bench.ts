/**
 * Benchmark of the Java code extractor (npm run bench:scan:java): the extraction phase — class files in
 * memory to the uses of dependency classes, per method — on real class files, side by side:
 *
 * - `reader`: this project's class-file reader on the main thread (src/scanner/code/java/class-file.ts);
 * - `reader, worker threads`: the same split over the machine's cores, as `imaging scan` does from
 *   5,000 class files (worker start-up and copying of the bytes included);
 * - `@xmcl/asm`: the maintained TypeScript port of ASM (ClassReader + visitors collecting the same
 *   uses), the library candidate measured before choosing.
 *
 * Corpus (cached under ~/.cache/imaging-ci/scan-subjects/maven): solr-core 8.9.0's classes, then the
 * classes of its dependency jars (from the local repository `mvn dependency:list` filled) up to
 * BENCH_JAVA_CLASSES class files, all taken as the application; the dependency index is the classes of
 * solr-core's 126 resolved jars that are not in the corpus.
 * Each side runs in its own process (peak memory is that process's maximum resident set), BENCH_JAVA_ITERATIONS
 * times after one warm-up; the three sides must find the same number of uses (a benchmark of a wrong answer
 * is worthless). Then one whole `imaging scan --offline --output` of solr-core 8.9.0 as a built project.
 * Prints a Markdown report (docs/benchmarks.md keeps the recorded one).
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import asm from "@xmcl/asm";
import { unzipSync } from "fflate";
import { isCodeClassFile } from "../../src/scanner/code/java/application-classes.ts";
import { dependencyUses } from "../../src/scanner/code/java/dependency-uses.ts";
import { elementClass } from "../../src/scanner/code/java/descriptor.ts";
import { parseClassFiles } from "../../src/scanner/code/java/extract.ts";
import { CLI } from "../support/cli.ts";
import { builtSolrCore } from "../support/java-subjects.ts";
import { oracleClassOwners } from "../support/javap-oracle.ts";
import {
  MAVEN_SUBJECTS_DIR,
  ORACLE_REPOSITORY,
  parseDependencyList,
  projectDir,
} from "../support/maven-subjects.ts";

const { ClassReader, ClassVisitor, Handle, MethodVisitor, Opcodes, Type } = asm;
type AsmHandle = InstanceType<typeof Handle>;
const SELF = fileURLToPath(import.meta.url);
const SIDES = ["reader", "reader, worker threads", "@xmcl/asm"] as const;
type Side = (typeof SIDES)[number];

export interface JavaBenchOptions {
  classes: number;
  iterations: number;
  /** Also time a whole `imaging scan` of solr-core 8.9.0. */
  wholeScan: boolean;
}

export interface SideResult {
  side: Side;
  ms: number[];
  /** CPU time of the whole process (all threads) per run: less sensitive to the machine's other load. */
  cpuMs: number[];
  uses: number;
  maxRssMb: number;
}

export interface JavaBenchReport {
  classes: number;
  bytes: number;
  dependencyClasses: number;
  sides: SideResult[];
  sameAnswer: boolean;
  wholeScanMs?: number;
  wholeScanClasses?: number;
  machine: string;
}

interface Corpus {
  labels: string[];
  offsets: number[];
  bytes: Uint8Array;
  dependencyClasses: string[];
}

const corpusDir = () => join(MAVEN_SUBJECTS_DIR, "java-bench-v2");

/** Builds (once) the corpus of `count` class files and the dependency index, as two cached files. */
async function corpus(count: number): Promise<{ data: string; index: string }> {
  const dir = corpusDir();
  const data = join(dir, `corpus-${count}.bin`);
  const index = join(dir, `corpus-${count}.json`);
  if (existsSync(data) && existsSync(index)) return { data, index };
  await mkdir(dir, { recursive: true });
  const built = await builtSolrCore();
  const published = await projectDir("solr-core-8.9.0", { coordinates: "org.apache.solr:solr-core:8.9.0" });
  const listFile = join(published.dir, "mvn-dependency-list.txt");
  const owners = await oracleClassOwners(listFile, join(built.dir, "dependency-classes.json"));
  const jars = [built.jar];
  for (const a of parseDependencyList(await readFile(listFile, "utf8"))) {
    if (a.type !== "jar" || a.classifier) continue;
    jars.push(
      join(
        ORACLE_REPOSITORY,
        a.groupId.replaceAll(".", "/"),
        a.artifactId,
        a.version,
        `${a.artifactId}-${a.version}.jar`,
      ),
    );
  }
  const labels: string[] = [];
  const chunks: Uint8Array[] = [];
  for (const jar of jars) {
    if (labels.length >= count) break;
    const entries = unzipSync(await readFile(jar), { filter: (f) => isCodeClassFile(f.name) });
    for (const [name, bytes] of Object.entries(entries).sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (labels.length >= count) break;
      labels.push(`${jar.slice(jar.lastIndexOf("/") + 1)}!/${name}`);
      chunks.push(bytes);
    }
  }
  const offsets = [0];
  for (const c of chunks) offsets.push((offsets[offsets.length - 1] as number) + c.length);
  await writeFile(`${data}.part`, Buffer.concat(chunks));
  // the corpus is the application: its own classes are not the dependencies' (as in a real scan, where
  // the application's classes are not in its dependency jars)
  const own = new Set(labels.map((l) => l.slice(l.indexOf("!/") + 2, -6)));
  const dependencyClasses = [...owners.keys()].filter((n) => !own.has(n));
  await writeFile(`${index}.part`, JSON.stringify({ labels, offsets, dependencyClasses }));
  await rename(`${data}.part`, data);
  await rename(`${index}.part`, index);
  return { data, index };
}

async function loadCorpus(paths: { data: string; index: string }): Promise<Corpus> {
  const bytes = new Uint8Array(await readFile(paths.data));
  const meta = JSON.parse(await readFile(paths.index, "utf8")) as Omit<Corpus, "bytes">;
  return { ...meta, bytes };
}

const filesOf = (c: Corpus) =>
  c.labels.map((label, i) => ({
    label,
    bytes: c.bytes.subarray(c.offsets[i] as number, c.offsets[i + 1] as number),
  }));

/** The same uses as dependencyUses, collected through @xmcl/asm's visitors. */
function asmUses(files: readonly { bytes: Uint8Array }[], dependencyClasses: ReadonlySet<string>): number {
  let count = 0;
  const external = (owner: string) => {
    const element = elementClass(owner);
    return element !== undefined && dependencyClasses.has(element);
  };
  for (const { bytes } of files) {
    const seen = new Set<string>();
    const add = (key: string, owner: string) => {
      if (external(owner) && !seen.has(key)) {
        seen.add(key);
        count++;
      }
    };
    const handle = (h: AsmHandle) => {
      if (h.owner === elementClass(h.owner)) add(`m ${h.owner}.${h.name}${h.descriptor}`, h.owner);
    };
    const constant = (c: unknown) => {
      if (c instanceof Type && (c.sort === Type.OBJECT || c.sort === Type.ARRAY))
        add(`c ${c.internalName}`, c.internalName);
      else if (c instanceof Handle) handle(c);
    };
    const methodVisitor = new (class extends MethodVisitor {
      override visitMethodInsn(_opcode: number, owner: string, name: string, desc: string) {
        if (owner === elementClass(owner)) add(`m ${owner}.${name}${desc}`, owner);
      }
      override visitFieldInsn(_opcode: number, owner: string, name: string, desc: string) {
        add(`f ${owner}.${name}${desc}`, owner);
      }
      override visitTypeInsn(_opcode: number, type: string) {
        add(`c ${type}`, type);
      }
      override visitMultiANewArrayInsn(desc: string) {
        add(`c ${desc}`, desc);
      }
      override visitLdcInsn(cst: unknown) {
        constant(cst);
      }
      override visitInvokeDynamicInsn(_name: string, _desc: string, bsm: AsmHandle, ...args: unknown[]) {
        handle(bsm);
        for (const a of args) constant(a);
      }
      override visitTryCatchBlock(_s: unknown, _e: unknown, _h: unknown, type: string | null) {
        if (type) add(`c ${type}`, type);
      }
    })(Opcodes.ASM5);
    const classVisitor = new (class extends ClassVisitor {
      override visitMethod() {
        seen.clear();
        return methodVisitor;
      }
    })(Opcodes.ASM5);
    new ClassReader(bytes).accept(classVisitor, [], 0);
  }
  return count;
}

const countUses = (r: Awaited<ReturnType<typeof parseClassFiles>>) =>
  r.classes.reduce((n, c) => n + c.methods.reduce((m, x) => m + x.uses.length, 0), 0);

/** One side, in this process (called in a child process by benchJavaScan). */
async function runSide(
  side: Side,
  paths: { data: string; index: string },
  iterations: number,
): Promise<SideResult> {
  const c = await loadCorpus(paths);
  const files = filesOf(c);
  const set = new Set(c.dependencyClasses);
  const owners = new Map(c.dependencyClasses.map((n) => [n, ["maven:x"]]));
  const once = async (): Promise<number> => {
    if (side === "reader") return countUses(dependencyUses(files, set));
    if (side === "reader, worker threads") return countUses(await parseClassFiles(files, owners, 1));
    return asmUses(files, set);
  };
  let uses = await once(); // warm-up
  const ms: number[] = [];
  const cpuMs: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const start = performance.now();
    const cpu = process.cpuUsage();
    uses = await once();
    ms.push(performance.now() - start);
    const used = process.cpuUsage(cpu);
    cpuMs.push((used.user + used.system) / 1000);
  }
  return { side, ms, cpuMs, uses, maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024) };
}

function child(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    p.stdout.on("data", (d) => {
      out += d;
    });
    p.on("close", (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${args.join(" ")} exited with ${code}`)),
    );
  });
}

export async function benchJavaScan(options: JavaBenchOptions): Promise<JavaBenchReport> {
  const paths = await corpus(options.classes);
  const c = await loadCorpus(paths);
  const sides: SideResult[] = [];
  for (const side of SIDES) {
    sides.push(
      JSON.parse(await child([SELF, "--side", side, paths.data, paths.index, String(options.iterations)])),
    );
  }
  const report: JavaBenchReport = {
    classes: c.labels.length,
    bytes: c.bytes.length,
    dependencyClasses: c.dependencyClasses.length,
    sides,
    sameAnswer: sides.every((s) => s.uses === sides[0]?.uses),
    machine: `${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}, Node ${process.version}`,
  };
  if (options.wholeScan) {
    const built = await builtSolrCore();
    const out = join(corpusDir(), "solr-core.analysis.json");
    const start = performance.now();
    const summary = JSON.parse(
      await new Promise<string>((resolve, reject) => {
        const p = spawn(
          process.execPath,
          [
            CLI,
            "scan",
            built.dir,
            "--app",
            "bench",
            "--offline",
            "--json",
            "--output",
            out,
            "--data-dir",
            join(corpusDir(), "data"),
          ],
          {
            stdio: ["ignore", "pipe", "inherit"],
            env: { ...process.env, MAVEN_LOCAL_REPOSITORY: ORACLE_REPOSITORY },
          },
        );
        let text = "";
        p.stdout.on("data", (d) => {
          text += d;
        });
        p.on("close", (code) =>
          code === 0 ? resolve(text) : reject(new Error(`imaging scan exited with ${code}`)),
        );
      }),
    ) as { code: { files: number }[] };
    report.wholeScanMs = performance.now() - start;
    report.wholeScanClasses = summary.code[0]?.files;
  }
  return report;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
};

const rate = (classes: number, ms: number) => Math.round((classes / ms) * 1000).toLocaleString("en");

export function reportMarkdown(r: JavaBenchReport): string {
  const reader = r.sides.find((s) => s.side === "reader");
  const lines = [
    `Machine: ${r.machine}.`,
    "",
    `Corpus: ${r.classes} class files (${(r.bytes / 2 ** 20).toFixed(1)} MiB), dependency index of ${r.dependencyClasses} classes; ` +
      (r.sameAnswer
        ? `all sides find the same ${reader?.uses} uses of dependency classes.`
        : `the sides disagree: ${r.sides.map((s) => `${s.side} ${s.uses}`).join(", ")}.`),
    "",
    "| side | wall ms, median (min) | class files / s, median (best) | vs reader | CPU ms, median | class files / CPU-second | peak RSS (MiB) |",
    "|---|---:|---:|---:|---:|---:|---:|",
  ];
  for (const s of r.sides) {
    const ms = median(s.ms);
    lines.push(
      `| ${s.side} | ${ms.toFixed(0)} (${Math.min(...s.ms).toFixed(0)}) | ` +
        `${rate(r.classes, ms)} (${rate(r.classes, Math.min(...s.ms))}) | ` +
        `${(ms / median(reader?.ms ?? [ms])).toFixed(2)}× time | ${median(s.cpuMs).toFixed(0)} | ` +
        `${rate(r.classes, median(s.cpuMs))} | ${s.maxRssMb} |`,
    );
  }
  if (r.wholeScanMs !== undefined) {
    lines.push(
      "",
      `Whole \`imaging scan --offline --output\` of solr-core 8.9.0 built (${r.wholeScanClasses} class files, POM resolution, 126 dependency jars listed from the local repository, document written): ${(r.wholeScanMs / 1000).toFixed(1)} s.`,
    );
  }
  return lines.join("\n");
}

if (process.argv[1] === SELF) {
  if (process.argv[2] === "--side") {
    const [, , , side, data, index, iterations] = process.argv;
    process.stdout.write(
      JSON.stringify(
        await runSide(side as Side, { data: data as string, index: index as string }, Number(iterations)),
      ),
    );
  } else {
    const report = await benchJavaScan({
      classes: Number(process.env.BENCH_JAVA_CLASSES ?? 20_000),
      iterations: Number(process.env.BENCH_JAVA_ITERATIONS ?? 5),
      wholeScan: true,
    });
    process.stdout.write(`${reportMarkdown(report)}\n`);
  }
}
