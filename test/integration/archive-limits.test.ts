/**
 * Archives that would hurt the scanner, from an independent audit: an entry inflating a thousand times
 * its size, several of them, an archive of 300,000 entries, archives nested without end, and more
 * inflated bytes in all than an application holds. Each ends in a warning naming the entry (or, for the
 * scanned archive itself, one line and a non-zero exit), with the scan's peak memory measured in a child
 * process (`imaging scan` as users run it, its maximum resident set from getrusage).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { zipSync } from "fflate";
import { readArchive } from "../../src/scanner/maven/archive.ts";
import { createMavenRepository } from "../../src/scanner/maven/repository.ts";
import { createRegistryFetcher } from "../../src/scanner/registry/cached-fetch.ts";
import type { ScanSummary } from "../../src/scanner/scan.ts";
import { CLI } from "../support/cli.ts";
import { LOG4J_API, loggingJars } from "../support/java-subjects.ts";
import { CENTRAL, centralFile, SCANNER_HTTP_CACHE } from "../support/maven-subjects.ts";
import { writeZip } from "../support/zip-bombs.ts";

const REPORT_RSS = new URL("../support/report-max-rss.ts", import.meta.url).pathname;
const RSS_LIMIT_MB = 300;

let work: string;
let api: Uint8Array;
before(async () => {
  await loggingJars();
  work = mkdtempSync(join(tmpdir(), "imaging-archive-limits-"));
  api = new Uint8Array(readFileSync(LOG4J_API));
});
after(() => rmSync(work, { recursive: true, force: true }));

interface ChildScan {
  code: number | null;
  stderr: string;
  summary: ScanSummary | undefined;
  maxRssMb: number;
}

/** `imaging scan PATH --offline --output` in a process of its own, with its peak memory. */
function scanInChild(path: string): Promise<ChildScan> {
  const dataDir = mkdtempSync(join(work, "data-"));
  const child = spawn(
    process.execPath,
    [
      "--import",
      REPORT_RSS,
      CLI,
      "scan",
      path,
      "--app",
      "audit",
      "--json",
      "--offline",
      "--output",
      join(dataDir, "analysis.json"),
      "--data-dir",
      dataDir,
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, MAVEN_LOCAL_REPOSITORY: join(work, "no-m2") },
    },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      const rss = /max-rss-kib (\d+)\s*$/.exec(stderr);
      if (!rss) return reject(new Error(`no peak memory reported: ${stderr}`));
      resolve({
        code,
        stderr: stderr.replace(/\n?max-rss-kib \d+\s*$/, ""),
        summary: code === 0 ? (JSON.parse(stdout) as ScanSummary) : undefined,
        maxRssMb: Number(rss[1]) / 1024,
      });
    });
  });
}

const WEB_XML = { name: "WEB-INF/web.xml", content: new TextEncoder().encode("<web-app/>") };

describe("archives that would hurt the scanner end in a warning naming the entry, in bounded memory", () => {
  it("a 1 MiB war holding a 1 GiB entry: under 300 MB, the entry named", async () => {
    const war = join(work, "bomb.war");
    writeZip(war, [
      WEB_XML,
      { name: "WEB-INF/lib/log4j-api-2.14.1.jar", content: api },
      { name: "WEB-INF/lib/huge-1.0.jar", content: { zerosMiB: 1024 } },
    ]);
    assert.ok(readFileSync(war).length < 2 * 1024 * 1024);
    const scan = await scanInChild(war);
    assert.ok(scan.maxRssMb < RSS_LIMIT_MB, `peak memory ${scan.maxRssMb.toFixed(0)} MB`);
    assert.equal(scan.code, 0, scan.stderr);
    assert.deepEqual(scan.summary?.packages, 1, "log4j-api, read beside the bomb");
    const warning = scan.summary?.warnings.find((w) =>
      w.message.includes("bomb.war!/WEB-INF/lib/huge-1.0.jar"),
    );
    assert.ok(warning, JSON.stringify(scan.summary?.warnings));
    assert.match(
      warning.message,
      /not read: it (?:inflates|declares) .*more than 100 times its compressed size, as a zip bomb does/,
    );
    assert.ok(scan.maxRssMb < RSS_LIMIT_MB, `peak memory ${scan.maxRssMb.toFixed(0)} MB`);
  });

  it("three such entries (two jars, a class file): each named, still under 300 MB", async () => {
    const war = join(work, "bombs.war");
    writeZip(war, [
      WEB_XML,
      { name: "WEB-INF/classes/com/example/Huge.class", content: { zerosMiB: 1024 } },
      { name: "WEB-INF/lib/huge-1.0.jar", content: { zerosMiB: 1024 } },
      { name: "WEB-INF/lib/huge-2.0.jar", content: { zerosMiB: 1024 } },
      { name: "WEB-INF/lib/log4j-api-2.14.1.jar", content: api },
    ]);
    const scan = await scanInChild(war);
    assert.ok(scan.maxRssMb < RSS_LIMIT_MB, `peak memory ${scan.maxRssMb.toFixed(0)} MB`);
    assert.equal(scan.code, 0, scan.stderr);
    const named = (entry: string) =>
      scan.summary?.warnings.some(
        (w) => `${w.file}: ${w.message}`.includes(`bombs.war!/${entry}`) && /zip bomb/.test(w.message),
      );
    for (const entry of [
      "WEB-INF/lib/huge-1.0.jar",
      "WEB-INF/lib/huge-2.0.jar",
      "WEB-INF/classes/com/example/Huge.class",
    ]) {
      assert.ok(named(entry), `${entry}: ${JSON.stringify(scan.summary?.warnings)}`);
    }
    assert.ok(scan.maxRssMb < RSS_LIMIT_MB, `peak memory ${scan.maxRssMb.toFixed(0)} MB`);
  });

  it("300,000 entries: the scanned archive is refused in one line; nested, it is a warning", async () => {
    const names = Array.from({ length: 300_000 }, (_, i) => ({
      name: `e/${i}.txt`,
      content: new Uint8Array(0),
    }));
    const many = join(work, "many-1.0.jar");
    writeZip(many, names);
    const alone = await scanInChild(many);
    assert.equal(alone.code, 1);
    assert.match(
      alone.stderr.trim(),
      /^imaging: many-1\.0\.jar: not read: .*more than the limit of 250000 entries$/,
    );
    assert.ok(alone.maxRssMb < RSS_LIMIT_MB, `peak memory ${alone.maxRssMb.toFixed(0)} MB`);

    const war = join(work, "many.war");
    writeZip(war, [
      WEB_XML,
      { name: "WEB-INF/lib/many-1.0.jar", content: readFileSync(many) },
      { name: "WEB-INF/lib/log4j-api-2.14.1.jar", content: api },
    ]);
    const nested = await scanInChild(war);
    assert.equal(nested.code, 0, nested.stderr);
    assert.equal(nested.summary?.packages, 1);
    assert.ok(
      nested.summary?.warnings.some(
        (w) =>
          w.message.startsWith("many.war!/WEB-INF/lib/many-1.0.jar: not read:") && /250000/.test(w.message),
      ),
      JSON.stringify(nested.summary?.warnings),
    );
  });

  it("archives nested deeper than 4: the deepest named, the rest read", async () => {
    // an ear holding a war holding a war... (each a container whose root archives are read)
    let inner: Uint8Array = zipSync({
      "WEB-INF/web.xml": new TextEncoder().encode("<web-app/>"),
      "WEB-INF/lib/log4j-api-2.14.1.jar": api,
    });
    for (let level = 5; level >= 1; level--)
      inner = zipSync({
        "WEB-INF/web.xml": new TextEncoder().encode("<web-app/>"),
        [`level${level}.war`]: inner,
      });
    const ear = join(work, "deep.ear");
    writeFileSync(
      ear,
      zipSync({ "META-INF/application.xml": new TextEncoder().encode("<application/>"), "outer.war": inner }),
    );
    const scan = await scanInChild(ear);
    assert.equal(scan.code, 1, "nothing readable within the depth: no package");
    assert.match(scan.stderr, /no package found/);
    const summaryLine = scan.stderr;
    assert.match(
      summaryLine,
      /deep\.ear!\/outer\.war!\/level1\.war!\/level2\.war!\/level3\.war!\/level4\.war: not read: archives nested more than 4 deep/,
    );
  });

  it("more inflated bytes in all than the limit: the entry that passed it named, the rest not read", async () => {
    const war = await centralFile("org.owasp.webgoat:webgoat-container:7.0.1", "war");
    const fetcher = createRegistryFetcher({ cacheDir: SCANNER_HTTP_CACHE, offline: true });
    const repository = createMavenRepository({
      fetcher,
      remoteUrl: CENTRAL,
      localRepository: join(work, "no-m2"),
    });
    const contents = await readArchive(war, "webgoat.war", {
      application: true,
      identify: { repository, repositoryUrl: CENTRAL },
      resolvePom: async () => ({ artifacts: [], warnings: [] }),
      limits: { maxTotalInflatedBytes: 8 * 1024 * 1024 },
    });
    const passed = contents.warnings.filter((w) => /inflate to more than 8\.0 MiB in all/.test(w));
    assert.equal(passed.length, 1, JSON.stringify(contents.warnings));
    assert.match(passed[0] as string, /^webgoat\.war!\/WEB-INF\/lib\/[^:]+\.jar: not read/);
    assert.ok(
      contents.packages.length > 3 && contents.packages.length < 60,
      `${contents.packages.length} packages before the limit`,
    );
  });
});
