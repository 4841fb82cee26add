/**
 * `imaging scan` as a user runs it, on real public software (firebase-tools 8.4.0 with lodash 4.17.15,
 * see test/support/scan-subjects.ts): recorded in both stores and answered by the REST API, unchanged
 * inputs storing nothing new, one-line errors that record nothing, the analysis document (--output)
 * and the upload to a platform (--server, against a local HTTP server standing in for the platform).
 */

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createApiKey } from "../../src/domain/api-keys.ts";
import { loadAdvisory } from "../../src/domain/package-facts.ts";
import { openStore } from "../../src/store/database.ts";
import type { AdvisoryInput } from "../../src/store/input-records.ts";
import { runCli, runCliProcess } from "../support/cli.ts";
import { type FirebaseSubject, firebaseTools, treePackages } from "../support/scan-subjects.ts";
import { startTestService } from "../support/service.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

// The real GHSA-p6mc-m468-83gw (lodash zipObjectDeep prototype pollution), as the demo data ships it.
const advisories = JSON.parse(
  readFileSync(new URL("../../src/scanner/demo/advisories.json", import.meta.url), "utf8"),
) as AdvisoryInput[];
const LODASH_ADVISORY = advisories.find((a) => a.id === "CVE-2020-8203") as AdvisoryInput;

interface Summary {
  application: string;
  analyzedAt: string;
  packages: number;
  devPackages: number;
  externalObjects: number;
  references: number;
  vulnerablePackages: number | null;
  warnings: unknown[];
  inputs: string[];
  seq?: number;
  changes?: { packages: { added: number; removed: number } };
}

let subject: FirebaseSubject;
let scratch: string;
before(() => {
  subject = firebaseTools();
  scratch = mkdtempSync(join(tmpdir(), "imaging-scan-"));
});
after(() => rmSync(scratch, { recursive: true, force: true }));

const expectedPackages = () => treePackages(`${subject.npm.v3}/npm-ls.json`).size;

for (const kind of STORE_KINDS) {
  describe(`imaging scan into the local ${kind} store`, () => {
    let store: TestStore;
    const cli = (args: string[], env: NodeJS.ProcessEnv = {}) =>
      runCli([...args, "--data-dir", store.dataDir], { DATABASE_URL: store.databaseUrl ?? "", ...env });
    // The scans that record (registry facts for ~1,000 packages each) run as the `imaging` process: this
    // promise-heavy work cost about 40 % more CPU under the test runner's async hooks (node:test tracks
    // every promise) than in a process of its own, which costs far less to start.
    const cliProcess = (args: string[]) =>
      runCliProcess([...args, "--data-dir", store.dataDir], { DATABASE_URL: store.databaseUrl ?? "" });
    const counts = async () => {
      const handle = await openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile });
      try {
        const rows = await handle.db.selectFrom("application_packages").select("id").execute();
        const analyses = await handle.db.selectFrom("analyses").select("id").execute();
        const applications = await handle.db.selectFrom("applications").select("name").execute();
        return {
          rows: rows.length,
          analyses: analyses.length,
          applications: applications.map((a) => a.name),
        };
      } finally {
        await handle.close();
      }
    };

    before(async () => {
      store = await createTestStore(kind);
      const handle = await openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile });
      await loadAdvisory(handle.db, LODASH_ADVISORY);
      await handle.close();
    });
    after(async () => store?.drop());

    it("records one analysis of the application, creating it, with the vulnerable lodash counted", async () => {
      const result = await cliProcess([
        "scan",
        subject.npm.v3,
        "--app",
        "firebase-cli",
        "--date",
        "2024-01-15T10:00:00Z",
        "--json",
      ]);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stderr, "");
      const summary = JSON.parse(result.stdout) as Summary;
      assert.equal(summary.application, "firebase-cli");
      assert.equal(summary.analyzedAt, "2024-01-15T10:00:00.000Z");
      assert.equal(summary.packages, expectedPackages());
      assert.equal(summary.externalObjects, 0);
      assert.equal(summary.references, 0);
      assert.equal(summary.vulnerablePackages, 1);
      assert.deepEqual(summary.warnings, []);
      assert.deepEqual(summary.inputs, ["package-lock.json"]);
      assert.equal(summary.seq, 1);
      assert.deepEqual(summary.changes?.packages, { added: expectedPackages(), removed: 0 });
    });

    it("a second scan of unchanged inputs records an analysis that stores nothing new", async () => {
      const before = await counts();
      const result = await cliProcess([
        "scan",
        subject.npm.v3,
        "--app",
        "firebase-cli",
        "--date",
        "2024-02-15T10:00:00", // no offset: UTC, as the REST API reads `date`
        "--json",
      ]);
      assert.equal(result.code, 0, result.stderr);
      const summary = JSON.parse(result.stdout) as Summary;
      assert.equal(summary.seq, 2);
      assert.equal(summary.analyzedAt, "2024-02-15T10:00:00.000Z");
      assert.deepEqual(summary.changes?.packages, { added: 0, removed: 0 });
      const now = await counts();
      assert.equal(now.rows, before.rows);
      assert.equal(now.analyses, before.analyses + 1);
    });

    it("the REST API answers the lodash CVE from the scanned analysis", async () => {
      const service = await startTestService(store);
      try {
        const { key } = await createApiKey(service.store.db, { user: "ci", role: "admin", applications: [] });
        const response = await fetch(
          `${service.gatewayUrl}/rest/applications/firebase-cli/insights/cve/CVE-2020-8203/occurrences?limit=20`,
          { headers: { "x-api-key": key } },
        );
        assert.equal(response.status, 200);
        const body = (await response.json()) as { name: string; version: string }[];
        assert.deepEqual(
          body.map((p) => [p.name, p.version]),
          [["lodash", "4.17.15"]],
        );
      } finally {
        await service.stop();
      }
    });

    it("refuses a date before the application's latest analysis: one line, exit 1, nothing recorded", async () => {
      const before = await counts();
      const result = await cli([
        "scan",
        subject.npm.v3,
        "--app",
        "firebase-cli",
        "--date",
        "2024-01-20T00:00:00Z",
      ]);
      assert.equal(result.code, 1);
      assert.equal(
        result.stderr,
        "imaging: Application 'firebase-cli' already has an analysis at 2024-02-15T10:00:00Z: " +
          "an analysis dated 2024-01-20T00:00:00Z must come later\n",
      );
      assert.deepEqual(await counts(), before);
    });

    it("a malformed lockfile: file:line and the reason on one line, exit 1, nothing recorded", async () => {
      const dir = mkdtempSync(join(scratch, "truncated-"));
      const text = readFileSync(`${subject.npm.v3}/package-lock.json`, "utf8");
      writeFileSync(join(dir, "package-lock.json"), text.slice(0, 4000));
      const before = await counts();
      const result = await cli(["scan", dir, "--app", "broken-app"]);
      assert.equal(result.code, 1);
      const line = text.slice(0, 4000).split("\n").length;
      assert.match(
        result.stderr,
        new RegExp(`^imaging: package-lock\\.json:${line}: not valid JSON: [^\\n]+\\n$`),
      );
      assert.deepEqual(await counts(), before);
    });
  });
}

describe("imaging scan: inputs it cannot read, the analysis document and the upload", () => {
  let dataDir: string;
  const cli = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    runCli([...args, "--data-dir", dataDir], { DATABASE_URL: "", IMAGING_API_KEY: "", ...env });
  before(() => {
    dataDir = mkdtempSync(join(scratch, "data-"));
  });

  it("a truncated SBOM names the file and line", async () => {
    const dir = mkdtempSync(join(scratch, "sbom-"));
    const text = readFileSync(subject.sbom.cyclonedx16, "utf8");
    writeFileSync(join(dir, "bom.cdx.json"), text.slice(0, Math.floor(text.length / 2)));
    const result = await cli(["scan", join(dir, "bom.cdx.json"), "--app", "legacy-portal"]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^imaging: bom\.cdx\.json:\d+: not valid JSON: [^\n]+\n$/);
  });

  it("an unreadable path, a path with no input, a bad date", async () => {
    const missing = await cli(["scan", join(scratch, "nowhere"), "--app", "x"]);
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr, `imaging: ${join(scratch, "nowhere")}: no such file or directory\n`);
    const empty = mkdtempSync(join(scratch, "empty-"));
    writeFileSync(join(empty, "README.md"), "nothing to scan\n");
    const none = await cli(["scan", empty, "--app", "x"]);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /^imaging: .*: no supported input found \([^\n]+\)\n$/);
    const manifestOnly = mkdtempSync(join(scratch, "manifest-"));
    writeFileSync(join(manifestOnly, "package.json"), '{"dependencies": {"lodash": "^4.17.0"}}');
    const unlocked = await cli(["scan", manifestOnly, "--app", "x"]);
    assert.equal(unlocked.code, 1);
    assert.equal(
      unlocked.stderr,
      `imaging: ${manifestOnly}/package.json: no lockfile beside it to give exact versions ` +
        "(run npm install --package-lock-only, or your package manager's equivalent)\n",
    );
    const date = await cli(["scan", subject.npm.v3, "--app", "x", "--date", "yesterday"]);
    assert.equal(date.code, 1);
    assert.match(date.stderr, /^imaging: --date "yesterday" is not an ISO 8601 date-time/);
  });

  it("--progress shows the phases and counts on stderr", async () => {
    const output = join(scratch, "progress.json");
    const result = await cli([
      "scan",
      subject.npm.v3,
      "--app",
      "firebase-cli",
      "--output",
      output,
      "--progress",
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /found 1 input: npm 1/);
    assert.match(result.stderr, new RegExp(`${expectedPackages()} packages \\(\\d+ dev only\\)`));
  });

  it("--output writes the analysis document and records nothing here", async () => {
    const output = join(scratch, "analysis.json");
    const result = await cli([
      "scan",
      subject.npm.v3,
      "--app",
      "firebase-cli",
      "--output",
      output,
      "--json",
      "--date",
      "2024-06-01T00:00:00Z",
    ]);
    assert.equal(result.code, 0, result.stderr);
    const summary = JSON.parse(result.stdout) as Summary;
    assert.equal(summary.vulnerablePackages, null);
    assert.equal(summary.seq, undefined);
    const document = JSON.parse(readFileSync(output, "utf8"));
    assert.equal(document.application, "firebase-cli");
    assert.equal(document.analyzedAt, "2024-06-01T00:00:00.000Z");
    assert.equal(document.scanner.name, "imaging-services");
    assert.equal(document.packages.length, expectedPackages());
    assert.deepEqual(
      document.packages.find((p: { name: string }) => p.name === "lodash"),
      {
        ecosystem: "npm",
        name: "lodash",
        scope: "production",
        version: "4.17.15",
        sources: ["package-lock.json"],
      },
    );
    assert.deepEqual(document.objects, []);
    assert.deepEqual(document.references, []);
    const handle = await openStore({ databaseUrl: undefined, sqliteFile: join(dataDir, "imaging.db") });
    try {
      assert.deepEqual(await handle.db.selectFrom("applications").select("name").execute(), []);
    } finally {
      await handle.close();
    }
  });

  describe("--server, against a local HTTP server standing in for the platform", () => {
    let server: Server;
    let url: string;
    const received: {
      path: string;
      key: string | undefined;
      authorization?: string | undefined;
      body: { application: string; packages: unknown[] };
    }[] = [];
    const KEY = "imk_test_secret_value_0123456789";
    const problem = (status: number, title: string, detail: string) => ({
      status,
      body: { type: "about:blank", title, status, detail },
    });
    const answers: Record<string, { status: number; body: unknown }> = {
      "firebase-cli": {
        status: 201,
        // What the platform answers (src/contracts/analysis-upload.ts), as a recorded answer.
        body: {
          application: "firebase-cli",
          analyzedAt: "2024-06-01T00:00:00Z",
          seq: 3,
          packages: 993,
          externalObjects: 0,
          references: 0,
          vulnerablePackages: 1,
          warnings: 0,
          changes: {
            packages: { added: 993, removed: 0 },
            externalObjects: { added: 0, removed: 0 },
            references: { added: 0, removed: 0 },
          },
        },
      },
      "no-key": problem(401, "Unauthorized", "API key unknown or revoked"),
      viewer: problem(403, "Forbidden", "Uploading analyses needs the admin role"),
      late: problem(
        409,
        "Conflict",
        "The latest analysis of late is 2024-07-01T00:00:00Z; 2024-06-01T00:00:00Z is before it",
      ),
      huge: problem(413, "Payload Too Large", "Analysis documents are limited to 1024 bytes"),
    };
    before(async () => {
      server = createServer(async (request: IncomingMessage, response) => {
        const chunks: Buffer[] = [];
        for await (const chunk of request) chunks.push(chunk as Buffer);
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        received.push({
          path: request.url ?? "",
          key: request.headers["x-api-key"] as string | undefined,
          authorization: request.headers.authorization,
          body,
        });
        const answer = answers[body.application as string] ?? problem(500, "Internal", "unexpected");
        response.writeHead(answer.status, {
          "content-type": answer.status === 201 ? "application/json" : "application/problem+json",
        });
        response.end(JSON.stringify(answer.body));
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    const upload = (app: string) =>
      cli(
        ["scan", subject.npm.v3, "--app", app, "--server", url, "--date", "2024-06-01T00:00:00Z", "--json"],
        {
          IMAGING_API_KEY: KEY,
        },
      );

    it("POSTs the analysis document with the API key and prints the platform's summary", async () => {
      const result = await upload("firebase-cli");
      assert.equal(result.code, 0, result.stderr);
      const sent = received.at(-1);
      assert.equal(sent?.path, "/rest/applications/firebase-cli/analyses");
      assert.equal(sent?.key, KEY);
      assert.equal(sent?.body.application, "firebase-cli");
      assert.equal(sent?.body.packages.length, expectedPackages());
      const summary = JSON.parse(result.stdout) as Summary;
      assert.equal(summary.seq, 3);
      assert.equal(summary.vulnerablePackages, 1);
      assert.equal(summary.packages, 993);
    });

    for (const [app, pattern] of [
      ["no-key", /refused the API key \(401\): set IMAGING_API_KEY to a valid, unrevoked key$/],
      [
        "viewer",
        /refused the upload \(403\): the API key must belong to an admin: Uploading analyses needs the admin role$/,
      ],
      [
        "late",
        /refused the analysis \(409\): The latest analysis of late is 2024-07-01T00:00:00Z; 2024-06-01T00:00:00Z is before it$/,
      ],
      [
        "huge",
        /refused the analysis \(413\): the document \(\d+ bytes\) is larger than the server accepts \(ANALYSIS_UPLOAD_MAX_BYTES\)$/,
      ],
    ] as const) {
      it(`answers ${app}: one readable line, exit 1, the key never printed`, async () => {
        const result = await upload(app);
        assert.equal(result.code, 1);
        const lines = result.stderr.trimEnd().split("\n");
        assert.equal(lines.length, 1, result.stderr);
        assert.match(lines[0] ?? "", new RegExp(`^imaging: ${url.replace(/[.]/g, "\\.")} `));
        assert.match(lines[0] ?? "", pattern);
        assert.ok(!result.stderr.includes(KEY) && !result.stdout.includes(KEY));
      });
    }

    it("without IMAGING_API_KEY it says so before scanning", async () => {
      const before = received.length;
      const result = await cli(["scan", subject.npm.v3, "--app", "firebase-cli", "--server", url]);
      assert.equal(result.code, 1);
      assert.equal(result.stderr, "imaging: --server needs an admin API key in IMAGING_API_KEY\n");
      assert.equal(received.length, before);
    });

    it("credentials in the platform's URL are never printed", async () => {
      const withCredentials = url.replace("http://", "http://ci:s3cr3t-pass@");
      const result = await cli(["scan", subject.npm.v3, "--app", "late", "--server", withCredentials], {
        IMAGING_API_KEY: KEY,
      });
      assert.equal(result.code, 1);
      assert.equal(
        received.at(-1)?.authorization,
        `Basic ${Buffer.from("ci:s3cr3t-pass").toString("base64")}`,
      );
      assert.equal(result.stderr.trimEnd().split("\n").length, 1, result.stderr);
      assert.match(result.stderr, /^imaging: http:\/\/\*\*\*@127\.0\.0\.1:\d+ refused the analysis \(409\)/);
      assert.ok(
        !result.stderr.includes("s3cr3t-pass") && !result.stdout.includes("s3cr3t-pass"),
        result.stderr,
      );
    });

    it("an unreachable platform is one line too", async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const result = await cli(
        ["scan", subject.npm.v3, "--app", "x", "--server", `http://127.0.0.1:${port}`],
        {
          IMAGING_API_KEY: KEY,
        },
      );
      assert.equal(result.code, 1);
      assert.equal(result.stderr, `imaging: http://127.0.0.1:${port} cannot be reached: ECONNREFUSED\n`);
    });
  });
});
