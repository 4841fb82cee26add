import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { zipSync } from "fflate";
import { bufferSource } from "../../../src/scanner/archive/byte-source.ts";
import { InflateBudget } from "../../../src/scanner/archive/limits.ts";
import { entriesInTail, ZipArchive } from "../../../src/scanner/archive/zip.ts";
import { packagedAt } from "../../../src/scanner/maven/packaged-at.ts";

/** The last 8 KiB of spring-core-4.1.9.RELEASE.jar as Maven Central serves it (SOURCES.md). */
const SPRING_TAIL = readFileSync(
  new URL("../../fixtures/registry/maven/spring-core-4.1.9.RELEASE.jar.tail", import.meta.url),
);
const text = (s: string) => new TextEncoder().encode(s);
/** A DOS time is the writer's local time: fflate writes a Date's local fields, read back as UTC. */
const local = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0) => new Date(y, mo - 1, d, h, mi, s);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

describe("when a jar was packaged, from its entries' times", () => {
  it("reads the end of a real jar's central directory from its last 8 KiB alone", () => {
    const entries = entriesInTail(SPRING_TAIL);
    assert.ok(entries.length > 50, `${entries.length} entries`);
    assert.ok(
      entries.every((e) => e.name.startsWith("org/springframework/")),
      entries[0]?.name,
    );
    assert.equal(iso(packagedAt(entries)), "2015-12-17T00:26:38.000Z");
    // fewer bytes still hold a chain of whole headers ending where the directory ends
    const shorter = entriesInTail(SPRING_TAIL.subarray(4000));
    assert.ok(shorter.length > 10 && shorter.length < entries.length);
    assert.deepEqual(
      shorter.map((e) => e.name),
      entries.slice(entries.length - shorter.length).map((e) => e.name),
    );
  });

  it("reads the same entries from a tail as from the whole archive", () => {
    const files: Record<string, [Uint8Array, { mtime: Date }]> = {};
    for (let i = 0; i < 400; i++)
      files[`com/example/C${i}.class`] = [text(`class ${i}`), { mtime: local(2019, 5, 1, 12, 0, i % 60) }];
    const jar = zipSync(files);
    const whole = ZipArchive.open(bufferSource(jar), "x.jar", new InflateBudget()).entries;
    assert.equal(whole.length, 400);
    assert.deepEqual(entriesInTail(jar), whole);
    const tail = entriesInTail(jar.subarray(jar.length - 4096));
    assert.ok(tail.length > 0 && tail.length < 400);
    assert.deepEqual(
      tail.map((e) => [e.name, e.modifiedMs]),
      whole.slice(400 - tail.length).map((e) => [e.name, e.modifiedMs]),
    );
    assert.deepEqual(entriesInTail(jar.subarray(0, jar.length - 10)), [], "no end record: nothing");
  });

  it("prefers the extended timestamp (UTC) to the DOS time, and leaves out times that say nothing", () => {
    const ut = new Uint8Array(5);
    ut[0] = 1; // modification time present
    new DataView(ut.buffer).setUint32(1, Date.UTC(2021, 2, 6, 22, 12, 6) / 1000, true);
    const jar = zipSync({
      "a/Compiled.class": [text("x"), { mtime: local(2021, 3, 6, 22, 11, 58) }],
      "META-INF/MANIFEST.MF": [
        text("Manifest-Version: 1.0\n"),
        { mtime: local(2021, 3, 7, 9), extra: { 21589: ut } },
      ],
      "a/Reproducible.class": [text("x"), { mtime: local(1980, 2, 1) }],
    });
    const entries = entriesInTail(jar);
    assert.equal(iso(entries[1]?.modifiedMs ?? null), "2021-03-06T22:12:06.000Z");
    assert.equal(iso(packagedAt(entries)), "2021-03-06T22:12:06.000Z");
    const at = (...times: Date[]) =>
      packagedAt(
        entriesInTail(
          zipSync(Object.fromEntries(times.map((mtime, i) => [`c${i}.class`, [text("x"), { mtime }]]))),
        ),
        Date.UTC(2026, 0, 1),
      );
    // a reproducible build's fixed 1980 time, or a clock in the future, is no packaging time
    assert.equal(at(local(1980, 2, 1), local(1980, 2, 1, 0, 0, 2)), null);
    assert.equal(at(local(2030, 1, 1), local(2030, 1, 1, 0, 0, 2)), null);
    // nor is a reproducible build's one chosen time, even shifted by whole hours on some entries
    // (httpcore5 5.2.3, released in 2023, has every entry at 2021-01-10T15:31:00)
    assert.equal(at(local(2021, 1, 10, 15, 31), local(2021, 1, 10, 15, 31)), null);
    assert.equal(at(local(2023, 10, 6, 14, 12, 42), local(2023, 10, 6, 18, 12, 42)), null);
    // before builds could choose their entries' time, one time on every entry was the build's (Ant)
    assert.equal(
      iso(at(local(2009, 12, 16, 18, 27, 22), local(2009, 12, 16, 18, 27, 22))),
      "2009-12-16T18:27:22.000Z",
    );
    // entries written at different moments, as a build writes them, give its time
    assert.equal(
      iso(at(local(2015, 12, 17, 0, 26, 28), local(2015, 12, 17, 0, 26, 38))),
      "2015-12-17T00:26:38.000Z",
    );
  });
});
