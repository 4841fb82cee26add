import { gateParametersSchemas } from "../domain/gate-kinds.ts";
import { bodyField, declareBody } from "./body.ts";
import { ProblemError } from "./problem.ts";

const refused = (detail: string) => new ProblemError(400, detail);

/**
 * The body of a gate rule update: `enabled`, `parameters` (an object, checked against the rule's kind
 * by the route once the rule is found) or both; any other key is refused.
 */
export const gateRuleUpdateBody = declareBody(
  {
    enabled: bodyField({ type: "boolean" }, (value) => {
      if (value !== undefined && typeof value !== "boolean")
        throw refused(`'enabled' must be a boolean (true or false), got ${JSON.stringify(value)}`);
      return value;
    }),
    parameters: bodyField(
      {
        description:
          "The parameters of one rule kind; those of another kind than the rule's are refused (409)",
        anyOf: gateParametersSchemas(),
      },
      (value) => {
        if (value === undefined) return undefined;
        if (typeof value !== "object" || value === null || Array.isArray(value))
          throw refused(
            `'parameters' must be a JSON object, got ${value === null ? "null" : Array.isArray(value) ? "an array" : JSON.stringify(value)}`,
          );
        return value as Record<string, unknown>;
      },
    ),
  },
  {
    absent: "refused",
    notObject: () =>
      refused('The request body must be a JSON object such as {"enabled": false} or {"parameters": {...}}'),
    unknown: (key) =>
      refused(`Unknown property '${key.slice(0, 100)}': the body accepts 'enabled' and 'parameters'`),
    nothingSet: () => refused("The request body must set 'enabled', 'parameters' or both"),
  },
  { description: "Set `enabled`, `parameters` (merged into the current ones, checked per kind) or both." },
);
