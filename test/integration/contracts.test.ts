/**
 * One source per contract (issue 10 point 1): each REST resource is a zod shape in src/contracts, and the
 * REST answer, the OpenAPI document, the MCP REST client's type and the MCP tools' output schemas all come
 * from it. These tests fail when one of them drifts from the shape.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import swagger from "@fastify/swagger";
import Fastify from "fastify";
import * as z from "zod";
import * as admin from "../../src/contracts/admin.ts";
import { adminJsonSchema, resourceJsonSchema, resourceJsonSchemas } from "../../src/contracts/json-schema.ts";
import * as resources from "../../src/contracts/resources.ts";
import { analysisTools } from "../../src/mcp/analysis/tools.ts";
import { gatekeeperTools } from "../../src/mcp/gatekeeper/tools.ts";
import type { PackageUse } from "../../src/mcp/rest-client.ts";
import type { RunningService } from "../../src/service.ts";
import type { ComparisonPage } from "../../src/store/compare.ts";
import type { GateHistoryEntry as StoreGateHistoryEntry } from "../../src/store/gates.ts";
import { loadPortalFixture, PORTAL } from "../support/fixture.ts";
import { startTestService } from "../support/service.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";
import { startTestIssuer, type TestIssuer } from "../support/test-issuer.ts";

type JsonObject = Record<string, unknown>;
const keysOf = (schema: z.ZodObject) => Object.keys(schema.shape);

/** The JSON Schema the SDK advertises for a tool's output (tools/list), found by a path of properties. */
function toolOutputItem(tools: typeof analysisTools, name: string, ...path: string[]): JsonObject {
  const tool = tools.find((t) => t.name === name);
  assert.ok(tool, `tool ${name}`);
  let node = z.toJSONSchema(tool.output, { io: "output" }) as JsonObject;
  for (const key of path) {
    node = (node.properties as Record<string, JsonObject>)[key] as JsonObject;
    if (node.type === "array") node = node.items as JsonObject;
  }
  return node;
}

describe("contracts: a field added to a zod shape reaches every copy", () => {
  const planted = resources.packageUse.extend({ plantedField: z.string().describe("Added by the test") });
  let app: ReturnType<typeof Fastify>;
  let url: string;

  before(async () => {
    // A real Fastify app serializing with the derived JSON Schema, as the REST app does (addSchema + $ref).
    app = Fastify();
    for (const schema of resourceJsonSchemas) app.addSchema(schema);
    app.addSchema(resourceJsonSchema(planted, "Planted"));
    await app.register(swagger, { openapi: { openapi: "3.1.0", info: { title: "t", version: "1" } } });
    app.get(
      "/planted",
      { schema: { response: { 200: { type: "array", items: { $ref: "Planted#" } } } } },
      async () => [
        {
          ecosystem: "npm",
          factsPending: false,
          maxSeverity: null,
          name: "left-pad",
          plantedField: "reached",
          releaseDate: null,
          releasesPerYear: null,
          saferClosestVersion: null,
          safestVersion: null,
          scope: "production",
          sources: ["package-lock.json"],
          version: "1.0.0",
          vulnerabilities: [],
          notInTheShape: "dropped",
        },
      ],
    );
    url = await app.listen({ host: "127.0.0.1", port: 0 });
  });
  after(async () => {
    await app?.close();
  });

  it("the REST answer writes it, in the shape's order, and nothing outside the shape", async () => {
    const body = (await (await fetch(`${url}/planted`)).json()) as JsonObject[];
    assert.deepEqual(Object.keys(body[0] ?? {}), keysOf(planted));
    assert.equal(body[0]?.plantedField, "reached");
  });

  it("the OpenAPI document describes it", async () => {
    await app.ready();
    const doc = app.swagger() as { components: { schemas: Record<string, JsonObject> } };
    const component = Object.values(doc.components.schemas).find(
      (s) => typeof s.properties === "object" && s.properties !== null && "plantedField" in s.properties,
    );
    assert.ok(component, "a component schema with the planted field");
    assert.deepEqual((component.properties as JsonObject).plantedField, {
      type: "string",
      description: "Added by the test",
    });
    assert.ok((component.required as string[]).includes("plantedField"), "required in the document");
  });

  it("the MCP output schema built the tools' way (extend the shape) carries it", () => {
    const output = z.toJSONSchema(planted.extend({ releaseDate: z.string().nullable() })) as JsonObject;
    assert.ok("plantedField" in (output.properties as JsonObject));
  });

  it("the rest-client type is the shape's type (a compile-time check: typecheck fails on drift)", () => {
    const fromShape: z.infer<typeof resources.packageUse> = {
      ecosystem: "maven",
      factsPending: false,
      maxSeverity: "HIGH",
      name: "g:a",
      releaseDate: { dateTime: "2024-01-01T00:00:00Z", source: "signature" },
      releasesPerYear: 3,
      saferClosestVersion: "1.1",
      safestVersion: "2.0",
      scope: "compile",
      sources: ["pom.xml"],
      version: "1.0",
      vulnerabilities: ["CVE-2099-1"],
    };
    // Both directions: the client's type and the shape's type are assignable to each other.
    const client: PackageUse = fromShape;
    const back: z.infer<typeof resources.packageUse> = client;
    assert.deepEqual(resources.packageUse.parse(back), fromShape);
  });
});

describe("contracts: a field added to an administration shape reaches the answer and the document", () => {
  const planted = admin.user.extend({ plantedField: z.string().describe("Added by the test") });
  let app: ReturnType<typeof Fastify>;
  let url: string;

  before(async () => {
    app = Fastify();
    for (const schema of resourceJsonSchemas) app.addSchema(schema);
    app.addSchema(adminJsonSchema("User"));
    await app.register(swagger, { openapi: { openapi: "3.1.0", info: { title: "t", version: "1" } } });
    const user = { applications: [], createdAt: "2024-01-01T00:00:00Z", disabled: false, roles: ["viewer"] };
    app.get("/planted", { schema: { response: { 200: resourceJsonSchema(planted) } } }, async () => ({
      ...user,
      username: "ann",
      plantedField: "reached",
      notInTheShape: "dropped",
    }));
    url = await app.listen({ host: "127.0.0.1", port: 0 });
  });
  after(async () => {
    await app?.close();
  });

  it("the answer writes it in the shape's order and nothing outside the shape; the document has it", async () => {
    const body = (await (await fetch(`${url}/planted`)).json()) as JsonObject;
    assert.deepEqual(Object.keys(body), keysOf(planted));
    assert.equal(body.plantedField, "reached");
    await app.ready();
    const doc = app.swagger() as {
      paths: Record<string, { get: { responses: Record<string, JsonObject> } }>;
    };
    const content = doc.paths["/planted"]?.get.responses["200"]?.content as Record<string, JsonObject>;
    assert.ok(content, "the planted operation is documented");
    const schema = content["application/json"]?.schema as JsonObject;
    assert.deepEqual((schema.properties as JsonObject).plantedField, {
      type: "string",
      description: "Added by the test",
    });
  });

  it("the store's gate and compare types are the contract's (compile-time: typecheck fails on drift)", () => {
    const fromShape: admin.User = {
      applications: [],
      createdAt: "2024-01-01T00:00:00Z",
      disabled: false,
      roles: ["admin"],
      username: "ann",
    };
    const entry: StoreGateHistoryEntry = {
      analyzedAt: "2024-01-01T00:00:00Z",
      failedRules: [],
      verdict: "pass",
    };
    const page: ComparisonPage = {
      packages: { added: [], addedTotal: 0, removed: [], removedTotal: 0 },
      references: { added: [], addedTotal: 0, removed: [], removedTotal: 0 },
      vulnerablePackages: { added: [], addedTotal: 0, removed: [], removedTotal: 0 },
    };
    const answer: resources.Comparison = {
      ...page,
      from: { dateTime: "2024-01-01T00:00:00Z" },
      to: { dateTime: "2024-02-01T00:00:00Z" },
    };
    const history: resources.GateHistoryEntry = {
      analysis: { dateTime: entry.analyzedAt },
      failedRules: entry.failedRules,
      verdict: entry.verdict,
    };
    assert.deepEqual(admin.user.parse(fromShape), fromShape);
    assert.deepEqual(resources.comparison.parse(answer), answer);
    assert.deepEqual(resources.gateHistoryEntry.parse(history), history);
  });
});

describe("contracts: the MCP tools' output schemas extend the REST resources", () => {
  const cases: [typeof analysisTools, string, string[], z.ZodObject][] = [
    [analysisTools, "applications", ["applications"], resources.applicationSummary],
    [analysisTools, "application", [], resources.applicationDetail],
    [analysisTools, "cve_insights", ["cves"], resources.cveInsight],
    [analysisTools, "cve_occurrences", ["packages"], resources.cvePackage],
    [analysisTools, "cve_references", ["references"], resources.cveReference],
    [analysisTools, "packages", ["packages"], resources.packageUse],
    [analysisTools, "package_interactions", ["interactions"], resources.interaction],
    [analysisTools, "objects", ["objects"], resources.externalObjectMatch],
    [gatekeeperTools, "gates", ["rules"], resources.gateRule],
    [gatekeeperTools, "evaluate_gate", [], resources.gateEvaluation],
    [gatekeeperTools, "evaluate_gate", ["rules"], resources.gateRuleResult],
    [gatekeeperTools, "evaluate_gate", ["rules", "findings"], resources.gateFinding],
    [gatekeeperTools, "gate_history", ["history"], resources.gateHistoryEntry],
  ];
  for (const [tools, name, path, shape] of cases) {
    it(`${name}${path.map((p) => `.${p}`).join("")} has every field of the resource`, () => {
      const item = toolOutputItem(tools, name, ...path);
      const properties = Object.keys((item.properties ?? {}) as JsonObject);
      for (const key of keysOf(shape)) assert.ok(properties.includes(key), `${name}: ${key} missing`);
    });
  }
});

for (const kind of STORE_KINDS) {
  describe(`contracts: the REST API's answers and OpenAPI document match the shapes on ${kind}`, () => {
    let store: TestStore;
    let issuer: TestIssuer;
    let service: RunningService;
    let token: string;

    const call = (path: string, init: { method?: string; body?: unknown } = {}) =>
      fetch(`${service.gatewayUrl}${path}`, {
        method: init.method ?? "GET",
        headers: {
          authorization: `Bearer ${token}`,
          ...(init.body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      });
    const json = async (path: string, init: { method?: string; body?: unknown; status?: number } = {}) => {
      const response = await call(path, init);
      assert.equal(response.status, init.status ?? 200, `${path}: ${await response.clone().text()}`);
      return response.json();
    };

    before(async () => {
      issuer = await startTestIssuer();
      store = await createTestStore(kind);
      service = await startTestService(store, { issuer: issuer.issuer }, (handle) =>
        loadPortalFixture(handle.db),
      );
      token = await issuer.sign({ sub: "alice", roles: ["admin"], applications: [] });
    });
    after(async () => {
      await service?.stop();
      await issuer?.close();
      await store?.drop();
    });

    it("the OpenAPI document's resource schemas are the ones derived from the shapes", async () => {
      const doc = (await json("/rest/openapi.json")) as {
        components: { schemas: Record<string, JsonObject> };
      };
      for (const [name, shape] of Object.entries({
        ...resources.namedResources,
        ...admin.namedAdminShapes,
      })) {
        const component = doc.components.schemas[name];
        assert.ok(component, `${name} documented`);
        assert.deepEqual(Object.keys(component.properties as JsonObject), keysOf(shape), name);
      }
    });

    it("each answer has exactly the shape's properties, in the shape's order", async () => {
      const app = "/rest/applications/portal";
      const first = async (path: string) => ((await json(path)) as JsonObject[])[0] as JsonObject;
      const answers: [JsonObject, z.ZodObject][] = [
        [await first("/rest/applications?limit=1"), resources.applicationSummary],
        [(await json(app)) as JsonObject, resources.applicationDetail],
        [await first(`${app}/insights/cve?limit=1`), resources.cveInsight],
        [
          await first(
            `${app}/insights/cve/${PORTAL.cves.coreCritical}/occurrences?limit=1&date=${PORTAL.february}`,
          ),
          resources.cvePackage,
        ],
        [await first(`${app}/packages?limit=1`), resources.packageUse],
        [await first("/rest/gates"), resources.gateRule],
        [
          (await json(`${app}/gates/evaluation?date=${PORTAL.february}`)) as JsonObject,
          resources.gateEvaluation,
        ],
        [await first(`${app}/gates/history?limit=1`), resources.gateHistoryEntry],
        [(await json(`${app}/compare?from=${PORTAL.january}&limit=5`)) as JsonObject, resources.comparison],
      ];
      for (const [index, [answer, shape]] of answers.entries()) {
        assert.ok(answer, `answer ${index}: an item to check`);
        assert.deepEqual(Object.keys(answer), keysOf(shape));
        assert.deepEqual(shape.parse(answer), answer, "the answer is what the shape says");
      }
    });

    it("the administration and status answers have exactly their shape's properties, in its order", async () => {
      const created = (await json("/rest/admin/api-keys", {
        method: "POST",
        body: { user: "ci-bot", role: "viewer", applications: ["portal"] },
        status: 201,
      })) as JsonObject;
      const users = (await json("/rest/admin/users")) as JsonObject;
      const answers: [string, JsonObject, z.ZodObject][] = [
        ["created API key", created, admin.createdApiKey],
        ["API key", ((await json("/rest/admin/api-keys")) as JsonObject[])[0] as JsonObject, admin.apiKey],
        ["users", users, admin.usersAnswer],
        ["status", (await json("/rest/status")) as JsonObject, admin.platformStatus],
      ];
      const user = (users.users as JsonObject[])[0];
      if (user) answers.push(["user", user, admin.user]);
      for (const [what, answer, shape] of answers) {
        assert.ok(answer, `${what}: an answer to check`);
        assert.deepEqual(Object.keys(answer), keysOf(shape), what);
        assert.deepEqual(shape.parse(answer), answer, `${what}: the answer is what the shape says`);
      }
    });

    it("a problem answer has the Problem shape's properties, in its order", async () => {
      const response = await call("/rest/applications/no-such-application");
      assert.equal(response.status, 404);
      assert.match(response.headers.get("content-type") ?? "", /^application\/problem\+json\b/);
      const answer = (await response.json()) as JsonObject;
      const order = keysOf(admin.problem).filter((key) => key in answer);
      assert.deepEqual(Object.keys(answer), order);
      assert.deepEqual(admin.problem.parse(answer), answer);
    });
  });
}
