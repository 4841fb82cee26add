/**
 * The class-file reader against the JDK's own disassembler: a small library and an application using it
 * in every way bytecode can (static, virtual, interface and special calls, field reads and writes,
 * nested classes, new, instanceof, checkcast, arrays, multi-dimensional arrays, caught exceptions,
 * lambdas and method references through invokedynamic, tableswitch and lookupswitch padding, `wide`
 * instructions, long/double constants taking two pool entries, non-ASCII strings), compiled by javac for
 * Java 8 and for the running JDK, then read by readClassUses and by `javap -c -p -v`: every method's uses
 * must agree.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ClassFormatError, type ClassUses, readClassUses } from "../../src/scanner/code/java/class-file.ts";
import { type OracleMethod, parseJavap } from "../support/javap-oracle.ts";

const LIBRARY = `package lib;
public class Util {
  public static int twice(int x) { return 2 * x; }
  public static String label = "l";
  public int count;
  public static class Inner { public Inner() {} public void go() {} }
  public interface Shape { double area(); }
  public static class Oops extends RuntimeException {}
}
`;

const WIDE_LOCALS = Array.from({ length: 300 }, (_, i) => `    int v${i} = ${i};`).join("\n");

const APPLICATION = `package app;
import lib.Util;
import java.util.function.IntUnaryOperator;
import java.util.function.Supplier;
public class App extends Util implements Util.Shape {
  static long big = 1234567890123L;
  static double ratio = 3.25;
  static String text = "h\\u00e9llo \\u0000 \\uD83D\\uDE00 \\u4e2d";
  public double area() { return 1.0; }
  int run(Object o, int k) {
    int a = Util.twice(k);
    Util.label = "x";
    String s = Util.label;
    Util u = new Util();
    u.count++;
    new Util.Inner().go();
    if (o instanceof Util.Inner) a++;
    Util.Shape shape = (Util.Shape) o;
    shape.area();
    Util[] list = new Util[3];
    Util[][] grid = new Util[2][2];
    IntUnaryOperator f = Util::twice;
    Supplier<Util> g = Util::new;
    Runnable r = () -> new Util.Inner().go();
    try { a += f.applyAsInt(a); } catch (Util.Oops e) { a--; }
    switch (k) { case 1: a++; break; case 2: a--; break; case 3: a *= 2; break; default: break; }
    switch (k) { case 10: a++; break; case 100000: a--; break; default: break; }
    Class<?> c = Util.class;
    r.run();
    return a + list.length + grid.length + s.length() + g.get().count + c.getName().length() + (int) big + (int) ratio;
  }
  int wide() {
${WIDE_LOCALS}
    v299 += 1000;
    return v299 + v0;
  }
  String concat(int k) { return "k=" + k + Util.label; }
}
`;

/** Java 16+ only: a record (ObjectMethods bootstrap: class and field-getter handle arguments). */
const RECORD = `package app;
import lib.Util;
public record Point(Util util, int x) {
  int twice() { return Util.twice(x); }
  boolean isInner(Object o) { return o instanceof Util.Inner inner && inner != null; }
}
`;

let work: string;

const compiled = new Map<string, Map<string, Uint8Array>>();

function compile(release: string): Map<string, Uint8Array> {
  const done = compiled.get(release);
  if (done) return done;
  const out = join(work, `classes-${release}`);
  mkdirSync(out, { recursive: true });
  const sources = [join(work, "lib/Util.java"), join(work, "app/App.java")];
  if (Number(release) >= 16) sources.push(join(work, "app/Point.java"));
  execFileSync("javac", ["--release", release, "-d", out, ...sources]);
  const files = new Map<string, Uint8Array>();
  for (const entry of readdirSync(out, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && entry.name.endsWith(".class")) {
      const path = join(entry.parentPath, entry.name);
      files.set(path.slice(out.length + 1), readFileSync(path));
    }
  }
  compiled.set(release, files);
  return files;
}

const key = (u: { kind: string; owner: string; name: string; descriptor: string }) =>
  `${u.kind} ${u.owner}.${u.name}:${u.descriptor}`;

function javapView(classesDir: string, files: string[]): OracleMethod[] {
  return parseJavap(
    execFileSync("javap", ["-c", "-p", "-v", ...files], { cwd: classesDir, encoding: "utf8" }),
  );
}

function assertAgreesWithJavap(release: string) {
  const files = compile(release);
  const javap = javapView(join(work, `classes-${release}`), [...files.keys()]);
  let compared = 0;
  for (const [file, bytes] of files) {
    const mine = readClassUses(bytes);
    for (const method of mine.methods) {
      const theirs = javap.find(
        (m) => m.className === mine.name && m.name === method.name && m.descriptor === method.descriptor,
      );
      assert.ok(theirs, `${file}: javap shows ${method.name}${method.descriptor}`);
      assert.deepEqual(
        new Set(method.uses.map(key)),
        new Set(theirs.uses.map(key)),
        `${file} ${method.name}${method.descriptor}`,
      );
      compared++;
    }
    const header = javap.find((m) => m.className === mine.name && m.name === "");
    assert.deepEqual(
      mine.supertypes,
      header?.uses.map((u) => u.owner),
      `${file} supertypes`,
    );
  }
  return compared;
}

describe("the class-file reader agrees with javap on javac's output", () => {
  before(() => {
    work = mkdtempSync(join(tmpdir(), "imaging-java-"));
    mkdirSync(join(work, "lib"));
    mkdirSync(join(work, "app"));
    writeFileSync(join(work, "lib/Util.java"), LIBRARY);
    writeFileSync(join(work, "app/App.java"), APPLICATION);
    writeFileSync(join(work, "app/Point.java"), RECORD);
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  it("Java 8 class files (major 52): every method's uses", () => {
    assert.ok(assertAgreesWithJavap("8") >= 10);
  });

  it("class files of the running JDK (indy string concatenation, a record, nest mates): every method's uses", () => {
    const release =
      /javac (\d+)/.exec(execFileSync("javac", ["-version"], { encoding: "utf8" }))?.[1] ?? "17";
    assert.ok(Number(release) >= 16, `javac ${release}: the record needs 16+`);
    const compared = assertAgreesWithJavap(release);
    assert.ok(compared >= 15, `${compared} methods compared`);
    const point = readClassUses(compile(release).get("app/Point.class") as Uint8Array);
    const recordToString = point.methods.find((m) => m.name === "toString");
    assert.ok(
      recordToString?.uses.some((u) => key(u) === "field app/Point.util:Llib/Util;"),
      "the record's ObjectMethods bootstrap names its components",
    );
  });

  it("names what App.run uses of the library, method references through invokedynamic included", () => {
    const app = readClassUses(compile("8").get("app/App.class") as Uint8Array);
    const run = app.methods.find((m) => m.name === "run");
    const uses = new Set(run?.uses.filter((u) => /^\[*L?lib\//.test(u.owner)).map(key));
    for (const expected of [
      "method lib/Util.twice:(I)I",
      "field lib/Util.label:Ljava/lang/String;",
      "method lib/Util.<init>:()V",
      "field lib/Util.count:I",
      "class lib/Util$Inner.:",
      "method lib/Util$Inner.go:()V",
      "class lib/Util$Shape.:",
      "method lib/Util$Shape.area:()D",
      "class lib/Util.:",
      "class [[Llib/Util;.:",
      "class lib/Util$Oops.:",
    ]) {
      assert.ok(uses.has(expected), `${expected} in ${[...uses].join(", ")}`);
    }
    assert.deepEqual(app.supertypes, ["lib/Util", "lib/Util$Shape"]);
    const lambda = app.methods.find((m) => m.name.startsWith("lambda$run$"));
    assert.ok(
      lambda?.uses.some((u) => key(u) === "method lib/Util$Inner.go:()V"),
      "the lambda body is its own method",
    );
  });

  it("reads class files of Java 21 and 25 (majors 65 and 69: same format)", () => {
    const bytes = compile("8").get("app/App.class") as Uint8Array;
    const reference = readClassUses(bytes);
    for (const major of [65, 69]) {
      const copy = Uint8Array.from(bytes);
      new DataView(copy.buffer).setUint16(6, major);
      const read: ClassUses = readClassUses(copy);
      assert.equal(read.major, major);
      assert.deepEqual(read.methods, reference.methods);
    }
  });

  it("refuses what is not a whole class file with a ClassFormatError, never another error", () => {
    const bytes = compile("8").get("app/App.class") as Uint8Array;
    const cases: [string, Uint8Array][] = [
      ["empty", new Uint8Array(0)],
      ["a text file", new TextEncoder().encode("not a class file at all")],
      ["bad magic", Uint8Array.from(bytes, (b, i) => (i === 0 ? 0 : b))],
      ["bad pool tag", Uint8Array.from(bytes, (b, i) => (i === 10 ? 99 : b))],
    ];
    for (let cut = 10; cut < bytes.length; cut += Math.max(1, Math.floor(bytes.length / 97))) {
      cases.push([`truncated at ${cut}`, bytes.subarray(0, cut)]);
    }
    for (const [label, data] of cases) {
      assert.throws(() => readClassUses(data), ClassFormatError, label);
    }
  });
});
