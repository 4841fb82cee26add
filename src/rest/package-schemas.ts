/**
 * JSON schemas of the package, interaction and external-object resources (properties in name order,
 * as in schemas.ts).
 */
import { packageFactProperties } from "./schemas.ts";

export const packageSchema = {
  $id: "Package",
  type: "object",
  description: "A package version the application uses, with its facts and the CVEs affecting it.",
  properties: {
    ecosystem: { type: "string", enum: ["npm", "maven"] },
    maxSeverity: {
      type: ["string", "null"],
      description: "Most severe severity among the CVEs affecting this version (null when none does)",
    },
    name: { type: "string", description: "Package name; Maven packages as groupId:artifactId" },
    ...packageFactProperties,
    vulnerabilities: {
      type: "array",
      items: { type: "string" },
      description: "CVE ids affecting this version, sorted",
    },
  },
  required: [
    "ecosystem",
    "maxSeverity",
    "name",
    "releaseDate",
    "releasesPerYear",
    "saferClosestVersion",
    "safestVersion",
    "version",
    "vulnerabilities",
  ],
} as const;

export const applicationObjectSchema = {
  $id: "ApplicationObject",
  type: "object",
  description: "An object of the application itself.",
  properties: {
    fullName: { type: "string" },
    id: { type: "string", description: "Application object ID" },
    name: { type: "string" },
    type: { type: "string", description: "Object type, for display" },
    typeId: { type: "string", description: "Type identifier" },
  },
  required: ["fullName", "id", "name", "type", "typeId"],
} as const;

export const interactionSchema = {
  $id: "Interaction",
  type: "object",
  description: "An application object (source) referring to an external object of the package (target).",
  properties: {
    source: { $ref: "ApplicationObject#" },
    target: { $ref: "ExternalObject#" },
  },
  required: ["source", "target"],
} as const;

export const externalObjectMatchSchema = {
  $id: "ExternalObjectMatch",
  type: "object",
  description: "An external object the application refers to, with the name of its package.",
  properties: {
    fullName: { type: "string" },
    id: { type: "string", description: "External object ID" },
    mangling: { type: "string", description: "External function signature, or an empty string" },
    name: { type: "string" },
    package: { type: "string", description: "Name of the package the object belongs to" },
    type: { type: "string", description: "Object type, for display" },
    typeId: { type: "string", description: "Type identifier, the type reference key" },
  },
  required: ["fullName", "id", "mangling", "name", "package", "type", "typeId"],
} as const;
