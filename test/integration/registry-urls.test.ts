/**
 * Registry URLs are built segment by segment, each encoded, never by concatenating a package name (issue
 * 28 point 4): a name holding `../`, `?` or `#` must not choose another path on the registry host, and
 * names the ecosystem refuses are never looked up at all. Checked by the paths a registry on loopback
 * receives (test/support/fake-registry.ts).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, beforeEach, describe, it } from "node:test";
import { mavenVersions } from "../../src/scanner/facts/maven.ts";
import { npmVersions } from "../../src/scanner/facts/npm.ts";
import { createMavenRepository } from "../../src/scanner/maven/repository.ts";
import { createRegistryFetcher, type RegistryFetcher } from "../../src/scanner/registry/cached-fetch.ts";
import { type FakeRegistry, startFakeRegistry } from "../support/fake-registry.ts";

describe("registry URLs built from package names", () => {
  let registry: FakeRegistry;
  let scratch: string;
  let fetcher: RegistryFetcher;
  before(async () => {
    registry = await startFakeRegistry();
    scratch = mkdtempSync(join(tmpdir(), "registry-urls-"));
  });
  beforeEach(() => {
    registry.requests.length = 0;
    // A fresh cache each time: every look-up is a request the registry sees.
    fetcher = createRegistryFetcher({ cacheDir: mkdtempSync(join(scratch, "cache-")), offline: false });
  });
  after(async () => {
    await registry?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("npm: names npm refuses are never looked up; a scoped name keeps its @ and encodes its slash", async () => {
    for (const name of [
      "../../-/user/org.couchdb.user:admin",
      "ms/../../-/whoami",
      "ms?write=true",
      "ms#fragment",
      "%2e%2e",
      "<b>ms</b>",
    ]) {
      const lookup = await npmVersions(fetcher, registry.npmUrl, name);
      assert.equal(lookup.kind, "failed", name);
      assert.match((lookup as { reason: string }).reason, /is not a valid npm package name/);
    }
    assert.deepEqual(registry.requests, [], "the registry was asked nothing");
    const ms = await npmVersions(fetcher, registry.npmUrl, "ms");
    assert.equal(ms.kind, "ok");
    await npmVersions(fetcher, registry.npmUrl, "@babel/core");
    assert.deepEqual(registry.requests, ["/npm/ms", "/npm/@babel%2fcore"]);
  });

  it("Maven: coordinates Maven refuses are never looked up, on the repository or on disk", async () => {
    const repository = createMavenRepository({
      fetcher,
      remoteUrl: registry.mavenUrl,
      localRepository: join(scratch, "m2"),
    });
    for (const gav of [
      { groupId: "..", artifactId: "etc", version: "1" },
      { groupId: "org.apache", artifactId: "../../x", version: "1" },
      { groupId: "org.apache", artifactId: "a?b", version: "1" },
      { groupId: "org.apache", artifactId: "a", version: "1/../../../x" },
    ]) {
      const answer = await repository.pom(gav);
      assert.equal(answer.kind, "missing", JSON.stringify(gav));
      assert.match((answer as { reason: string }).reason, /not valid Maven coordinates/);
      if (gav.version === "1") assert.deepEqual(await repository.versions(gav.groupId, gav.artifactId), []);
      assert.deepEqual(await repository.sha1(gav, "jar"), { kind: "missing" });
    }
    for (const name of ["../../etc:passwd", "org.example:a?b", "org..example:a", "org.example:.."]) {
      const lookup = await mavenVersions(fetcher, registry.mavenUrl, name);
      assert.notEqual(lookup.kind, "ok", name);
    }
    assert.deepEqual(registry.requests, [], "the repository was asked nothing");
    await repository.pom({
      groupId: "org.apache.logging.log4j",
      artifactId: "log4j-core",
      version: "2.14.1",
    });
    // Maven takes '#' in a version: it goes out encoded, so it cannot cut the path short.
    await repository.pom({ groupId: "org.apache", artifactId: "a", version: "1#x" });
    assert.deepEqual(registry.requests, [
      "/maven2/org/apache/logging/log4j/log4j-core/2.14.1/log4j-core-2.14.1.pom",
      "/maven2/org/apache/a/1%23x/a-1%23x.pom",
    ]);
  });
});
