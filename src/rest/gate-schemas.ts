import { gateParametersSchemas } from "../store/gate-kinds.ts";

/** The body of a gate rule update (the resources' schemas: src/contracts). */
export const gateRuleUpdateSchema = {
  type: "object",
  description: "Set `enabled`, `parameters` (merged into the current ones, checked per kind) or both.",
  properties: {
    enabled: { type: "boolean" },
    parameters: {
      description: "The parameters of one rule kind; those of another kind than the rule's are refused (409)",
      anyOf: gateParametersSchemas(),
    },
  },
  additionalProperties: false,
  minProperties: 1,
} as const;
