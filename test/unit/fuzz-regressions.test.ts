/**
 * Every input the fuzzers found (test/fuzz/regressions/<target>/) stays handled: its target's contract
 * (the parser's documented error naming the file on one printable line, or a result) holds within 10 s
 * and 512 MB of heap, checked in a worker thread so that a hang or an over-cap input fails the test
 * instead of stopping the suite. Then what each fixed case must give, stated case by case.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { Worker } from "node:worker_threads";
import { readOsvRecord } from "../../src/scanner/advisories/osv-record.ts";
import { extractSource } from "../../src/scanner/code/js/extract-file.ts";
import { ScanInputError } from "../../src/scanner/inventory.ts";
import { parseGradleLockfile } from "../../src/scanner/maven/gradle-lockfile.ts";
import { readPackageLock } from "../../src/scanner/npm/package-lock.ts";
import { readYarnLock } from "../../src/scanner/npm/yarn-lock.ts";

const regressions = new URL("../fuzz/regressions/", import.meta.url);
const input = (target: string, name: string) =>
  readFileSync(new URL(`${target}/${name}`, regressions), "utf8");

function runTarget(target: string, file: string): Promise<{ ok: boolean; error?: string }> {
  return new Promise((resolve) => {
    const worker = new Worker(new URL("../fuzz/regression-worker.ts", import.meta.url), {
      workerData: { target, input: file },
      resourceLimits: { maxOldGenerationSizeMb: 512 },
    });
    const deadline = setTimeout(() => {
      void worker.terminate();
      resolve({ ok: false, error: "no answer within 10 s (a hang)" });
    }, 10_000);
    worker.once("message", (outcome: { ok: boolean; error?: string }) => {
      clearTimeout(deadline);
      void worker.terminate();
      resolve(outcome);
    });
    worker.once("error", (error) => {
      clearTimeout(deadline);
      resolve({ ok: false, error: `${error.name}: ${error.message}` });
    });
  });
}

describe("every fuzz finding stays handled by its target", () => {
  for (const target of readdirSync(regressions)) {
    for (const name of readdirSync(new URL(`${target}/`, regressions))) {
      test(`${target}/${name}`, async () => {
        const outcome = await runTarget(target, join(regressions.pathname, target, name));
        assert.ok(outcome.ok, outcome.error);
      });
    }
  }
});

function scanError(read: () => unknown): ScanInputError {
  try {
    read();
  } catch (error) {
    if (error instanceof ScanInputError) return error;
    throw error;
  }
  assert.fail("no ScanInputError");
}

describe("fixed cases", () => {
  test("yarn.lock with a string that has no closing quote: the line of the string, not a hang", () => {
    const error = scanError(() =>
      readYarnLock(input("npm-yarn-lock", "unterminated-string.lock"), "web/yarn.lock", []),
    );
    assert.equal(error.file, "web/yarn.lock");
    assert.equal(error.line, 4);
    assert.equal(
      error.message,
      "web/yarn.lock:4: not a valid yarn v1 lockfile: a string has no closing quote",
    );
  });

  test("yarn.lock ending in a comment without a line end: read as usual", () => {
    const read = readYarnLock(input("npm-yarn-lock", "comment-at-end.lock"), "yarn.lock", []);
    assert.deepEqual(
      read.packages.map((p) => `${p.name}@${p.version}`),
      ["lodash@4.17.15"],
    );
  });

  test("a JSON syntax error quoting several lines of the lockfile: one line, the line break escaped", () => {
    const error = scanError(() =>
      readPackageLock(input("npm-package-lock", "parser-excerpt-newline.json"), "web/package-lock.json"),
    );
    assert.match(error.message, /^web\/package-lock\.json:\d+: not valid JSON: Unexpected token '!'/);
    assert.doesNotMatch(error.message, /\n/);
    assert.match(error.message, /\\n/);
  });

  test("a lockfile key carrying terminal escape sequences: written as escapes, never sent to the terminal", () => {
    const error = scanError(() =>
      readPackageLock(input("npm-package-lock", "terminal-escape-key.json"), "package-lock.json"),
    );
    assert.equal(error.message, 'package-lock.json: "node_modules/\\u001b[2J\\u001b[31mevil" has no version');
  });

  test("NUL bytes in a Gradle lockfile line: quoted as escapes on one line", () => {
    const error = scanError(() =>
      parseGradleLockfile(input("gradle-lockfile", "nul-bytes.lockfile"), "gradle.lockfile"),
    );
    assert.equal(error.line, 2);
    assert.match(
      error.message,
      /^gradle\.lockfile:2: not a Gradle lockfile line .*fg4j-core:(\\u0000){8}2\.14\.1$/,
    );
  });

  test("an OSV event whose key is a paragraph of text: the malformed record's reason quotes it short, on one line", () => {
    const read = readOsvRecord(JSON.parse(input("osv-record", "event-key-with-newlines.json")));
    assert.deepEqual(read, {
      kind: "malformed",
      reason:
        'affected[2].ranges[0].events[1]: expected exactly one of introduced, fixed, last_affected, limit (got " prototype pollution. \\n\\nThe vulnerable f…")',
    });
  });

  test("a JavaScript file with a NUL byte: its parse error names the character as an escape", () => {
    const source = readFileSync(new URL("js-extractor/nul-in-source.input", regressions))
      .subarray(1)
      .toString();
    const facts = extractSource("src/app.js", source);
    assert.deepEqual(facts.error, { line: 5, message: "Invalid Character `\\u0000`" });
    assert.deepEqual(facts.uses, []);
  });
});
