/**
 * Errors any operation can get before or around its handler, from the REST API or the gateway in front
 * of it (src/gateway/problem.ts): all application/problem+json like the operation's own errors.
 */
const ANY_OPERATION_ERRORS: Record<string, string> = {
  400: "Malformed request (URL, percent-encoding or HTTP syntax)",
  401: "Missing or invalid credentials",
  413: "Request body too large",
  414: "URI too long",
  431: "Request header fields too large",
  500: "The server could not complete the request",
  502: "The REST API cannot be reached through the gateway",
  503: "The token issuer cannot be reached to verify the token",
  504: "The REST API did not answer the gateway in time",
};

const PROBLEM = "application/problem+json";
const problemContent = { [PROBLEM]: { schema: { $ref: "#/components/schemas/Problem" } } };

type Responses = Record<string, { description?: string; content?: Record<string, unknown> }>;
type Document = { paths?: Record<string, Record<string, { responses?: Responses; security?: unknown[] }>> };

/**
 * Makes the generated document say what the server sends: every error response is problem+json
 * (route schemas name the Problem schema; @fastify/swagger would label it application/json), and every
 * operation lists the errors it can get whatever its parameters.
 */
export function problemResponses<T>(document: T): T {
  for (const operations of Object.values((document as Document).paths ?? {})) {
    for (const operation of Object.values(operations)) {
      operation.responses ??= {};
      const responses = operation.responses;
      for (const [status, response] of Object.entries(responses)) {
        if (Number(status) >= 400) response.content = problemContent;
      }
      for (const [status, description] of Object.entries(ANY_OPERATION_ERRORS)) {
        responses[status] ??= { description, content: problemContent };
      }
    }
  }
  return document;
}
