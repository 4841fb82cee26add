/**
 * The REST API's answer serializers, each compiled once per process. Fastify compiles one serializer per
 * route, method and status code at start: 203 compilations for 49 distinct schemas (every route's
 * problem+json answers, and each GET again for its HEAD route), ~0.4 s of CPU and much of the start's
 * garbage. A serializer is a pure function of its schema and the named schemas it refers to, so an equal
 * pair reuses the one compiled first, in this app and in any later one of the process (`startService`
 * called again: the tests, a restart in-process). And each is compiled when first used, not at start:
 * most answers of a process (a gateway-only replica's none, a REST API's rare statuses) are never sent.
 */
import {
  type SerializerCompiler,
  type SerializerFactory,
  SerializerSelector,
} from "@fastify/fast-json-stringify-compiler";

type Serializer = ReturnType<SerializerCompiler>;

const defaultFactory = SerializerSelector();
/** Keyed by the named schemas and options, then by the schema (all JSON data: their text is the key). */
const compiled = new Map<string, Map<string, Serializer>>();

export const serializerOncePerSchema: SerializerFactory = (externalSchemas, options) => {
  const compile = defaultFactory(externalSchemas, options);
  const contextKey = JSON.stringify([externalSchemas ?? null, options ?? null]);
  let serializers = compiled.get(contextKey);
  if (!serializers) {
    serializers = new Map();
    compiled.set(contextKey, serializers);
  }
  const known = serializers;
  return (route) => {
    const key = JSON.stringify(route.schema ?? null);
    let serializer = known.get(key);
    if (!serializer) {
      let built: Serializer | undefined;
      serializer = (value) => {
        built ??= compile(route);
        return built(value);
      };
      known.set(key, serializer);
    }
    return serializer;
  };
};
