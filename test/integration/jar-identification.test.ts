/**
 * Jars without Maven metadata in an archive, identified as dependency-check and Syft do, each guess
 * confirmed by the `.sha1` Maven Central publishes: lz4-java 1.8.0 (its manifest's
 * Automatic-Module-Name gives org.lz4), asm 9.3 (nothing in it says org.ow2.asm: only a SHA-1 search
 * service knows), and a jar built here that no repository knows. Maven Central is reached through a
 * local relay that counts the requests; the search service is a local double answering in the shape of
 * Maven Central's search API (`response.docs[]` of `{id, g, a, v, p}`), its first answer a wrong one
 * that the checksum refuses. A re-scan asks nothing again, the answers that were negative included.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { zipSync } from "fflate";
import type { ScanSummary } from "../../src/scanner/scan.ts";
import { type Counted, centralRelay, listen } from "../support/central-relay.ts";
import { runCli } from "../support/cli.ts";
import { LOG4J_API, loggingJars } from "../support/java-subjects.ts";
import { centralFile } from "../support/maven-subjects.ts";

const ASM = "org.ow2.asm:asm:9.3";
const LZ4 = "org.lz4:lz4-java:1.8.0";

/** Maven Central's search API as it answers `q=1:"<sha1>"`, for the checksums it is given. */
async function searchDouble(known: Map<string, { g: string; a: string; v: string }[]>): Promise<Counted> {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://localhost");
    requests.push(url.searchParams.get("q") ?? "");
    const sha1 = /^1:"([0-9a-f]{40})"$/.exec(url.searchParams.get("q") ?? "")?.[1] ?? "";
    const docs = (known.get(sha1) ?? []).map((d) => ({
      id: `${d.g}:${d.a}:${d.v}`,
      ...d,
      p: "jar",
      timestamp: 1649253573000,
      ec: ["-sources.jar", ".pom", "-javadoc.jar", ".jar"],
      tags: ["bytecode", "framework"],
    }));
    response.writeHead(200, { "content-type": "application/json" });
    response.end(
      JSON.stringify({
        responseHeader: {
          status: 0,
          QTime: 1,
          params: { q: url.searchParams.get("q"), rows: "20", wt: "json", version: "2.2" },
        },
        response: { numFound: docs.length, start: 0, docs },
      }),
    );
  });
  return { server, url: `${await listen(server)}/solrsearch/select`, requests };
}

const sha1Of = async (coordinates: string) =>
  createHash("sha1")
    .update(readFileSync(await centralFile(coordinates, "jar")))
    .digest("hex");

describe("jars without Maven metadata: guessed, searched, confirmed by SHA-1, answers kept", () => {
  let work: string;
  let war: string;
  let relay: Counted;
  let search: Counted;

  before(async () => {
    await loggingJars();
    work = mkdtempSync(join(tmpdir(), "imaging-jar-identity-"));
    const tool = zipSync({
      "com/example/tool/Tool.txt": new TextEncoder().encode("built here, published nowhere"),
    });
    war = join(work, "shop.war");
    writeFileSync(
      war,
      zipSync({
        "WEB-INF/web.xml": new TextEncoder().encode("<web-app/>"),
        "WEB-INF/lib/asm-9.3.jar": new Uint8Array(readFileSync(await centralFile(ASM, "jar"))),
        "WEB-INF/lib/lz4-java-1.8.0.jar": new Uint8Array(readFileSync(await centralFile(LZ4, "jar"))),
        "WEB-INF/lib/log4j-api-2.14.1.jar": new Uint8Array(readFileSync(LOG4J_API)),
        "WEB-INF/lib/tool-1.0.jar": tool,
      }),
    );
    relay = await centralRelay();
    // a wrong coordinate first (asm 9.2's checksum differs): refused; then the right one
    search = await searchDouble(
      new Map([
        [
          await sha1Of(ASM),
          [
            { g: "org.ow2.asm", a: "asm", v: "9.2" },
            { g: "org.ow2.asm", a: "asm", v: "9.3" },
          ],
        ],
      ]),
    );
  });
  after(async () => {
    relay?.server.close();
    search?.server.close();
    rmSync(work, { recursive: true, force: true });
  });

  const scan = async (dataDir: string, searchUrl: string) => {
    const result = await runCli(
      [
        "scan",
        war,
        "--app",
        "shop",
        "--json",
        "--output",
        join(dataDir, "analysis.json"),
        "--data-dir",
        dataDir,
      ],
      {
        MAVEN_REPOSITORY_URL: relay.url,
        MAVEN_SEARCH_URL: searchUrl,
        MAVEN_LOCAL_REPOSITORY: join(work, "no-m2"),
        DATABASE_URL: "",
      },
    );
    assert.equal(result.code, 0, result.stderr);
    const document = JSON.parse(readFileSync(join(dataDir, "analysis.json"), "utf8")) as {
      packages: { name: string; version: string }[];
    };
    return {
      summary: JSON.parse(result.stdout) as ScanSummary,
      packages: document.packages.map((p) => `${p.name}@${p.version}`),
    };
  };

  it("identifies lz4-java by its manifest, asm by the search service's right answer, never the wrong one", async () => {
    const dataDir = join(work, "data");
    const first = await scan(dataDir, search.url);
    assert.deepEqual(first.packages.sort(), [
      "org.apache.logging.log4j:log4j-api@2.14.1",
      "org.lz4:lz4-java@1.8.0",
      "org.ow2.asm:asm@9.3",
    ]);
    assert.deepEqual(
      first.summary.warnings.map((w) => w.message),
      [
        "shop.war!/WEB-INF/lib/tool-1.0.jar: not identified (no Maven metadata inside, and its SHA-1 matches no candidate coordinates in the repository nor any the search service knows)",
      ],
    );
    // both wrong and right answers were checked against the repository's checksums
    assert.ok(relay.requests.includes("org/ow2/asm/asm/9.2/asm-9.2.jar.sha1"), relay.requests.join("\n"));
    assert.ok(relay.requests.includes("org/ow2/asm/asm/9.3/asm-9.3.jar.sha1"));
    assert.equal(search.requests.length, 2, "asm and the unknown tool jar");

    // online again: nothing asked twice, not the guesses that failed nor the search that found nothing
    const sha1Before = relay.requests.filter((r) => r.endsWith(".sha1")).length;
    const searchBefore = search.requests.length;
    const second = await scan(dataDir, search.url);
    assert.deepEqual(second.packages.sort(), first.packages.sort());
    assert.deepEqual(second.summary.warnings, first.summary.warnings);
    assert.equal(
      relay.requests.filter((r) => r.endsWith(".sha1")).length,
      sha1Before,
      "no checksum asked again",
    );
    assert.equal(search.requests.length, searchBefore, "no search asked again");
  });

  it("a search service that cannot be reached is said once; the checksum guesses still apply", async () => {
    const closed = createServer();
    const url = `${await listen(closed)}/solrsearch/select`;
    await new Promise((resolve) => closed.close(resolve));
    const { summary, packages } = await scan(join(work, "data-no-search"), url);
    assert.deepEqual(packages.sort(), [
      "org.apache.logging.log4j:log4j-api@2.14.1",
      "org.lz4:lz4-java@1.8.0",
    ]);
    const said = summary.warnings.filter((w) =>
      w.message.startsWith("the SHA-1 search service could not be asked"),
    );
    assert.equal(said.length, 1, JSON.stringify(summary.warnings));
    assert.ok(
      summary.warnings.some((w) => w.message.startsWith("shop.war!/WEB-INF/lib/asm-9.3.jar: not identified")),
    );
  });
});
