/**
 * The objects of the analysis document a Java use becomes: external objects (`fullName` = binary class
 * name + member, `mangling` from the JVM descriptor) and the application's classes and methods that
 * refer to them. Ids are short hashes of what identifies the object, so they stay the same from one
 * analysis to the next (the store diffs analyses by id).
 */
import { createHash } from "node:crypto";
import type { ApplicationObjectInput, ExternalObjectInput } from "../../../store/input-records.ts";
import type { MemberUse } from "./class-file.ts";
import { binaryName, methodMangling } from "./descriptor.ts";

const TYPES = {
  method: { type: "Java Method", typeId: "JV_METHOD" },
  field: { type: "Java Field", typeId: "JV_FIELD" },
  class: { type: "Java Class", typeId: "JV_CLASS" },
} as const;

/**
 * A class seen only in Java sources (no compiled classes): its `type` says the precision, so every
 * consumer (occurrences, objects, MCP, CycloneDX) shows it without a field of its own; `typeId` stays
 * JV_CLASS so filters by type still find it.
 */
export const SOURCE_CLASS_TYPE = "Java Class (source, class level)";

const shortId = (prefix: string, key: string) =>
  `${prefix}${createHash("sha1").update(key).digest("hex").slice(0, 24)}`;

const simpleName = (binary: string) => binary.slice(binary.lastIndexOf(".") + 1);

/** The external object a use designates in one package. */
export function externalObject(packageKey: string, use: MemberUse): ExternalObjectInput {
  const owner = binaryName(use.owner);
  const common = {
    id: shortId("jv:", `${packageKey}\0${use.kind}\0${use.owner}\0${use.name}\0${use.descriptor}`),
    package: packageKey,
    ...TYPES[use.kind],
  };
  if (use.kind === "class") return { ...common, name: simpleName(owner), fullName: owner, mangling: "" };
  return {
    ...common,
    name: use.name,
    fullName: `${owner}.${use.name}`,
    mangling: use.kind === "method" ? methodMangling(use.name, use.descriptor) : "",
  };
}

export function applicationMethod(
  className: string,
  name: string,
  descriptor: string,
): ApplicationObjectInput {
  const owner = binaryName(className);
  return {
    id: shortId("jv-app:", `method\0${className}\0${name}\0${descriptor}`),
    name,
    fullName: `${owner}.${name}`,
    ...TYPES.method,
  };
}

export function applicationClass(className: string): ApplicationObjectInput {
  const binary = binaryName(className);
  return {
    id: shortId("jv-app:", `class\0${className}`),
    name: simpleName(binary),
    fullName: binary,
    ...TYPES.class,
  };
}
