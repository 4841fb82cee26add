import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DescriptorError, elementClass, methodMangling } from "../../../src/scanner/code/java/descriptor.ts";

describe("JVM descriptors as the insights API shows them", () => {
  it("gives the issue's example exactly", () => {
    assert.equal(
      methodMangling("getContext", "(Z)Lorg/apache/logging/log4j/core/LoggerContext;"),
      "getContext(boolean) return org.apache.logging.log4j.core.LoggerContext",
    );
  });

  it("writes arrays with [], nested classes with $, constructors as <init> returning void", () => {
    assert.equal(methodMangling("main", "([Ljava/lang/String;)V"), "main(java.lang.String[]) return void");
    assert.equal(
      methodMangling("<init>", "(Lorg/x/Outer$Inner;[[IJD)V"),
      "<init>(org.x.Outer$Inner, int[][], long, double) return void",
    );
    assert.equal(
      methodMangling("f", "(BCFSZ)[[Ljava/util/Map$Entry;"),
      "f(byte, char, float, short, boolean) return java.util.Map$Entry[][]",
    );
  });

  it("refuses malformed descriptors instead of guessing", () => {
    for (const bad of ["", "V", "(", "(L;)V", "(Ljava/lang/String)V", "(Q)V", "()", "()VV"]) {
      assert.throws(() => methodMangling("m", bad), DescriptorError, bad);
    }
  });

  it("unwraps array classes to their element class, none for primitive arrays", () => {
    assert.equal(elementClass("org/x/Foo"), "org/x/Foo");
    assert.equal(elementClass("[[Lorg/x/Foo;"), "org/x/Foo");
    assert.equal(elementClass("[I"), undefined);
  });
});
