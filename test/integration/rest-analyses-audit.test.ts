/**
 * Uploads that must not hurt the platform (issue 28, the audit's findings): package names checked per
 * ecosystem, control characters and bad application names refused, a date far ahead refused, the
 * media type and content encodings the OpenAPI document states, and the registry look-ups of an upload's
 * new packages out of the request path: answered at once, facts after, through restarts, and on
 * replicas by one of them. Both stores; the registry is a stand-in on loopback that can hold its answers.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { gzipSync } from "node:zlib";
import { createApiKey } from "../../src/domain/api-keys.ts";
import type { AnalysisDocument } from "../../src/scanner/analysis-document.ts";
import type { RunningService } from "../../src/service.ts";
import { openStore } from "../../src/store/database.ts";
import { pendingFactsCount } from "../../src/store/package-facts-queue.ts";
import { startTestService } from "../support/service.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

/**
 * An npm registry on loopback: every name has one version, 1.0.0, published 2020-01-02. While held, it
 * answers nothing (the requests wait); `release()` answers them all and every later one at once.
 */
interface HeldRegistry {
  url: string;
  /** Packument requests received, by package name. */
  requests: Map<string, number>;
  answered: number;
  hold(): void;
  release(): void;
  close(): Promise<void>;
}

async function startHeldRegistry(): Promise<HeldRegistry> {
  let held = false;
  const waiting: (() => void)[] = [];
  const registry: HeldRegistry = {
    url: "",
    requests: new Map(),
    answered: 0,
    hold: () => {
      held = true;
    },
    release: () => {
      held = false;
      for (const answer of waiting.splice(0)) answer();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const name = decodeURIComponent((request.url ?? "").replace(/^\/npm\//, ""));
    registry.requests.set(name, (registry.requests.get(name) ?? 0) + 1);
    const answer = () => {
      registry.answered++;
      response.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          name,
          versions: { "1.0.0": { name, version: "1.0.0" } },
          time: { "1.0.0": "2020-01-02T03:04:05.000Z" },
        }),
      );
    };
    if (held) waiting.push(answer);
    else answer();
  });
  server.keepAliveTimeout = 1;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  registry.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/npm`;
  // Held connections must not keep close() waiting.
  const close = registry.close;
  registry.close = async () => {
    registry.release();
    server.closeAllConnections();
    await close();
  };
  return registry;
}

const packages = (prefix: string, count: number): AnalysisDocument["packages"] =>
  Array.from({ length: count }, (_, i) => ({ ecosystem: "npm", name: `${prefix}-${i}`, version: "1.0.0" }));

function document(
  application: string,
  analyzedAt: string,
  list: AnalysisDocument["packages"],
): AnalysisDocument {
  return { application, analyzedAt, packages: list, objects: [], references: [], warnings: [] };
}

async function waitFor(what: string, condition: () => Promise<boolean>): Promise<void> {
  // A bound on the wait, not a timed assertion: the condition is what is checked.
  for (let i = 0; i < 1200; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`${what}: still not the case after a minute`);
}

for (const kind of STORE_KINDS) {
  describe(`analysis uploads that cannot hurt the platform, on ${kind}`, () => {
    let store: TestStore;
    let registry: HeldRegistry;
    let service: RunningService;
    let admin: string;
    const start = () => startTestService(store, { npmRegistryUrl: registry.url });
    const post = (
      body: unknown,
      options: {
        name?: string;
        type?: string;
        headers?: Record<string, string>;
        raw?: Blob | string;
      } = {},
    ) =>
      fetch(
        `${service.gatewayUrl}/rest/applications/${encodeURIComponent(options.name ?? "audit")}/analyses`,
        {
          method: "POST",
          headers: {
            "content-type": options.type ?? "application/json",
            "x-api-key": admin,
            ...options.headers,
          },
          body: options.raw ?? JSON.stringify(body),
        },
      );
    const problem = async (response: Response, status: number) => {
      assert.equal(response.status, status, await response.clone().text());
      assert.match(response.headers.get("content-type") ?? "", /^application\/problem\+json/);
      return ((await response.json()) as { detail: string }).detail;
    };
    type Listed = { name: string; factsPending: boolean; releaseDate: { dateTime: string } | null };
    const listPackages = async (application: string) => {
      const all: Listed[] = [];
      for (let skip = 0; ; skip += 1000) {
        const response = await fetch(
          `${service.gatewayUrl}/rest/applications/${encodeURIComponent(application)}/packages?limit=1000&skip=${skip}`,
          { headers: { "x-api-key": admin } },
        );
        assert.equal(response.status, 200);
        const page = (await response.json()) as Listed[];
        all.push(...page);
        if (page.length < 1000) return all;
      }
    };
    const applicationExists = async (name: string) =>
      (
        await fetch(`${service.gatewayUrl}/rest/applications/${encodeURIComponent(name)}`, {
          headers: { "x-api-key": admin },
        })
      ).status === 200;

    before(async () => {
      store = await createTestStore(kind);
      registry = await startHeldRegistry();
      service = await start();
      admin = (await createApiKey(service.store.db, { user: "ci", role: "admin", applications: [] })).key;
    });
    after(async () => {
      await service?.stop();
      await registry?.close();
      await store?.drop();
    });

    it("refuses package names the ecosystem refuses, naming the field, and records nothing", async () => {
      const cases: [AnalysisDocument["packages"][number], RegExp][] = [
        [
          { ecosystem: "npm", name: "../../-/user/org.couchdb.user:admin", version: "1.0.0" },
          /packages\[0\]\.name: .*npm package name/,
        ],
        [
          { ecosystem: "npm", name: "lodash?write=true", version: "1.0.0" },
          /packages\[0\]\.name: .*URL-friendly/,
        ],
        [{ ecosystem: "npm", name: "lodash#x", version: "1.0.0" }, /packages\[0\]\.name:/],
        [{ ecosystem: "npm", name: "<script>alert(1)</script>", version: "1.0.0" }, /packages\[0\]\.name:/],
        [{ ecosystem: "npm", name: "lodash", version: "../1.0.0" }, /packages\[0\]\.version: .*semver/],
        [{ ecosystem: "maven", name: "../../etc:passwd", version: "1.0" }, /packages\[0\]\.name: .*groupId/],
        [
          { ecosystem: "maven", name: "org.example:..", version: "1.0" },
          /packages\[0\]\.name: .*'\.\.' as artifactId/,
        ],
        [
          { ecosystem: "maven", name: "org..example:core", version: "1.0" },
          /packages\[0\]\.name: .*empty segment/,
        ],
        [
          { ecosystem: "maven", name: "org.example:core", version: "1.0/../../x" },
          /packages\[0\]\.version: .*Maven refuses/,
        ],
        [
          { ecosystem: "maven", name: "org.example:co\u0007re", version: "1.0" },
          /packages\[0\]\.name: .*control characters/,
        ],
      ];
      for (const [bad, detail] of cases) {
        const body = await problem(await post(document("audit", "2024-01-01T00:00:00Z", [bad])), 400);
        assert.match(body, detail, JSON.stringify(bad));
        assert.match(body, /^Invalid analysis document: /);
      }
      assert.equal(await applicationExists("audit"), false, "nothing was recorded");
      assert.equal(registry.requests.size, 0, "no registry was asked about any of them");
    });

    it("refuses control characters in every stored text of the document", async () => {
      const withObject = (field: string, value: string) => ({
        ...document("audit", "2024-01-01T00:00:00Z", [
          { ecosystem: "npm", name: "lodash", version: "4.17.21" },
        ]),
        objects: [
          {
            id: "o1",
            package: "npm:lodash",
            name: "merge",
            fullName: "lodash.merge",
            mangling: "",
            type: "JavaScript Function",
            typeId: "JS_FUNCTION",
            [field]: value,
          },
        ],
      });
      for (const field of ["name", "fullName", "mangling", "type", "typeId"]) {
        const body = await problem(await post(withObject(field, "a\u001b[31mred")), 400);
        assert.match(
          body,
          new RegExp(`^Invalid analysis document: objects\\[0\\]\\.${field}: .*control characters`),
        );
      }
      const sources = document("audit", "2024-01-01T00:00:00Z", [
        { ecosystem: "npm", name: "lodash", version: "4.17.21", sources: ["web/package-lock.json\u0000"] },
      ]);
      assert.match(
        await problem(await post(sources), 400),
        /packages\[0\]\.sources\[0\]: .*control characters/,
      );
    });

    it("refuses application names no URL can open: '.', '..', '/', back-quotes, control characters", async () => {
      for (const name of [".", "..", "team/app", "back\\slash", "a`b", "bell\u0007"]) {
        // The document names it; the URL names an accepted application (a URL cannot even carry '..').
        const body = await problem(
          await post(document(name, "2024-01-01T00:00:00Z", []), { name: "audit" }),
          400,
        );
        assert.match(body, /^Invalid analysis document: application: must not/, name);
      }
      const slash = await problem(
        await post(document("team/app", "2024-01-01T00:00:00Z", []), { name: "team/app" }),
        400,
      );
      assert.match(slash, /^Path parameter 'name': the application name must not contain '\/'/);
      // The REST API's path rules already refused control characters in any application URL.
      const bell = await problem(
        await post(document("bell\u0007", "2024-01-01T00:00:00Z", []), { name: "bell\u0007" }),
        400,
      );
      assert.match(bell, /application name must not contain control characters/i);
      assert.equal(await applicationExists("team/app"), false);
      // Names that are fine stay fine, whatever URL encoding they need.
      const odd = "Billing (EU) #2 ? 50% ..x";
      assert.equal((await post(document(odd, "2024-01-01T00:00:00Z", []), { name: odd })).status, 201);
      assert.equal(await applicationExists(odd), true);
    });

    it("refuses an analysis dated more than a day ahead, accepts one an hour ahead", async () => {
      const ahead = (ms: number) => new Date(Date.now() + ms).toISOString();
      const body = await problem(
        await post(document("dated", ahead(2 * 86_400_000), []), { name: "dated" }),
        409,
      );
      assert.match(
        body,
        /^Invalid analysis document: analyzedAt: .* is more than a day ahead of this server's clock/,
      );
      assert.equal(await applicationExists("dated"), false);
      assert.equal((await post(document("dated", ahead(3_600_000), []), { name: "dated" })).status, 201);
    });

    it("text/plain gets the documented 415; gzip-encoded JSON is accepted, its size limit decompressed", async () => {
      const json = JSON.stringify(document("encoded", "2024-01-01T00:00:00Z", packages("encoded", 3)));
      const plain = await problem(
        await post(undefined, { name: "encoded", type: "text/plain", raw: json }),
        415,
      );
      assert.match(plain, /must be sent as application\/json, not text\/plain/);
      const gzip = await post(undefined, {
        name: "encoded",
        headers: { "content-encoding": "gzip" },
        raw: new Blob([Uint8Array.from(gzipSync(json))]),
      });
      assert.equal(gzip.status, 201, await gzip.clone().text());
      assert.equal(((await gzip.json()) as { packages: number }).packages, 3);
      const doc = (await (await fetch(`${service.gatewayUrl}/rest/openapi.json`)).json()) as {
        paths: Record<
          string,
          { post: { description: string; responses: Record<string, { description: string }> } }
        >;
      };
      const operation = doc.paths["/rest/applications/{name}/analyses"]?.post;
      assert.match(operation?.description ?? "", /Content-Encoding: gzip/);
      assert.match(operation?.responses["415"]?.description ?? "", /Not application\/json/);
    });

    it("answers an upload of 2,000 new packages at once: their registry facts follow, then show", async () => {
      // The earlier tests' packages are looked up first, then the registry stops answering.
      await waitFor("the earlier uploads' facts stored", async () =>
        (await listPackages("encoded")).every((p) => !p.factsPending),
      );
      registry.hold();
      const answeredBefore = registry.answered;
      const list = packages("fresh", 2000);
      const response = await post(document("fresh", "2024-01-01T00:00:00Z", list), { name: "fresh" });
      // Answered while the registry has answered nothing: no look-up is part of the request.
      assert.equal(response.status, 201, await response.clone().text());
      assert.equal(registry.answered, answeredBefore);
      const during = await listPackages("fresh");
      assert.equal(during.length, 2000);
      assert.ok(
        during.every((p) => p.factsPending && p.releaseDate === null),
        "facts pending, none yet",
      );
      registry.release();
      // Watched in the store's queue (one cheap count), then checked through the API once.
      await waitFor(
        "every package's facts stored",
        async () => (await pendingFactsCount(service.store.db)) === 0,
      );
      const done = await listPackages("fresh");
      assert.ok(done.every((p) => p.releaseDate?.dateTime === "2020-01-02T03:04:05Z"));
      for (const p of list) assert.equal(registry.requests.get(p.name), 1, `${p.name} looked up once`);
    });

    it("pending look-ups survive a restart: the next start does them", async () => {
      registry.hold();
      const list = packages("restart", 40);
      assert.equal(
        (await post(document("restart", "2024-01-01T00:00:00Z", list), { name: "restart" })).status,
        201,
      );
      await service.stop();
      // The stopped service's held requests never get an answer it can store.
      const handle = await openStore({
        databaseUrl: store.databaseUrl,
        sqliteFile: store.sqliteFile,
        readWorkers: 0,
      });
      try {
        const queued = await handle.db.selectFrom("package_facts_queue").select("package_id").execute();
        assert.equal(queued.length, 40, "the queue kept every package");
      } finally {
        await handle.close();
      }
      service = await start();
      registry.release();
      await waitFor(
        "the facts looked up after the restart",
        async () => (await pendingFactsCount(service.store.db)) === 0,
      );
      assert.ok((await listPackages("restart")).every((p) => !p.factsPending && p.releaseDate !== null));
    });
  });
}

describe("replicas on one PostgreSQL store share the look-ups: each package is looked up by one of them", () => {
  let store: TestStore;
  const registries: HeldRegistry[] = [];
  const services: RunningService[] = [];
  before(async () => {
    store = await createTestStore("postgres");
    for (let i = 0; i < 2; i++) {
      const registry = await startHeldRegistry();
      registries.push(registry);
      services.push(await startTestService(store, { npmRegistryUrl: registry.url }));
    }
  });
  after(async () => {
    for (const service of services) await service.stop();
    for (const registry of registries) await registry.close();
    await store?.drop();
  });

  it("one upload's 200 new packages: both replicas look some up, none is looked up twice", async () => {
    for (const registry of registries) registry.hold();
    const [first] = services as [RunningService];
    const admin = (await createApiKey(first.store.db, { user: "ci", role: "admin", applications: [] })).key;
    const list = packages("shared", 200);
    const response = await fetch(`${first.gatewayUrl}/rest/applications/shared/analyses`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": admin },
      body: JSON.stringify(document("shared", "2024-01-01T00:00:00Z", list)),
    });
    assert.equal(response.status, 201);
    // The first replica holds a claim on a batch (its registry does not answer); the second finds the
    // rest at its next look at the queue.
    await waitFor("both replicas asking their registry", async () =>
      registries.every((r) => r.requests.size > 0),
    );
    for (const registry of registries) registry.release();
    const pending = async () => {
      const rows = await first.store.db.selectFrom("package_facts_queue").select("package_id").execute();
      return rows.length;
    };
    await waitFor("the queue emptied", async () => (await pending()) === 0);
    for (const p of list) {
      const asked = registries.reduce((n, r) => n + (r.requests.get(p.name) ?? 0), 0);
      assert.equal(asked, 1, `${p.name} looked up once in all`);
    }
  });
});
