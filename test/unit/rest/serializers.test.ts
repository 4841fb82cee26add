import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { serializerOncePerSchema } from "../../../src/rest/serializers.ts";

const named = (properties: Record<string, unknown>) => ({
  Problem: { $id: "Problem", type: "object", properties },
});
const route = (schema: unknown, httpStatus = "200") => ({
  method: "GET",
  url: "/rest/x",
  httpStatus,
  schema,
});
const problem = () => ({ $ref: "Problem#" });

describe("REST answer serializers, compiled once per schema", () => {
  it("reuses the serializer of an equal schema, in another route, status or app", () => {
    const first = serializerOncePerSchema(named({ title: { type: "string" }, status: { type: "integer" } }));
    const serialize = first(route(problem(), "404"));
    assert.equal(
      serialize({ title: "Not Found", status: 404, extra: 1 }),
      '{"title":"Not Found","status":404}',
    );
    assert.equal(first(route(problem(), "400")), serialize, "the same schema at another status");
    // A second app of the process (its own factory call, equal named schemas built anew)
    const second = serializerOncePerSchema(named({ title: { type: "string" }, status: { type: "integer" } }));
    assert.equal(second(route(problem(), "403")), serialize);
  });

  it("compiles a schema of its own, or the same schema with other named schemas, anew", () => {
    const factory = serializerOncePerSchema(
      named({ title: { type: "string" }, status: { type: "integer" } }),
    );
    const viaRef = factory(route(problem()));
    const own = factory(route({ type: "object", properties: { status: { type: "integer" } } }));
    assert.notEqual(own, viaRef);
    assert.equal(own({ title: "t", status: 1 }), '{"status":1}');
    const other = serializerOncePerSchema(named({ detail: { type: "string" } }));
    const otherRef = other(route(problem()));
    assert.notEqual(otherRef, viaRef);
    assert.equal(otherRef({ title: "t", detail: "d" }), '{"detail":"d"}');
    assert.equal(viaRef({ title: "t", detail: "d" }), '{"title":"t"}');
  });

  it("compiles a serializer when it is first used, not when the route is declared", () => {
    const factory = serializerOncePerSchema(named({ title: { type: "string" } }));
    const unknownRef = factory(route({ $ref: "Missing#" }));
    assert.throws(() => unknownRef({}), /Missing/);
  });
});
