import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import Fastify from "fastify";
import { paramSchemas } from "../../src/rest/params.ts";
import { validateParameters } from "../../src/rest/validation.ts";
import type { RunningService } from "../../src/service.ts";
import { FIXTURE, loadFixture } from "../support/fixture.ts";
import { startTestService } from "../support/service.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";
import { startTestIssuer, type TestIssuer } from "../support/test-issuer.ts";

/**
 * Parameters are checked by the rules each route's schema names (src/rest/validation.ts), before the
 * handler: what a user sees is the rule's own sentence, in the order the routes have always checked.
 */
for (const kind of STORE_KINDS) {
  describe(`REST parameters checked from each route's schema, on ${kind}`, () => {
    let store: TestStore;
    let issuer: TestIssuer;
    let service: RunningService;
    let token: string;

    const get = (path: string) =>
      fetch(`${service.gatewayUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
    const refusal = async (path: string): Promise<string> => {
      const response = await get(path);
      assert.equal(response.status, 400, path);
      assert.match(response.headers.get("content-type") ?? "", /^application\/problem\+json/);
      const body = (await response.json()) as { status: number; detail: string };
      assert.equal(body.status, 400);
      return body.detail;
    };
    const occurrences = (cve: string, query: string) =>
      `/rest/applications/shop/insights/cve/${cve}/occurrences${query}`;

    before(async () => {
      issuer = await startTestIssuer();
      store = await createTestStore(kind);
      service = await startTestService(store, { issuer: issuer.issuer }, (handle) => loadFixture(handle.db));
      token = await issuer.sign({ sub: "alice", roles: ["admin"], applications: [] });
    });
    after(async () => {
      await service?.stop();
      await issuer?.close();
      await store?.drop();
    });

    it("refuses the integers a loose query-string coercion would take (1e2, ' 5', 0x10, 1.0)", async () => {
      for (const given of ["1e2", " 5", "0x10", "1.0"]) {
        assert.equal(
          await refusal(`/rest/applications?limit=${encodeURIComponent(given)}`),
          `Query parameter 'limit' must be an integer from 1 to 1000, got '${given}'`,
        );
      }
      assert.equal(
        await refusal("/rest/applications?limit=1&limit=2"),
        "Query parameter 'limit' is given more than once",
      );
    });

    it("names what a missing required parameter is for", async () => {
      assert.equal(
        await refusal("/rest/applications/shop/objects"),
        "Query parameter 'q' is required: text to find in the name, fullName, mangling or type of the objects, 1 to 200 characters",
      );
      assert.equal(
        await refusal("/rest/applications/shop/compare"),
        "Query parameter 'from' is required: an ISO 8601 date-time such as 2024-03-01T00:00:00Z",
      );
    });

    it("hands the handler normalized values: a lower-case CVE id and lower-case severities answer as upper-case", async () => {
      const upper = await get(occurrences(FIXTURE.cve, "?limit=5"));
      const lower = await get(occurrences(FIXTURE.cve.toLowerCase(), "?limit=5"));
      assert.equal(upper.status, 200);
      assert.equal(lower.status, 200);
      const page = await upper.text();
      assert.notEqual(page, "[]");
      assert.equal(await lower.text(), page);

      const insights = async (severity: string) =>
        (await get(`/rest/applications/shop/insights/cve?limit=100&severity=${severity}`)).json();
      const all = (await insights("")) as { severity: string }[];
      assert.ok(all.length > 0);
      const severity = all[0]?.severity ?? "";
      assert.deepEqual(await insights(severity.toLowerCase()), await insights(severity));
    });

    it("reports the first fault in the routes' order: paging, then the path, then the date", async () => {
      assert.equal(
        await refusal("/rest/applications/%60/insights/cve?limit=abc"),
        "Query parameter 'limit' must be an integer from 1 to 1000, got 'abc'",
      );
      assert.equal(
        await refusal(occurrences("nope", "")),
        "Query parameter 'limit' is required: the maximum number of items to return, 1 to 1000",
      );
      assert.equal(
        await refusal("/rest/applications/%60/insights/cve?limit=5&date=yesterday"),
        "The application name must not contain a back-quote (`)",
      );
      assert.equal(
        await refusal(occurrences("nope", "?limit=5&date=yesterday")),
        "'nope' is not a CVE reference: expected CVE-YYYY-NNNN (or a GHSA-xxxx-xxxx-xxxx alias)",
      );
    });
  });
}

describe("a route whose schema declares a parameter no rule checks", () => {
  it("is refused when it is declared, so no parameter goes unchecked", () => {
    const app = Fastify();
    validateParameters(app);
    assert.throws(
      () =>
        app.get(
          "/rest/things/:name",
          {
            schema: {
              params: { type: "object", properties: { name: paramSchemas.applicationName } },
              querystring: { type: "object", properties: { ratio: { type: "number" } } },
            },
          },
          async () => [],
        ),
      /No rule checks the parameter 'ratio'/,
    );
  });
});
