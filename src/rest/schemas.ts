import { paramSchemas } from "./params.ts";
/**
 * Query and error parts shared by the REST routes. The resources' JSON Schemas are derived from their
 * zod shapes in src/contracts (resources.ts, json-schema.ts).
 */

export const pagingQuery = (what: string, required: boolean) => ({
  type: "object",
  properties: {
    limit: { type: "integer", minimum: 1, maximum: 1000, description: `Maximum number of ${what} to return` },
    skip: { ...paramSchemas.skip, default: 0, description: `Number of ${what} to skip first` },
    date: {
      ...paramSchemas.dateTime,
      description:
        "ISO 8601 date-time: use the latest analysis at or before this instant (default: the latest)",
    },
  },
  ...(required ? { required: ["limit"] } : {}),
});

export const errorResponses = {
  400: { description: "Invalid parameter", $ref: "Problem#" },
  401: { description: "Missing or invalid credentials", $ref: "Problem#" },
  403: { description: "The caller may not read this application", $ref: "Problem#" },
  404: { description: "Unknown application, or no analysis at or before the date", $ref: "Problem#" },
} as const;

/** The errors of an operation about one CVE of an application: also 404 for a CVE no advisory names. */
export const cveErrorResponses = {
  ...errorResponses,
  404: {
    description:
      "Unknown application, no analysis at or before the date, or no imported advisory names the CVE " +
      "(type urn:imaging:problem:unknown-vulnerability, with `vulnerability` and `advisoriesImportedAt`): " +
      "whether the application is affected is then unknown",
    $ref: "Problem#",
  },
} as const;
